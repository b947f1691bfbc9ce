// A server's settings: what they may hold, how each is stored in its settings hash (one field
// each; lists and maps as JSON of exact integers, multipliers in hundredths), and the one
// reading of that hash. The writer library, the write API and the CLI validate through
// `settingsChanges`; the write scripts, the reader and the calendar read `parseSettings`'s result.
//
// Every settings write moves `epoch` (src/redis/commands/configure-guild-3.lua): a process that
// computed something from settings it cached (a multiplier, the calendar of a timezone) hands the
// epoch to the write script, which refuses to apply when it moved, so a settings change takes
// effect at the very next write on every instance.
import { InvalidParameterError } from '../errors.js'
import { type Curve, CURVES, DEFAULT_CURVE, isCurve, type LevelCurve, MAX_XP } from '../levels/curves.js'
import { SNOWFLAKE_PATTERN } from '../snowflake.js'
import { assertInteger, codePoints, parseMultiplier } from '../validation.js'

const SNOWFLAKE = new RegExp(SNOWFLAKE_PATTERN)

export const SEASON_SCHEDULES = ['none', 'week', 'month', 'quarter'] as const
export type SeasonSchedule = typeof SEASON_SCHEDULES[number]
export const STACKING_MODES = ['highest', 'multiply', 'add'] as const
export type StackingMode = typeof STACKING_MODES[number]
export const ROLE_REWARDS_MODES = ['stack', 'replace'] as const
export type RoleRewardsMode = typeof ROLE_REWARDS_MODES[number]

/** Bounds of the settings, shared by validation, the schemas and the docs. */
export const SETTINGS_LIMITS = {
  seasonRetention: { min: 1, max: 120, default: 12 },
  historyDays: { min: 1, max: 90, default: 30 },
  cooldownSeconds: { min: 0, max: 3600, default: 0 },
  /** A role's or channel's multiplier, in hundredths (0 to 10: 0 means no XP there). */
  ruleMultiplierHundredths: { min: 0, max: 1000 },
  /** A boost's multiplier, in hundredths. */
  boostHundredths: { min: 1, max: 1000 },
  multiplierEntries: 500,
  boosts: 50,
  roleRewards: 100,
  roleRewardLevelMax: 10_000,
  customCurveLevels: 1000,
  nameLength: 100,
  urlLength: 512,
  slug: /^[a-z0-9-]{3,32}$/
} as const

export interface Boost {
  hundredths: number
  /** Unix ms. */
  startsAt: number
  endsAt: number
}

export interface RoleReward {
  level: number
  roleId: string
}

/** A server's settings, as the scripts and the service compute with them. */
export interface GuildSettings {
  curve: Curve | 'custom'
  /** XP needed for level 1, 2, …: set with curve 'custom' (strictly increasing). */
  customCurve: number[] | null
  multiplierHundredths: number
  season: { every: SeasonSchedule, timezone: string }
  seasonRetention: number
  historyDays: number
  cooldownSeconds: number
  /** XP a member may gain per day (the server's timezone); 0 for no cap. */
  dailyXpCap: number
  multipliers: { roles: Record<string, number>, channels: Record<string, number>, stacking: StackingMode }
  boosts: Boost[]
  /** Sorted by level, then role id. */
  roleRewards: RoleReward[]
  roleRewardsMode: RoleRewardsMode
  /** The server's display name and icon. */
  name: string | null
  iconUrl: string | null
  public: { enabled: boolean, slug: string | null }
  /** Moved by every settings write. */
  epoch: number
}

export const DEFAULT_SETTINGS: GuildSettings = Object.freeze({
  curve: DEFAULT_CURVE,
  customCurve: null,
  multiplierHundredths: 100,
  season: { every: 'none', timezone: 'UTC' },
  seasonRetention: SETTINGS_LIMITS.seasonRetention.default,
  historyDays: SETTINGS_LIMITS.historyDays.default,
  cooldownSeconds: SETTINGS_LIMITS.cooldownSeconds.default,
  dailyXpCap: 0,
  multipliers: { roles: {}, channels: {}, stacking: 'highest' },
  boosts: [],
  roleRewards: [],
  roleRewardsMode: 'stack',
  name: null,
  iconUrl: null,
  public: { enabled: false, slug: null },
  epoch: 0
}) as GuildSettings

