// A server's settings over the write API (scope `write`): the whole object, and a change of any
// of its fields (the others kept), validated by the library's own rules (src/settings/settings.ts)
// and applied at once on every instance (the settings' epoch).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Static } from 'typebox'
import { GuildParams } from '../../schemas/common.js'
import { responses, WriteRequestHeaders } from '../../schemas/admin.js'
import type { Settings, SettingsBody } from '../../schemas/settings.js'
import { SettingsBody as SettingsBodySchema } from '../../schemas/settings.js'
import type { GuildSettings, SettingsInput } from '../../settings/settings.js'
import { formatMultiplier } from '../../validation.js'
import { guildOf } from '../../pipeline/access.js'

const iso = (ms: number): string => new Date(ms).toISOString()
const fromHundredths = (map: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(map).map(([id, h]) => [id, formatMultiplier(h)]))

/** The settings as the API answers them. */
export function settingsBody (s: GuildSettings): Static<typeof Settings> {
  return {
    xp_curve: s.curve,
    xp_multiplier: formatMultiplier(s.multiplierHundredths),
    custom_curve: s.customCurve,
    season: { every: s.season.every, timezone: s.season.timezone },
    season_retention: s.seasonRetention,
    history_days: s.historyDays,
    cooldown_seconds: s.cooldownSeconds,
    daily_xp_cap: s.dailyXpCap,
    multipliers: { roles: fromHundredths(s.multipliers.roles), channels: fromHundredths(s.multipliers.channels), stacking: s.multipliers.stacking },
    boosts: s.boosts.map((b) => ({ multiplier: formatMultiplier(b.hundredths), starts_at: iso(b.startsAt), ends_at: iso(b.endsAt) })),
    role_rewards: s.roleRewards.map((r) => ({ level: r.level, role_id: r.roleId })),
    role_rewards_mode: s.roleRewardsMode,
    name: s.name,
    icon_url: s.iconUrl,
    public: { enabled: s.public.enabled, slug: s.public.slug }
  }
}

/** A PUT's body as the library's change. */
export function settingsInput (body: Static<typeof SettingsBody>): SettingsInput {
  return {
    curve: body.xp_curve,
    multiplier: body.xp_multiplier,
    customCurve: body.custom_curve,
    season: body.season,
    seasonRetention: body.season_retention,
    historyDays: body.history_days,
    cooldownSeconds: body.cooldown_seconds,
    dailyXpCap: body.daily_xp_cap,
    multipliers: body.multipliers,
    boosts: body.boosts?.map((b) => ({ multiplier: b.multiplier, startsAt: b.starts_at, endsAt: b.ends_at })),
    roleRewards: body.role_rewards?.map((r) => ({ level: r.level, roleId: r.role_id })),
    roleRewardsMode: body.role_rewards_mode,
    name: body.name,
    iconUrl: body.icon_url,
    public: body.public
  }
}

const settingsRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { writer } = fastify

  fastify.get('/servers/:guild_id/settings', {
    schema: {
      operationId: 'getSettings',
      tags: ['settings'],
      summary: "A server's settings: curve and multiplier, seasons, history, rules, profile, public board",
      params: GuildParams,
      response: responses.settings
    },
    config: { access: { kind: 'token', scope: 'write', server: guildOf } }
  }, async (request) => settingsBody(await writer.settings.read(request.params.guild_id)))

  fastify.put('/servers/:guild_id/settings', {
    schema: {
      operationId: 'setSettings',
      tags: ['settings'],
      summary: "Change some of a server's settings, keeping the others (the next read and write follow them)",
      params: GuildParams,
      headers: WriteRequestHeaders,
      body: SettingsBodySchema,
      response: responses.settings
    },
    config: { access: { kind: 'token', scope: 'write', server: guildOf, idempotent: true } }
  }, async (request) => settingsBody(await writer.configureGuild(request.params.guild_id, settingsInput(request.body))))

  fastify.post('/servers/:guild_id/settings/preview', {
    schema: {
      operationId: 'previewSettings',
      tags: ['settings'],
      summary: 'What a change of settings would do (members whose level moves, role rewards gained and lost), changing nothing',
      params: GuildParams,
      body: SettingsBodySchema,
      response: responses.settingsPreview
    },
    config: { access: { kind: 'token', scope: 'write', server: guildOf } }
  }, async (request) => {
    const preview = await writer.previewSettings(request.params.guild_id, settingsInput(request.body))
    return {
      members: preview.members,
      level_changes: preview.levelChanges,
      roles: preview.roles.map((r) => ({ role_id: r.roleId, level: r.level, gained: r.gained, lost: r.lost }))
    }
  })
}

export default settingsRoutes
