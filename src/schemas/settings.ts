// A server's settings over the write API (GET and PUT /admin/v1/servers/{g}/settings): the
// whole object as the service answers it, and the change a PUT takes (every field optional; the
// others are kept). Bounds come from src/settings/settings.ts, which the library validates with.
import { Type } from 'typebox'
import { named } from './common.js'
import { CURVES, MAX_XP } from '../levels/curves.js'
import { ROLE_REWARDS_MODES, SEASON_SCHEDULES, SETTINGS_LIMITS, STACKING_MODES } from '../settings/settings.js'
import { SNOWFLAKE_PATTERN } from '../snowflake.js'

const L = SETTINGS_LIMITS
const Id = Type.String({ pattern: SNOWFLAKE_PATTERN, description: 'A decimal id (a string: JSON numbers past 2^53 are not exact)' })
const Iso = Type.String({ format: 'date-time', description: 'ISO 8601' })
const Multiplier = (max: number) => Type.Number({ minimum: 0, maximum: max, description: 'At most two decimals' })
const IdMultipliers = Type.Record(Type.String({ pattern: SNOWFLAKE_PATTERN }), Multiplier(10), {
  maxProperties: L.multiplierEntries, additionalProperties: false, description: 'id -> multiplier (0 to 10; 0: no XP there)'
})
const Curve = Type.Enum([...CURVES, 'custom'], { type: 'string', description: 'How XP maps to levels; `custom` follows custom_curve' })

const Season = Type.Object({
  every: Type.Enum([...SEASON_SCHEDULES], { type: 'string', description: 'When a season ends by itself: never (`none`), or at 00:00 in `timezone` on Monday, the 1st of a month, or of January, April, July and October' }),
  timezone: Type.String({ minLength: 1, maxLength: 64, description: "IANA time zone name (default UTC): the seasons' and the history's days are days there" })
}, { additionalProperties: false })

const Multipliers = Type.Object({
  roles: IdMultipliers,
  channels: IdMultipliers,
  stacking: Type.Enum([...STACKING_MODES], { type: 'string', description: "How a member's role and channel multipliers combine: the highest, their product, or their sum" })
}, { additionalProperties: false })

const Boost = Type.Object({
  multiplier: Type.Number({ minimum: L.boostHundredths.min / 100, maximum: L.boostHundredths.max / 100, description: 'At most two decimals' }),
  starts_at: Iso,
  ends_at: Iso
}, { additionalProperties: false })

const RoleReward = Type.Object({
  level: Type.Integer({ minimum: 1, maximum: L.roleRewardLevelMax }),
  role_id: Id
}, { additionalProperties: false })

const Public = Type.Object({
  enabled: Type.Boolean(),
  slug: Type.Union([Type.String({ pattern: L.slug.source }), Type.Null()], { description: '3 to 32 of a-z 0-9 -, unique in the installation: the public board is at /p/{slug}' })
}, { additionalProperties: false })

const fields = {
  xp_curve: Curve,
  xp_multiplier: Type.Number({ minimum: 0.01, maximum: 100, description: 'At most two decimals' }),
  custom_curve: Type.Union([Type.Array(Type.Integer({ minimum: 1, maximum: MAX_XP }), { minItems: 1, maxItems: L.customCurveLevels, description: 'XP needed for level 1, 2, …, strictly increasing' }), Type.Null()]),
  season: Season,
  season_retention: Type.Integer({ minimum: L.seasonRetention.min, maximum: L.seasonRetention.max, description: 'Ended seasons kept' }),
  history_days: Type.Integer({ minimum: L.historyDays.min, maximum: L.historyDays.max, description: 'Closed days of history kept' }),
  cooldown_seconds: Type.Integer({ minimum: L.cooldownSeconds.min, maximum: L.cooldownSeconds.max, description: "An award within this many seconds of the member's last applied one is not applied" }),
  daily_xp_cap: Type.Integer({ minimum: 0, maximum: MAX_XP, description: 'XP a member may gain per day (0: no cap)' }),
  multipliers: Multipliers,
  boosts: Type.Array(Boost, { maxItems: L.boosts, description: 'Server-wide multipliers while they run' }),
  role_rewards: Type.Array(RoleReward, { maxItems: L.roleRewards }),
  role_rewards_mode: Type.Enum([...ROLE_REWARDS_MODES], { type: 'string', description: '`stack`: a member keeps every reward reached; `replace`: only the highest' }),
  name: Type.Union([Type.String({ minLength: 1, maxLength: L.nameLength }), Type.Null()], { description: "The server's display name" }),
  icon_url: Type.Union([Type.String({ pattern: '^https://', maxLength: L.urlLength }), Type.Null()], { description: "The server's icon (https)" }),
  public: Public
}

export const Settings = named('Settings', Type.Object(fields, { description: "A server's settings" }))

const { Optional } = Type

export const SettingsBody = Type.Object({
  xp_curve: Optional(fields.xp_curve),
  xp_multiplier: Optional(fields.xp_multiplier),
  custom_curve: Optional(fields.custom_curve),
  season: Optional(Type.Partial(Season, { additionalProperties: false })),
  season_retention: Optional(fields.season_retention),
  history_days: Optional(fields.history_days),
  cooldown_seconds: Optional(fields.cooldown_seconds),
  daily_xp_cap: Optional(fields.daily_xp_cap),
  multipliers: Optional(Type.Partial(Multipliers, { additionalProperties: false })),
  boosts: Optional(fields.boosts),
  role_rewards: Optional(fields.role_rewards),
  role_rewards_mode: Optional(fields.role_rewards_mode),
  name: Optional(fields.name),
  icon_url: Optional(fields.icon_url),
  public: Optional(Type.Partial(Public, { additionalProperties: false }))
}, { additionalProperties: false, minProperties: 1, description: 'The settings to change; the others are kept' })

export const SettingsPreview = named('SettingsPreview', Type.Object({
  members: Type.Integer({ minimum: 0, description: 'Members on the board' }),
  level_changes: Type.Integer({ minimum: 0, description: 'Members whose level the change would move, up or down' }),
  roles: Type.Array(Type.Object({
    role_id: Type.String(),
    level: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'Its level in the new role rewards; null when they would no longer give it' }),
    gained: Type.Integer({ minimum: 0, description: 'Members who would be given the role' }),
    lost: Type.Integer({ minimum: 0, description: 'Members it would be taken from' })
  }), { description: 'Every role of the current and the new role rewards, the new ones first' })
}, { description: 'What the settings would change, with nothing changed: levels under the new curve, and roles by the new rewards for members holding those of their current level' }))