/** The fields of the settings hash. */
export const SETTINGS_FIELDS = {
  curve: 'curve',
  customCurve: 'custom_curve',
  multiplierHundredths: 'multiplier_hundredths',
  seasonEvery: 'season_every',
  timezone: 'timezone',
  seasonRetention: 'season_retention',
  historyDays: 'history_days',
  cooldownSeconds: 'cooldown_seconds',
  dailyXpCap: 'daily_xp_cap',
  multipliers: 'multipliers',
  boosts: 'boosts',
  roleRewards: 'role_rewards',
  roleRewardsMode: 'role_rewards_mode',
  name: 'name',
  iconUrl: 'icon_url',
  publicEnabled: 'public_enabled',
  publicSlug: 'public_slug',
  epoch: 'epoch'
} as const

function json<T> (text: string | undefined, fallback: T): T {
  if (text === undefined || text === '') return fallback
  try {
    return JSON.parse(text) as T
  } catch {
    return fallback
  }
}

function integer (text: string | undefined, fallback: number): number {
  const value = text === undefined ? NaN : Number(text)
  return Number.isSafeInteger(value) ? value : fallback
}

function oneOf<T extends string> (values: readonly T[], text: string | undefined, fallback: T): T {
  return (values as readonly string[]).includes(text ?? '') ? text as T : fallback
}

/** The settings a settings hash holds (HGETALL's reply; empty for a server never configured). */
export function parseSettings (hash: Record<string, string>): GuildSettings {
  const f = SETTINGS_FIELDS
  const d = DEFAULT_SETTINGS
  const customCurve = json<number[] | null>(hash[f.customCurve], null)
  const stored = hash[f.curve]
  const curve = stored === 'custom' && customCurve !== null ? 'custom' : isCurve(stored) ? stored : d.curve
  const multipliers = json<Partial<GuildSettings['multipliers']>>(hash[f.multipliers], {})
  return {
    curve,
    customCurve,
    multiplierHundredths: integer(hash[f.multiplierHundredths], d.multiplierHundredths),
    season: { every: oneOf(SEASON_SCHEDULES, hash[f.seasonEvery], 'none'), timezone: hash[f.timezone] ?? d.season.timezone },
    seasonRetention: integer(hash[f.seasonRetention], d.seasonRetention),
    historyDays: integer(hash[f.historyDays], d.historyDays),
    cooldownSeconds: integer(hash[f.cooldownSeconds], d.cooldownSeconds),
    dailyXpCap: integer(hash[f.dailyXpCap], d.dailyXpCap),
    multipliers: {
      roles: multipliers.roles ?? {},
      channels: multipliers.channels ?? {},
      stacking: oneOf(STACKING_MODES, multipliers.stacking, 'highest')
    },
    boosts: json<Boost[]>(hash[f.boosts], []),
    roleRewards: json<RoleReward[]>(hash[f.roleRewards], []),
    roleRewardsMode: oneOf(ROLE_REWARDS_MODES, hash[f.roleRewardsMode], 'stack'),
    name: hash[f.name] ?? null,
    iconUrl: hash[f.iconUrl] ?? null,
    public: { enabled: hash[f.publicEnabled] === '1', slug: hash[f.publicSlug] ?? null },
    epoch: integer(hash[f.epoch], 0)
  }
}

/** The curve levels are computed under: the built-in one named, or the server's custom list. */
export function levelCurve (settings: Pick<GuildSettings, 'curve' | 'customCurve'>): LevelCurve {
  return settings.curve === 'custom' && settings.customCurve !== null ? { thresholds: settings.customCurve } : settings.curve === 'custom' ? DEFAULT_CURVE : settings.curve
}

/** A change of settings as the library takes it: each field optional; null clears a name, an icon or a curve list. */
export interface SettingsInput {
  curve?: Curve | 'custom' | string
  customCurve?: readonly number[] | null
  /** 0.01 to 100, at most two decimals; a string such as "1.25" is read exactly. */
  multiplier?: number | string
  season?: { every?: SeasonSchedule | string, timezone?: string }
  seasonRetention?: number
  historyDays?: number
  cooldownSeconds?: number
  dailyXpCap?: number
  multipliers?: { roles?: Record<string, number | string>, channels?: Record<string, number | string>, stacking?: StackingMode | string }
  boosts?: ReadonlyArray<{ multiplier: number | string, startsAt: Date | string, endsAt: Date | string }>
  roleRewards?: ReadonlyArray<{ level: number, roleId: string }>
  roleRewardsMode?: RoleRewardsMode | string
  name?: string | null
  iconUrl?: string | null
  public?: { enabled?: boolean, slug?: string | null }
}

/** An IANA time zone name as the runtime knows it (canonical spelling), or an error naming the field. */
export function assertTimeZone (value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) {
    throw new InvalidParameterError('season.timezone must be an IANA time zone name such as Europe/Paris')
  }
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone
  } catch {
    throw new InvalidParameterError(`season.timezone must be an IANA time zone name such as Europe/Paris (got ${JSON.stringify(value.slice(0, 64))})`)
  }
}

/** A multiplier of a role, a channel or a boost, in hundredths: two decimals at most, within `bounds`. */
function ruleHundredths (name: string, value: unknown, bounds: { min: number, max: number }): number {
  const text = typeof value === 'number' ? String(value) : value
  const match = typeof text === 'string' ? /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(text.trim()) : null
  const hundredths = match === null ? NaN : Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'))
  if (!(hundredths >= bounds.min && hundredths <= bounds.max)) {
    throw new InvalidParameterError(`${name} must be a number from ${bounds.min / 100} to ${bounds.max / 100} with at most two decimals`)
  }
  return hundredths
}

function multiplierMap (name: string, value: unknown): Record<string, number> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidParameterError(`${name} must be an object of ids to multipliers`)
  const entries = Object.entries(value as Record<string, unknown>)
  if (entries.length > SETTINGS_LIMITS.multiplierEntries) throw new InvalidParameterError(`${name} may hold at most ${SETTINGS_LIMITS.multiplierEntries} ids`)
  const out: Record<string, number> = {}
  for (const [id, m] of entries) {
    if (!SNOWFLAKE.test(id)) throw new InvalidParameterError(`${name}: ${JSON.stringify(id.slice(0, 24))} is not a decimal id of 1 to 20 digits without a leading zero`)
    out[id] = ruleHundredths(`${name}.${id}`, m, SETTINGS_LIMITS.ruleMultiplierHundredths)
  }
  return out
}

function time (name: string, value: unknown): number {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : NaN
  if (!Number.isSafeInteger(ms) || ms < 0) throw new InvalidParameterError(`${name} must be an ISO 8601 date-time`)
  return ms
}

/** A display text (a server's name): 1 to SETTINGS_LIMITS.nameLength code points, no control characters. */
export function assertDisplayText (name: string, value: unknown): string {
  if (typeof value !== 'string') throw new InvalidParameterError(`${name} must be a string`)
  const text = value.trim()
  const length = codePoints(text)
  // eslint-disable-next-line no-control-regex
  if (length === 0 || length > SETTINGS_LIMITS.nameLength || /[\u0000-\u001f\u007f]/.test(text)) {
    throw new InvalidParameterError(`${name} must be 1 to ${SETTINGS_LIMITS.nameLength} characters without control characters`)
  }
  return text
}

/** An https URL of at most SETTINGS_LIMITS.urlLength characters (an icon, an avatar). */
export function assertHttpsUrl (name: string, value: unknown): string {
  let url: URL | null = null
  try { url = typeof value === 'string' && value.length <= SETTINGS_LIMITS.urlLength ? new URL(value) : null } catch {}
  if (url === null || url.protocol !== 'https:' || url.username !== '' || url.password !== '') {
    throw new InvalidParameterError(`${name} must be an https URL of at most ${SETTINGS_LIMITS.urlLength} characters`)
  }
  return value as string
}

/** What a change writes: the fields set and cleared, and whether it was computed from the stored settings. */
export interface SettingsChanges {
  set: Record<string, string>
  clear: string[]
  /**
   * The change was checked against or merged with `current` (a partial multipliers map, a custom
   * curve and its list): it may be applied only while the settings are still at `current`'s epoch.
   */
  dependsOnCurrent: boolean
}

/**
 * The settings hash's fields that `input` sets, validated (an error names the first bad field),
 * and those it clears. Nothing is read: a change that depends on the stored settings (a custom
 * curve needs its list) is checked against `current`.
 */
export function settingsChanges (input: SettingsInput, current: GuildSettings = DEFAULT_SETTINGS): SettingsChanges {
  if (input === null || typeof input !== 'object') throw new InvalidParameterError('settings must be an object')
  const f = SETTINGS_FIELDS
  const set: Record<string, string> = {}
  const clear: string[] = []
  if (input.customCurve !== undefined) {
    if (input.customCurve === null) clear.push(f.customCurve)
    else set[f.customCurve] = JSON.stringify(customCurve(input.customCurve))
  }
  if (input.curve !== undefined) {
    if (input.curve !== 'custom' && !isCurve(input.curve)) throw new InvalidParameterError(`xp_curve must be one of ${[...CURVES, 'custom'].join(', ')}`)
    if (input.curve === 'custom' && set[f.customCurve] === undefined && (current.customCurve === null || input.customCurve === null)) {
      throw new InvalidParameterError('xp_curve custom needs custom_curve: the XP needed for level 1, 2, …')
    }
    set[f.curve] = input.curve
  } else if (input.customCurve === null && current.curve === 'custom') {
    throw new InvalidParameterError('custom_curve cannot be cleared while xp_curve is custom')
  }
  if (input.multiplier !== undefined) set[f.multiplierHundredths] = String(parseMultiplier(input.multiplier))
  if (input.season !== undefined) {
    if (input.season === null || typeof input.season !== 'object') throw new InvalidParameterError('season must be an object { every, timezone }')
    if (input.season.every !== undefined) {
      if (!(SEASON_SCHEDULES as readonly unknown[]).includes(input.season.every)) throw new InvalidParameterError(`season.every must be one of ${SEASON_SCHEDULES.join(', ')}`)
      set[f.seasonEvery] = input.season.every
    }
    if (input.season.timezone !== undefined) set[f.timezone] = assertTimeZone(input.season.timezone)
  }
  const limited = (name: string, field: string, value: number | undefined, bounds: { min: number, max: number }): void => {
    if (value !== undefined) set[field] = String(assertInteger(name, value, bounds.min, bounds.max))
  }
  limited('season_retention', f.seasonRetention, input.seasonRetention, SETTINGS_LIMITS.seasonRetention)
  limited('history_days', f.historyDays, input.historyDays, SETTINGS_LIMITS.historyDays)
  limited('cooldown_seconds', f.cooldownSeconds, input.cooldownSeconds, SETTINGS_LIMITS.cooldownSeconds)
  limited('daily_xp_cap', f.dailyXpCap, input.dailyXpCap, { min: 0, max: MAX_XP })
  if (input.multipliers !== undefined) {
    const m = input.multipliers
    if (m === null || typeof m !== 'object') throw new InvalidParameterError('multipliers must be an object { roles, channels, stacking }')
    if (m.stacking !== undefined && !(STACKING_MODES as readonly unknown[]).includes(m.stacking)) {
      throw new InvalidParameterError(`multipliers.stacking must be one of ${STACKING_MODES.join(', ')}`)
    }
    set[f.multipliers] = JSON.stringify({
      roles: m.roles === undefined ? current.multipliers.roles : multiplierMap('multipliers.roles', m.roles),
      channels: m.channels === undefined ? current.multipliers.channels : multiplierMap('multipliers.channels', m.channels),
      stacking: m.stacking ?? current.multipliers.stacking
    })
  }
  if (input.boosts !== undefined) {
    if (!Array.isArray(input.boosts) || input.boosts.length > SETTINGS_LIMITS.boosts) throw new InvalidParameterError(`boosts must be a list of at most ${SETTINGS_LIMITS.boosts}`)
    set[f.boosts] = JSON.stringify(input.boosts.map((b, i): Boost => {
      const boost = { hundredths: ruleHundredths(`boosts[${i}].multiplier`, b?.multiplier, SETTINGS_LIMITS.boostHundredths), startsAt: time(`boosts[${i}].starts_at`, b?.startsAt), endsAt: time(`boosts[${i}].ends_at`, b?.endsAt) }
      if (boost.endsAt <= boost.startsAt) throw new InvalidParameterError(`boosts[${i}]: ends_at must be after starts_at`)
      return boost
    }).sort((a, b) => a.startsAt - b.startsAt))
  }
  if (input.roleRewards !== undefined) {
    if (!Array.isArray(input.roleRewards) || input.roleRewards.length > SETTINGS_LIMITS.roleRewards) throw new InvalidParameterError(`role_rewards must be a list of at most ${SETTINGS_LIMITS.roleRewards}`)
    const seen = new Set<string>()
    set[f.roleRewards] = JSON.stringify(input.roleRewards.map((r, i): RoleReward => {
      const level = assertInteger(`role_rewards[${i}].level`, r?.level, 1, SETTINGS_LIMITS.roleRewardLevelMax)
      if (typeof r?.roleId !== 'string' || !SNOWFLAKE.test(r.roleId)) throw new InvalidParameterError(`role_rewards[${i}].role_id must be a decimal id of 1 to 20 digits without a leading zero`)
      if (seen.has(r.roleId)) throw new InvalidParameterError(`role_rewards[${i}]: role ${r.roleId} is given twice`)
      seen.add(r.roleId)
      return { level, roleId: r.roleId }
    }).sort((a, b) => a.level - b.level || (a.roleId < b.roleId ? -1 : 1)))
  }
  if (input.roleRewardsMode !== undefined) {
    if (!(ROLE_REWARDS_MODES as readonly unknown[]).includes(input.roleRewardsMode)) throw new InvalidParameterError(`role_rewards_mode must be one of ${ROLE_REWARDS_MODES.join(', ')}`)
    set[f.roleRewardsMode] = input.roleRewardsMode
  }
  if (input.name !== undefined) {
    if (input.name === null) clear.push(f.name)
    else set[f.name] = assertDisplayText('name', input.name)
  }
  if (input.iconUrl !== undefined) {
    if (input.iconUrl === null) clear.push(f.iconUrl)
    else set[f.iconUrl] = assertHttpsUrl('icon_url', input.iconUrl)
  }
  if (input.public !== undefined) {
    const p = input.public
    if (p === null || typeof p !== 'object') throw new InvalidParameterError('public must be an object { enabled, slug }')
    if (p.enabled !== undefined) {
      if (typeof p.enabled !== 'boolean') throw new InvalidParameterError('public.enabled must be true or false')
      set[f.publicEnabled] = p.enabled ? '1' : '0'
    }
    if (p.slug !== undefined) {
      if (p.slug === null) clear.push(f.publicSlug)
      else if (typeof p.slug !== 'string' || !SETTINGS_LIMITS.slug.test(p.slug)) throw new InvalidParameterError('public.slug must be 3 to 32 characters of a-z 0-9 -')
      else set[f.publicSlug] = p.slug
    }
    const enabled = set[f.publicEnabled] === undefined ? current.public.enabled : set[f.publicEnabled] === '1'
    const slug = clear.includes(f.publicSlug) ? null : set[f.publicSlug] ?? current.public.slug
    if (enabled && slug === null) throw new InvalidParameterError('public.enabled needs public.slug: the address of the board, /p/{slug}')
  }
  if (Object.keys(set).length === 0 && clear.length === 0) throw new InvalidParameterError('give at least one setting to change')
  const partialMap = input.multipliers !== undefined && (input.multipliers.roles === undefined || input.multipliers.channels === undefined || input.multipliers.stacking === undefined)
  const curveChecked = input.curve === 'custom' || input.customCurve === null
  return { set, clear, dependsOnCurrent: partialMap || curveChecked }
}

/** A custom curve: the XP needed for level 1, 2, …, strictly increasing, from 1 to MAX_XP. */
function customCurve (value: unknown): number[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > SETTINGS_LIMITS.customCurveLevels) {
    throw new InvalidParameterError(`custom_curve must list the XP needed for level 1, 2, … (1 to ${SETTINGS_LIMITS.customCurveLevels} levels)`)
  }
  let previous = 0
  return value.map((xp: unknown, i) => {
    const needed = assertInteger(`custom_curve[${i}]`, xp, 1, MAX_XP)
    if (needed <= previous) throw new InvalidParameterError(`custom_curve must be strictly increasing: custom_curve[${i}] is ${needed}, after ${previous}`)
    previous = needed
    return needed
  })
}
