// The write side the bot uses: every change to a server's data is one Lua script, so the
// aggregates stay exact under any interleaving of writers.
import type { RedisClient } from '../redis/client.js'
import { boardMember, KeyBuilder } from '../redis/keys.js'
import { defineCommands } from '../redis/scripts.js'
import { AwardStatus, CALENDAR_REFUSAL, DailyClaimStatus, MemberWriteStatus } from '../redis/script-status.js'
import * as scripts from '../redis/write-scripts.js'
import { scriptArgs } from '../redis/write-scripts.js'
import { RedisClock } from '../redis/clock.js'
import { DEFAULT_OPERATION_WINDOW_MS, type OperationKeys, operationKeys, randomOperationId } from './operations.js'
import { DEFAULT_CURVE, type LevelCurve, levelForXp, MAX_XP } from '../levels/curves.js'
import { assertDisplayText, type GuildSettings, levelCurve, type SettingsInput } from '../settings/settings.js'
import { type GuildWriteSettings, SettingsCache, SettingsStore } from '../settings/settings-store.js'
import { previewSettings, type SettingsPreview } from '../settings/settings-preview.js'
import { type AwardPlace, awardGain, boostHundredths, stackedMultiplier } from '../rules/gain.js'
import type { RoleChanges } from '../rules/role-rewards.js'
import type { ServerCalendar } from '../calendar/server-calendar.js'
import { type CalendarRefusal, calendarRefusal, CalendarWrites } from './calendar-writes.js'
import { type Season, SeasonEnds } from '../seasons/season-ends.js'
import { randomInt } from 'node:crypto'
import { DailyClaimRefusedError, InvalidParameterError, WriteOutcomeUnknownError, XpLimitError } from '../errors.js'
import { redisUnavailability } from '../redis/errors.js'
import { withDeadline } from '../redis/deadline.js'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  assertInteger, assertSnowflake, assertUsername, assertXp, MAX_AWARD
} from '../validation.js'
import { hasProfile, profileArgs, type ProfileInput } from './profiles.js'
import { type VisibilityChange, VisibilityChanges, type VisibilityResult, visibilityResults } from './visibility.js'

/** daily-claim's reply: the calendar's refusals come behind a 0 ({ 0, code, value }). */
function claimRefusal (reply: ReadonlyArray<number | undefined>): CalendarRefusal | null {
  return reply[0] === CALENDAR_REFUSAL ? calendarRefusal(reply.slice(1)) : null
}

/** A bulk call's reply: the number of members set, or the calendar's refusal. */
function bulkRefusal (reply: number | [number, number]): CalendarRefusal | null {
  return typeof reply === 'number' ? null : calendarRefusal(reply)
}

/** How far ahead of the service's clock a daily claim may be dated. */
export const MAX_CLAIM_AHEAD_MS = 5 * 60 * 1000

export interface MemberRef {
  guildId: string
  userId: string
  /**
   * Names this operation so that it is applied once however often it is sent: a resend by the
   * client after a dropped connection, or a retry of yours with the same id (the Discord message
   * id that earned the XP, say), returns the first call's result and changes nothing. One is
   * made when you give none. 1 to 64 characters of A-Z a-z 0-9 . _ : -; remembered 5 to 10
   * minutes (WriterOptions.operationWindowMs).
   */
  opId?: string
}

export interface WriterOptions {
  /** How long operation ids are remembered: at least this, at most twice this (default 5 minutes). */
  operationWindowMs?: number
  /**
   * This writer's estimate of Redis's clock, which names the current week's and month's boards
   * an award counts into (Redis's own clock decides; a wrong estimate costs one more round trip,
   * once). Default: the local clock, corrected by what the scripts report.
   */
  clock?: RedisClock
  /**
   * How long a write whose outcome is unknown (the connection dropped or timed out before Redis
   * answered, or Redis refused "not now") is sent again with the same operation id, until Redis
   * answers; past it the call rejects with WriteOutcomeUnknownError, which carries the operation
   * id to retry with (default 10 s).
   */
  settleTimeoutMs?: number
}

/** Default WriterOptions.settleTimeoutMs. */
export const DEFAULT_SETTLE_TIMEOUT_MS = 10_000
/** First pause before a write is sent again; it doubles up to SETTLE_MAX_PAUSE_MS, with jitter. */
const SETTLE_FIRST_PAUSE_MS = 25
const SETTLE_MAX_PAUSE_MS = 1000

/** An award's XP: a whole number, or a range the writer draws from (inclusive: MEE6's 15 to 25). */
export type AwardXp = number | { min: number, max: number }

/** Why an award was not applied, or (daily_cap) applied only up to the cap. */
export type AwardReason = 'cooldown' | 'daily_cap' | 'xp_limit'

/** The most roles an award may name (Discord's limit on a server's roles). */
export const MAX_AWARD_ROLES = 250

/** Where an award was earned, for the server's multipliers: the member's roles and the channel. */
export interface AwardRules {
  roleIds?: readonly string[]
  channelId?: string
}

export interface AwardResult {
  /** XP actually added: floor(award × the multipliers), up to the daily cap; 0 when not applied. */
  gained: number
  /** The member's XP after the award (as it stands, when the award was not applied). */
  xp: number
  /** The level after the award, by the server's curve. */
  level: number
  leveledUp: boolean
  /** false when the rules refused the award: nothing of it was applied (see `reason`). */
  applied: boolean
  /** Why it was not applied; with `applied` true, daily_cap says only the part under the cap was. */
  reason?: AwardReason
  /** Set when the level crossed a role reward's threshold (either way): the roles the bot should add and take away. */
  roles?: RoleChanges
}

/** One award of a batch (awardMany), with the member's names to record (absent: kept). */
export interface BatchAward extends AwardRules, ProfileInput {
  userId: string
  xp: AwardXp
  username?: string
  opId?: string
}

/** What one award of a batch did. */
export interface BatchAwardResult extends AwardResult {
  userId: string
  /** Set when the award would pass the XP limit (also as reason): nothing of it was applied. */
  refused?: 'xp_limit'
  /**
   * Set when the award's own opId was applied by an earlier call: this is that call's result
   * (level-up included), and nothing was applied now. Announce a level-up only if that earlier
   * answer never reached you (a timeout, say).
   */
  replayed?: true
}

/** What setMemberXp did. */
export interface SetXpResult {
  previousXp: number
  xp: number
  /** The level after it, by the server's curve. */
  level: number
  /** Set when the level crossed a role reward's threshold (either way). */
  roles?: RoleChanges
}

/** What awardXp's award did, and the gain it was computed to add (an XpLimitError's message names it). */
interface AwardDone {
  result: AwardResult & { replayed?: true }
  gain: number
}

/** An award awardXp queued for its server's next script call (#sendAwards). */
interface PendingAward {
  /** Its PER_AWARD script arguments (award-batch-21.lua); the gain, at 1, is filled in by each try. */
  args: [member: string, gain: number, username: string, opId: string, displayName: string, avatarUrl: string]
  award: CheckedAward
  opId: string
  resolve: (done: AwardDone) => void
  reject: (err: unknown) => void
}

/** Awards per awardMany call. */
export const MAX_BATCH_AWARDS = 1000
/** Awards per script call of awardMany: about a millisecond of Redis's time each. */
const AWARD_BATCH = 250
/** Script arguments per award (award-batch-21.lua). */
const PER_AWARD = 6

export interface DailyClaim {
  streak: number
  claimedAt: Date
}

/** A change of a server's settings (src/settings/settings.ts). */
export type GuildSettingsInput = SettingsInput

/**
 * Members per bulk script call: big enough to amortise the call (a handful of commands whatever
 * its size; larger batches were no faster), small enough to keep Redis responsive (each call
 * holds it for a few milliseconds) and every sum in the script exact. At most 3999: the script unpacks two
 * values per member into one command.
 */
export const BULK_BATCH = 500
/** Bulk calls in flight at once: enough that Redis never waits for the next batch. */
export const BULK_IN_FLIGHT = 4

/** One member of a bulk write; its display name and avatar URL are recorded when given (null clears one), kept otherwise. */
export interface BulkMember extends ProfileInput {
  userId: string
  xp: number
  /** Recorded when given; an existing name is kept otherwise. */
  username?: string
  /** The daily record, set outright when given (both fields); kept otherwise. */
  daily?: { streak: number, lastClaim: Date }
}

/** Users per visibility script call: about a millisecond of Redis's time per 200 (every board touched). */
const VISIBILITY_BATCH = 1000

/**
 * Bulk members checked, merged and encoded for the script: parallel columns rather than an
 * object per member, and a member given twice holds one place.
 */
class BulkColumns {
  readonly userIds: string[] = []
  readonly xps: string[] = []
  /** The username, or undefined to keep the stored one. */
  readonly usernames: Array<string | undefined> = []
  /** "<streak>:<claim>:", or undefined to keep the stored daily record. */
  readonly dailies: Array<string | undefined> = []
  /** The display name and avatar URL as the script takes them, or undefined to keep both. */
  readonly profiles: Array<{ displayName: string, avatarUrl: string } | undefined> = []
  readonly #index = new Map<string, number>()

  /** Checks `m` and adds it; a member seen before is merged into its first place, as if applied after it. */
  add (m: BulkMember): void {
    if (typeof m !== 'object' || m === null) throw new InvalidParameterError('each member must be an object')
    const userId = assertSnowflake('user_id', m.userId)
    const xp = String(assertXp(m.xp))
    const username = m.username === undefined ? undefined : assertUsername(m.username)
    let daily: string | undefined
    if (m.daily !== undefined) {
      const streak = assertInteger('streak', m.daily?.streak, 1, 1_000_000)
      const ms = m.daily?.lastClaim instanceof Date ? m.daily.lastClaim.getTime() : NaN
      if (!Number.isSafeInteger(ms) || ms < 0) throw new InvalidParameterError('lastClaim must be a valid date after 1970')
      daily = `${streak}:${ms}:`
    }
    const profile = hasProfile(m) ? profileArgs(m) : undefined
    const at = this.#index.get(userId)
    if (at === undefined) {
      this.#index.set(userId, this.userIds.length)
      this.userIds.push(userId)
      this.xps.push(xp)
      this.usernames.push(username)
      this.dailies.push(daily)
      this.profiles.push(profile)
    } else {
      this.xps[at] = xp
      if (username !== undefined) this.usernames[at] = username
      if (daily !== undefined) this.dailies[at] = daily
      if (profile !== undefined) {
        const before = this.profiles[at]
        this.profiles[at] = before === undefined
          ? profile
          : { displayName: profile.displayName === '' ? before.displayName : profile.displayName, avatarUrl: profile.avatarUrl === '' ? before.avatarUrl : profile.avatarUrl }
      }
    }
  }

  get length (): number {
    return this.userIds.length
  }

  /** The script's arguments for members `from` to `to` - 1 (see bulk-set-members-8.lua). */
  args (from: number, to: number): string[] {
    const n = to - from
    // Group 0: username and daily record given; 1: username only; 2: daily record only; 3: neither.
    const groups = new Uint8Array(n)
    const counts = [0, 0, 0, 0]
    for (let i = 0; i < n; i++) {
      const g = (this.usernames[from + i] === undefined ? 2 : 0) + (this.dailies[from + i] === undefined ? 1 : 0)
      groups[i] = g
      counts[g] = (counts[g] as number) + 1
    }
    const [whole = 0, named = 0, dated = 0] = counts
    const profiled: string[] = []
    for (let m = from; m < to; m++) {
      const profile = this.profiles[m]
      if (profile !== undefined) profiled.push(boardMember(this.userIds[m] as string), profile.displayName, profile.avatarUrl)
    }
    const args = new Array<string>(5 + 2 * n + whole + named + dated)
    args[0] = String(whole)
    args[1] = String(named)
    args[2] = String(dated)
    args[3] = String(n - whole - named - dated)
    args[4] = String(profiled.length / 3)
    const next = [0, whole, whole + named, whole + named + dated] // the next place in each group
    for (let i = 0; i < n; i++) {
      const g = groups[i] as number
      const at = next[g] as number
      next[g] = at + 1
      const m = from + i
      args[5 + at] = boardMember(this.userIds[m] as string)
      args[5 + n + at] = this.xps[m] as string
      if (g === 0) args[5 + 2 * n + at] = (this.dailies[m] as string) + (this.usernames[m] as string)
      else if (g === 1) args[5 + 2 * n + at] = '::' + (this.usernames[m] as string)
      else if (g === 2) args[5 + 2 * n + at] = this.dailies[m] as string
    }
    return args.concat(profiled)
  }
}

/** An award as checked: its XP (a range drawn) and where it was earned. */
interface CheckedAward {
  xp: number
  place: AwardPlace
}

/** Checks an award's XP, roles and channel (an error names the bad one); a range is drawn now, once. */
function checkAward (a: AwardRules & { xp: AwardXp }): CheckedAward {
  let xp: number
  if (typeof a.xp === 'object' && a.xp !== null) {
    const range = a.xp as { min?: unknown, max?: unknown }
    const min = assertInteger('xp.min', range.min, 1, MAX_AWARD)
    const max = assertInteger('xp.max', range.max, min, MAX_AWARD)
    xp = min === max ? min : randomInt(min, max + 1)
  } else {
    xp = assertInteger('xp', a.xp, 1, MAX_AWARD)
  }
  if (a.roleIds !== undefined && (!Array.isArray(a.roleIds) || a.roleIds.length > MAX_AWARD_ROLES)) {
    throw new InvalidParameterError(`role_ids must be a list of at most ${MAX_AWARD_ROLES} role ids`)
  }
  const roleIds = a.roleIds?.map((id, i) => assertSnowflake(`role_ids[${i}]`, id))
  const channelId = a.channelId === undefined ? undefined : assertSnowflake('channel_id', a.channelId)
  return { xp, place: { roleIds, channelId } }
}

/** The gain of an award under `settings`, with the boosts that run throughout the calendar's window. */
function gainOf (settings: GuildSettings, calendar: ServerCalendar, award: CheckedAward): number {
  return awardGain(award.xp, settings.multiplierHundredths, stackedMultiplier(settings.multipliers, award.place), boostHundredths(calendar.boosts))
}

/** The reason of each status that has one (src/redis/script-status.ts). */
const REASONS: Readonly<Record<number, AwardReason>> = {
  [AwardStatus.capped]: 'daily_cap',
  [AwardStatus.overXpLimit]: 'xp_limit',
  [AwardStatus.cooldown]: 'cooldown',
  [AwardStatus.dailyCap]: 'daily_cap'
}

/** `roles` when either list names a role (comma-separated ids, as the scripts give them). */
function roleChangesOf (add: string, remove: string): { roles?: RoleChanges } {
  if (add === '' && remove === '') return {}
  return { roles: { add: add === '' ? [] : add.split(','), remove: remove === '' ? [] : remove.split(',') } }
}

/**
 * An award's result from its status, XP and gain as a script replies (src/redis/script-status.ts;
 * a batch remembered before replays had a value of their own marks them in the status), with its
 * levels under `curve`: the curve of the settings whose epoch the script checked.
 */
function awardResult (status: number, xp: number, gain: number, curve: LevelCurve, roles: { roles?: RoleChanges } = {}): AwardResult & { replayed?: true } {
  const applied = status === AwardStatus.awarded || status === AwardStatus.capped || status === AwardStatus.replayedAwarded
  const gained = applied ? gain : 0
  const level = levelForXp(curve, xp)
  const reason = REASONS[status === AwardStatus.replayedOverXpLimit ? AwardStatus.overXpLimit : status]
  return {
    gained,
    xp,
    level,
    leveledUp: gained > 0 && level > levelForXp(curve, xp - gained),
    applied,
    ...(reason === undefined ? {} : { reason }),
    ...roles,
    ...(status === AwardStatus.replayedAwarded || status === AwardStatus.replayedOverXpLimit ? { replayed: true as const } : {})
  }
}

/**
 * The results of `n` awards from a batch's reply (award-batch-21.lua: 4 values an award, then 3
 * for each award with roles), or from one remembered before (3 values an award).
 */
function batchResults (reply: ReadonlyArray<number | string>, n: number, curve: LevelCurve): Array<AwardResult & { replayed?: true }> {
  const stride = reply.length === 3 * n ? 3 : 4
  const roles = new Map<number, { roles?: RoleChanges }>()
  for (let at = stride * n; at + 2 < reply.length; at += 3) roles.set(Number(reply[at]) - 1, roleChangesOf(String(reply[at + 1]), String(reply[at + 2])))
  return Array.from({ length: n }, (_, i) => {
    const at = stride * i
    const result = awardResult(Number(reply[at]), Number(reply[at + 1]), Number(reply[at + 2]), curve, roles.get(i))
    return stride === 4 && reply[at + 3] === 1 ? { ...result, replayed: true as const } : result
  })
}

export class LeaderboardWriter {
  readonly redis: RedisClient
  readonly keys: KeyBuilder
  /** The servers' settings in Redis. */
  readonly settings: SettingsStore
  /** The servers' seasons: their ends, by hand or by schedule. */
  readonly seasons: SeasonEnds

  readonly operationWindowMs: number
  readonly settleTimeoutMs: number
  /** Redis's clock as the write scripts last reported it, to name the current period boards. */
  readonly #clock: RedisClock
  /** The settings (and current season) each write computes with, as of their epoch. */
  readonly #settingsCache: SettingsCache
  readonly #calendar: CalendarWrites
  /** awardXp's awards not sent yet, by server: sent together at the end of this turn of the event loop. */
  readonly #pendingAwards = new Map<string, PendingAward[]>()

  constructor (redis: RedisClient, keys: KeyBuilder = new KeyBuilder(), options: WriterOptions = {}) {
    defineCommands(redis)
    this.redis = redis
    this.keys = keys
    this.settings = new SettingsStore(redis, keys)
    this.#clock = options.clock ?? new RedisClock()
    this.#settingsCache = new SettingsCache(this.settings)
    this.seasons = new SeasonEnds(redis, keys, this.#settingsCache, this.#clock)
    this.#calendar = new CalendarWrites({
      redis,
      keys,
      settings: this.#settingsCache,
      clock: this.#clock,
      endDueSeason: async (guildId, settings, nowMs) => await this.seasons.endIfDue(guildId, settings, nowMs)
    })
    this.operationWindowMs = assertInteger('operationWindowMs', options.operationWindowMs ?? DEFAULT_OPERATION_WINDOW_MS, 1000, 24 * 3600 * 1000)
    this.settleTimeoutMs = assertInteger('settleTimeoutMs', options.settleTimeoutMs ?? DEFAULT_SETTLE_TIMEOUT_MS, 1, 3600 * 1000)
  }

  /**
   * Runs `send` (one write, named by `opId` so that a resend is applied once) until Redis answers:
   * when a try fails without an answer (a dropped connection aborts an auto-pipeline's commands, a
   * timeout, Redis refusing "not now"), the same operation is sent again after a pause, until
   * settleTimeoutMs has passed since the call; then WriteOutcomeUnknownError. Any other error (a
   * refusal by the rules, a bug) is the call's answer.
   */
  async #settle<T> (operation: string, opId: string | undefined, send: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.settleTimeoutMs
    for (let pause = SETTLE_FIRST_PAUSE_MS; ; pause = Math.min(2 * pause, SETTLE_MAX_PAUSE_MS)) {
      let failure: unknown
      try {
        return await withDeadline(send(), Math.max(1, deadline - Date.now()))
      } catch (err) {
        if (redisUnavailability(err, this.redis) === null) throw err
        failure = err
      }
      const left = deadline - Date.now()
      if (left <= 0) throw new WriteOutcomeUnknownError(operation, opId, this.settleTimeoutMs, failure)
      await sleep(Math.min(left, pause / 2 + Math.random() * pause / 2))
    }
  }

  /**
   * Awards XP to a member, creating it if needed, as the server's rules say (see awardMany): the
   * gain is floor(xp × the server's multiplier × the multipliers of `roleIds` and `channelId` ×
   * the boost running), within the cooldown and the daily cap. `xp` may be a range to draw from.
   * A refusal by the cooldown or the cap is a result (`applied: false`); passing the XP limit
   * throws XpLimitError. Records the names given. An award to a hidden member is kept, and stays
   * hidden (the same rules apply to it).
   */
  async awardXp (ref: MemberRef & AwardRules & ProfileInput & { xp: AwardXp, username?: string }): Promise<AwardResult> {
    const { guildId, userId } = this.#ref(ref)
    const award = checkAward(ref)
    const username = ref.username === undefined ? '' : assertUsername(ref.username)
    const { displayName, avatarUrl } = profileArgs(ref)
    const opId = this.#operation(guildId, ref.opId).opId
    const { result, gain } = await new Promise<AwardDone>((resolve, reject) => {
      let queue = this.#pendingAwards.get(guildId)
      if (queue === undefined) {
        queue = []
        this.#pendingAwards.set(guildId, queue)
        setImmediate(() => { this.#sendAwards(guildId) })
      }
      queue.push({ args: [boardMember(userId), 0, username, opId, displayName, avatarUrl], award, opId, resolve, reject })
    })
    if (result.reason === 'xp_limit') {
      throw new XpLimitError(`awarding ${gain} XP would lift user ${userId} past ${MAX_XP} XP; nothing was changed`)
    }
    const { replayed, ...rest } = result
    return rest
  }

  /**
   * Sends the awards awardXp queued for a server during this turn of the event loop: one alone
   * as award-xp, several as award-batch calls (each award with its own operation id, so each is
   * applied once and a WriteOutcomeUnknownError names the id to retry it with), in the order they
   * were made. Awards that arrive together (a busy bot's, the write API's concurrent requests)
   * then share one script call's reading of the settings, the clock, the subscriptions, the
   * aggregates' and the data version's writes: a fraction of Redis's CPU per award.
   */
  #sendAwards (guildId: string): void {
    const queue = this.#pendingAwards.get(guildId) ?? []
    this.#pendingAwards.delete(guildId)
    if (queue.length === 1) {
      const [only] = queue as [PendingAward]
      this.#awardOne(guildId, only).then(only.resolve, only.reject)
      return
    }
    for (let from = 0; from < queue.length; from += AWARD_BATCH) {
      const chunk = queue.slice(from, from + AWARD_BATCH)
      this.#awardChunk(guildId, chunk).then(
        (done) => { chunk.forEach((p, i) => { p.resolve(done[i] as AwardDone) }) },
        (err: unknown) => {
          for (const p of chunk) {
            p.reject(err instanceof WriteOutcomeUnknownError ? new WriteOutcomeUnknownError('awardXp', p.opId, this.settleTimeoutMs, err.cause) : err)
          }
        })
    }
  }

  /**
   * Sends the awards awardXp queued for the server now, before another write to it goes: the
   * writes a process makes to a server go to Redis in the order they were made (an award made
   * before a setXp in the same turn is applied before it, as when each award went at once).
   */
  #awardsFirst (guildId: string): void {
    if (this.#pendingAwards.has(guildId)) this.#sendAwards(guildId)
  }

  async #awardOne (guildId: string, pending: PendingAward): Promise<AwardDone> {
    const k = this.keys.guild(guildId)
    const op = this.#operation(guildId, pending.opId)
    const [member, , username, opId, displayName, avatarUrl] = pending.args
    let gained = 0
    let curve: LevelCurve = DEFAULT_CURVE
    const [status, xp, replied, add = '', remove = ''] = await this.#settle('awardXp', opId, async () => await this.#calendar.run(guildId, async (w) => {
      gained = gainOf(w.settings, w.calendar, pending.award)
      curve = levelCurve(w.settings)
      return await scripts.awardXp(this.redis, {
        ...k,
        ...w.keys,
        ...w.args,
        ops: op.current,
        opsPrev: op.previous,
        season: k.seasonCurrent,
        member,
        gain: gained,
        username,
        maxXp: MAX_XP,
        opId,
        opsTtlMs: op.ttlMs,
        displayName,
        avatarUrl
      })
    }, calendarRefusal))
    return { result: awardResult(status, xp, replied, curve, roleChangesOf(add, remove)), gain: gained }
  }

  /** One award-batch call of awardXp's queued awards; what each did, in order. */
  async #awardChunk (guildId: string, chunk: readonly PendingAward[]): Promise<AwardDone[]> {
    const op = this.#operation(guildId, undefined)
    const { results, gains } = await this.#awardBatch('awardXp', guildId, op, op.opId, chunk.map((p) => p.award), chunk.flatMap((p) => p.args))
    return results.map((result, i) => ({ result, gain: gains[i] as number }))
  }

  /**
   * One award-batch call (#settle's `operation`, named `callOpId`): `args` holds each award's
   * PER_AWARD script arguments, whose gains each try computes from `awards` under the settings
   * and calendar it runs with. What each award did, and the gain each was computed to add.
   */
  async #awardBatch (operation: string, guildId: string, op: OperationKeys, callOpId: string, awards: readonly CheckedAward[],
    args: Array<string | number>): Promise<{ results: Array<AwardResult & { replayed?: true }>, gains: number[] }> {
    const k = this.keys.guild(guildId)
    const gains = new Array<number>(awards.length)
    const { reply, curve } = await this.#settle(operation, undefined, async () => await this.#calendar.run(guildId, async (w) => {
      awards.forEach((award, i) => { args[PER_AWARD * i + 1] = gains[i] = gainOf(w.settings, w.calendar, award) })
      return await scripts.awardBatch(this.redis, {
        ...k,
        ...w.keys,
        ...w.args,
        ops: op.current,
        opsPrev: op.previous,
        season: k.seasonCurrent,
        maxXp: MAX_XP,
        opsTtlMs: op.ttlMs,
        callOpId
      }, args).then((reply) => ({ reply, curve: levelCurve(w.settings) }))
    }, ({ reply }) => calendarRefusal(reply)))
    return { results: batchResults(reply, awards.length, curve), gains }
  }

  /**
   * Several awards to one server, each exactly as awardXp applies one (its own operation id when
   * it has one: applied once however often it is sent), with each member's new level. The call is
   * an operation too (`opId`, or one made for it): sent again with the same `opId` and the same
   * awards, it is applied once. Every award is checked before any is sent: one bad item (named by
   * its index) and nothing is applied. An award the rules refuse (cooldown, daily cap, or the XP
   * limit: `applied: false` and the reason) is refused alone; the others are applied. An XP range
   * is drawn here, once: a resend carries the same draw, and an award whose opId was applied
   * before answers its first draw's result. The awards go to Redis in calls of AWARD_BATCH
   * (award-batch-21.lua), each atomic, in flight together: a fraction of the Redis CPU of one call
   * per award.
   */
  async awardMany (guildId: string, awards: readonly BatchAward[], options: { opId?: string } = {}): Promise<BatchAwardResult[]> {
    assertSnowflake('guild_id', guildId)
    if (!Array.isArray(awards) || awards.length === 0 || awards.length > MAX_BATCH_AWARDS) {
      throw new InvalidParameterError(`awards must hold 1 to ${MAX_BATCH_AWARDS} items`)
    }
    // The call's operation id names each script call's (`<id>:<n>`, n from 0): 1 to 58 characters.
    if (options.opId !== undefined && !/^[A-Za-z0-9._:-]{1,58}$/.test(options.opId)) {
      throw new InvalidParameterError('opId must be 1 to 58 characters of A-Z a-z 0-9 . _ : -')
    }
    const callId = options.opId ?? randomOperationId()
    this.#awardsFirst(guildId)
    const op = this.#operation(guildId, undefined)
    const userIds = new Array<string>(awards.length)
    const checked = new Array<CheckedAward>(awards.length)
    // PER_AWARD values per award; the gains, at PER_AWARD * i + 1, are filled in by each attempt.
    const args = new Array<string | number>(PER_AWARD * awards.length)
    awards.forEach((a, i) => {
      try {
        if (typeof a !== 'object' || a === null) throw new InvalidParameterError('must be an object')
        userIds[i] = assertSnowflake('user_id', a.userId)
        checked[i] = checkAward(a)
        const { displayName, avatarUrl } = profileArgs(a)
        const at = PER_AWARD * i
        args[at] = boardMember(a.userId)
        args[at + 2] = a.username === undefined ? '' : assertUsername(a.username)
        args[at + 3] = a.opId === undefined ? '' : this.#operation(guildId, a.opId).opId
        args[at + 4] = displayName
        args[at + 5] = avatarUrl
      } catch (err) {
        if (err instanceof InvalidParameterError) throw new InvalidParameterError(`awards[${i}]: ${err.message}`)
        throw err
      }
    })
    const chunks: Array<Promise<Array<AwardResult & { replayed?: true }>>> = []
    for (let from = 0; from < awards.length; from += AWARD_BATCH) {
      const to = Math.min(awards.length, from + AWARD_BATCH)
      // The outcome of a call that stays unknown is a 503: retried with the same operation ids
      // (the write API's Idempotency-Key names them), it is applied once.
      chunks.push(this.#awardBatch('awardMany', guildId, op, `${callId}:${from / AWARD_BATCH}`, checked.slice(from, to),
        args.slice(PER_AWARD * from, PER_AWARD * to)).then(({ results }) => results))
    }
    const results = (await Promise.all(chunks)).flat()
    return results.map((r, i) => ({ userId: userIds[i] as string, ...r, ...(r.reason === 'xp_limit' ? { refused: 'xp_limit' as const } : {}) }))
  }

  /**
   * Sets a member's XP outright (not multiplied), creating it if needed (hidden if the user is),
   * and records the names given. Returns the previous XP (setMemberXp tells more).
   */
  async setXp (ref: MemberRef & ProfileInput & { xp: number, username?: string }): Promise<number> {
    return (await this.setMemberXp(ref)).previousXp
  }

  /**
   * Sets a member's XP outright (an administrative act: not multiplied, no rule applies),
   * creating it if needed (hidden if the user is), and records the names given; with its level
   * after it and, when the level crossed a role reward's threshold either way, the roles the bot
   * should add and take away.
   */
  async setMemberXp (ref: MemberRef & ProfileInput & { xp: number, username?: string }): Promise<SetXpResult> {
    const { guildId, userId } = this.#ref(ref)
    const xp = assertXp(ref.xp)
    const username = ref.username === undefined ? '' : assertUsername(ref.username)
    const profile = profileArgs(ref)
    const k = this.keys.guild(guildId)
    const op = this.#operation(guildId, ref.opId)
    this.#awardsFirst(guildId)
    const [, previousXp, add = '', remove = '', level] = await this.#settle('setXp', op.opId, async () => await this.#calendar.run(guildId, async (w) => await scripts.setXp(this.redis, {
      ...k, ...w.keys, ...w.args, ops: op.current, opsPrev: op.previous, member: boardMember(userId), xp, username, opId: op.opId, opsTtlMs: op.ttlMs, ...profile
    }), calendarRefusal))
    // A reply remembered before levels were given: the level under the settings now.
    return { previousXp, xp, level: level ?? levelForXp(levelCurve(await this.settings.read(guildId)), xp), ...roleChangesOf(add, remove) }
  }

  /** Records a member's username. Returns false (and stores nothing) for a non-member. */
  async setUsername (ref: MemberRef & { username: string }): Promise<boolean> {
    return await this.setNames({ ...ref, username: assertUsername(ref.username) })
  }

  /**
   * Records a member's names: its username, display name and avatar URL, each when given (null
   * clears the display name or the avatar URL). Returns false (and stores nothing) for a non-member.
   */
  async setNames (ref: MemberRef & ProfileInput & { username?: string }): Promise<boolean> {
    const { guildId, userId } = this.#ref(ref)
    const username = ref.username === undefined ? '' : assertUsername(ref.username)
    const profile = profileArgs(ref)
    if (username === '' && !hasProfile(ref)) throw new InvalidParameterError('give a username, a display name or an avatar URL')
    const k = this.keys.guild(guildId)
    const op = this.#operation(guildId, ref.opId)
    this.#awardsFirst(guildId)
    // After the writes called before it, which may wait for the server's settings.
    const settings = this.#calendar.settingsOf(guildId)
    if (settings instanceof Promise) await settings
    return await this.#settle('setNames', op.opId, async () => await scripts.setUsername(this.redis, {
      ...k, ops: op.current, opsPrev: op.previous, member: boardMember(userId), username, opId: op.opId, opsTtlMs: op.ttlMs, ...profile
    })) === MemberWriteStatus.done
  }

  /**
   * Hides a member (`visible: false`, with why: it left the server, or opted out) or shows it again
   * (`visible: true`: when `reason` no longer holds, or, without one, whatever the reasons). A
   * member is hidden while any reason holds: from every public read at once (boards, ranks,
   * totals, streams), keeping its XP, which awards to it go on adding to; shown, it is back with
   * its XP and exact ranks. A user who is not a member yet is recorded all the same (its first
   * write keeps it hidden). Setting a state that holds already changes nothing.
   */
  async setVisibility (ref: { guildId: string } & VisibilityChange): Promise<VisibilityResult> {
    assertSnowflake('guild_id', ref.guildId)
    const change = new VisibilityChanges()
    change.add(ref)
    const [result] = await this.#applyVisibility(ref.guildId, change)
    return result as VisibilityResult
  }

  /**
   * setVisibility for many users of one server (a bot's join and leave sync), one result per user
   * in the order first given; a user given more than once ends as the changes in turn leave it.
   * Every change is checked first (an error names its index) and nothing is written on a bad
   * one. Users go to Redis in calls of VISIBILITY_BATCH, each atomic (every board and the totals
   * move together), a few in flight; `onProgress` gets the users done so far after each.
   */
  async setVisibilityMany (guildId: string, changes: readonly VisibilityChange[], onProgress?: (done: number) => void): Promise<VisibilityResult[]> {
    assertSnowflake('guild_id', guildId)
    if (!Array.isArray(changes)) throw new InvalidParameterError('changes must be an array')
    const all = new VisibilityChanges()
    changes.forEach((change, i) => {
      try {
        all.add(change)
      } catch (err) {
        if (err instanceof InvalidParameterError) throw new InvalidParameterError(`changes[${i}]: ${err.message}`)
        throw err
      }
    })
    return await this.#applyVisibility(guildId, all, onProgress)
  }

  async #applyVisibility (guildId: string, all: VisibilityChanges, onProgress?: (done: number) => void): Promise<VisibilityResult[]> {
    this.#awardsFirst(guildId)
    const k = this.keys.guild(guildId)
    const results = new Array<VisibilityResult[]>()
    let done = 0
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < all.userIds.length) {
        const at = next
        next += VISIBILITY_BATCH
        const chunk = all.chunk(at, at + VISIBILITY_BATCH)
        const reply = await this.#settle('setVisibility', undefined, async () => await this.#calendar.run(guildId, async (w) =>
          await scripts.setVisibility(this.redis, { ...k, ...w.keys, ...w.args }, this.#seasonBoards(guildId, w.settings), chunk.items),
        calendarRefusal))
        results[at / VISIBILITY_BATCH] = visibilityResults(chunk, reply)
        done += chunk.userIds.length
        onProgress?.(done)
      }
    }
    await Promise.all(Array.from({ length: BULK_IN_FLIGHT }, worker))
    const byUser = new Map(results.flat().map((r) => [r.userId, r]))
    return all.userIds.map((userId) => byUser.get(userId) as VisibilityResult)
  }

  /**
   * Every season board a member's score is kept in, as the settings a write computes with name
   * them: the current season's and each ended one still kept (a season's end, or a change of
   * season_retention, moves the epoch, so a script sent with these keys finds them current).
   */
  #seasonBoards (guildId: string, settings: GuildWriteSettings): string[] {
    const current = settings.currentSeason.id
    const boards = [this.keys.guild(guildId).seasonCurrent]
    for (let id = current - 1; id >= Math.max(1, current - settings.seasonRetention); id--) boards.push(this.keys.season(guildId, id))
    return boards
  }

  /** Removes a member and all its data. Returns false when it was not a member. */
  async removeMember (ref: MemberRef): Promise<boolean> {
    const { guildId, userId } = this.#ref(ref)
    const k = this.keys.guild(guildId)
    const op = this.#operation(guildId, ref.opId)
    this.#awardsFirst(guildId)
    const [removed] = await this.#settle('removeMember', op.opId, async () => await this.#calendar.run(guildId, async (w) =>
      await scripts.removeMember(this.redis, {
        ...k,
        ...w.keys,
        ...w.args,
        ops: op.current,
        opsPrev: op.previous,
        season: k.seasonCurrent,
        member: boardMember(userId),
        opId: op.opId,
        opsTtlMs: op.ttlMs
      }), calendarRefusal))
    return removed === MemberWriteStatus.done
  }

  /**
   * Records a daily claim dated `at` (default: now, by Redis's clock). Throws
   * DailyClaimRefusedError, with nothing changed, for a second claim on the same UTC day, a
   * claim dated before the last one, or one more than 5 minutes ahead of the clock.
   */
  async claimDaily (ref: MemberRef & { at?: Date }): Promise<DailyClaim> {
    const { guildId, userId } = this.#ref(ref)
    let at = ''
    if (ref.at !== undefined) {
      const ms = ref.at instanceof Date ? ref.at.getTime() : NaN
      if (!Number.isSafeInteger(ms) || ms < 0) throw new InvalidParameterError('at must be a valid date after 1970')
      at = String(ms)
    }
    const k = this.keys.guild(guildId)
    const op = this.#operation(guildId, ref.opId)
    this.#awardsFirst(guildId)
    const [status, value, claimedAt] = await this.#settle('claimDaily', op.opId, async () => await this.#calendar.run(guildId, async (w) => await scripts.dailyClaim(this.redis, {
      ...k, ...w.keys, ...w.args, ops: op.current, opsPrev: op.previous, member: boardMember(userId), atMs: at, maxAheadMs: MAX_CLAIM_AHEAD_MS, opId: op.opId, opsTtlMs: op.ttlMs
    }), claimRefusal))
    const when = new Date(value).toISOString()
    switch (status) {
      case DailyClaimStatus.claimed: return { streak: value, claimedAt: new Date(claimedAt ?? 0) }
      case DailyClaimStatus.alreadyClaimed: throw new DailyClaimRefusedError('already_claimed', `user ${userId} already claimed on that UTC day (last claim ${when})`, new Date(value))
      case DailyClaimStatus.beforeLastClaim: throw new DailyClaimRefusedError('before_last_claim', `the claim is dated before user ${userId}'s last claim (${when})`)
      default: // DailyClaimStatus.inFuture
        throw new DailyClaimRefusedError('in_future', `the claim is dated more than 5 minutes after the service's clock (${when})`)
    }
  }

  /**
   * Changes a server's settings (its curve, multiplier, seasons, history, rules, profile…: see
   * SettingsInput; each field optional, the others kept) and returns them as they are after it.
   * Every field is checked first: an error names the bad one and nothing changes. A curve switch
   * shows in the very next read. Settings are absolute: sending them again is safe.
   */
  async configureGuild (guildId: string, settings: GuildSettingsInput): Promise<GuildSettings> {
    assertSnowflake('guild_id', guildId)
    this.#awardsFirst(guildId)
    const changed = await this.#settle('configureGuild', undefined, async () => await this.settings.change(guildId, settings))
    // A new schedule or time zone may bring the season's end or the day's nearer: the ticker looks again now.
    await this.#settle('configureGuild', undefined, async () => await this.redis.zadd(this.keys.calendarServers(), 0, guildId))
    return changed
  }

  /**
   * What changing a server's settings to `settings` would do, changing nothing: how many members
   * would change level (a new curve), and for each role of the current or the new role rewards,
   * how many members would gain it and lose it. Its Redis work follows the settings, not the
   * members (src/settings/settings-preview.ts).
   */
  async previewSettings (guildId: string, settings: GuildSettingsInput): Promise<SettingsPreview> {
    return await this.#settle('previewSettings', undefined, async () => await previewSettings(this.settings, guildId, settings))
  }

  /**
   * Ends the server's current season now, whatever its schedule, and starts the next (named
   * `name`, "Season N" by default). The ended season's board is kept as it stands, read-only, for
   * `season_retention` seasons. Returns the new season.
   */
  async endSeason (guildId: string, options: { name?: string } = {}): Promise<Season> {
    assertSnowflake('guild_id', guildId)
    const name = options.name === undefined ? undefined : assertDisplayText('name', options.name)
    // The season current now is the one to end: a resend after a lost answer, or a second call
    // racing this one, finds it ended and answers the season after it.
    this.#awardsFirst(guildId)
    const { id } = (await this.#settle('endSeason', undefined, async () => await this.#settingsCache.refresh(guildId))).currentSeason
    const season = await this.#settle('endSeason', undefined, async () => await this.seasons.endNow(guildId, id, name))
    await this.#settle('endSeason', undefined, async () => await this.redis.zadd(this.keys.calendarServers(), 0, guildId))
    return season
  }

  /**
   * Sets many members of one server at once (seeding, imports): XP outright (not multiplied),
   * and the username and daily record where given. Every member is checked before anything is
   * written. A member given more than once counts as if each were applied in turn: the last XP,
   * and the last username and daily record given. The aggregates stay exact and the data
   * version moves once per batch of BULK_BATCH members; each batch is atomic, the whole call is
   * not. Setting the same members again changes nothing but the version.
   * Returns the number of distinct members set; `onProgress` gets the count so far after each batch.
   */
  async bulkSetMembers (guildId: string, members: BulkMember[], onProgress?: (done: number) => void): Promise<number> {
    assertSnowflake('guild_id', guildId)
    if (!Array.isArray(members)) throw new InvalidParameterError('members must be an array')
    const columns = new BulkColumns()
    for (const m of members) columns.add(m)
    let next = 0
    return await this.#writeBatches(guildId, () => {
      if (next >= columns.length) return undefined
      const from = next
      next = Math.min(next + BULK_BATCH, columns.length)
      return columns.args(from, next)
    }, onProgress)
  }

  /**
   * bulkSetMembers for members from a source of any length (a generator): they are taken
   * BULK_BATCH at a time as Redis takes them, at most BULK_IN_FLIGHT batches ahead of it, so the
   * call holds a few batches however many members come. Each batch is checked, then written
   * atomically, in the source's order: a bad member rejects the call with the batches before it
   * written (and the source closed). A member given twice within a batch counts as in
   * bulkSetMembers; given again in a later batch, it is set again, and counted again.
   * Returns the number of members set; `onProgress` gets the count so far after each batch.
   */
  async bulkSetMembersFrom (guildId: string, source: Iterable<BulkMember>, onProgress?: (done: number) => void): Promise<number> {
    assertSnowflake('guild_id', guildId)
    if (typeof (source as Partial<Iterable<BulkMember>> | null)?.[Symbol.iterator] !== 'function') {
      throw new InvalidParameterError('members must be iterable')
    }
    const members = source[Symbol.iterator]()
    let exhausted = false
    try {
      return await this.#writeBatches(guildId, () => {
        const columns = new BulkColumns()
        for (let taken = 0; taken < BULK_BATCH && !exhausted; taken++) {
          const next = members.next()
          if (next.done === true) exhausted = true
          else columns.add(next.value)
        }
        return columns.length === 0 ? undefined : columns.args(0, columns.length)
      }, onProgress)
    } finally {
      if (!exhausted) members.return?.()
    }
  }

  /**
   * Sends the batches `take` gives (the bulk script's arguments; undefined when there are no
   * more), in order, until it gives none or a batch fails. Returns the members set.
   */
  async #writeBatches (guildId: string, take: () => string[] | undefined, onProgress?: (done: number) => void): Promise<number> {
    this.#awardsFirst(guildId)
    const k = this.keys.guild(guildId)
    let done = 0
    let stopped = false
    let failure: { err: unknown } | undefined
    // A few batches in flight keep Redis busy without queueing any past the command timeout.
    // Each goes out on its own pipeline, at once: auto-pipelining holds a command back until
    // the pipeline before it is answered in full, so batches sent together would come back
    // together and Redis would sit idle while the next ones are built.
    const worker = async (): Promise<void> => {
      try {
        for (;;) {
          const args = stopped ? undefined : take()
          if (args === undefined) return
          const [whole = '0', named = '0', dated = '0', bare = '0', profiled = '0', ...members] = args
          const set = await this.#calendar.run(guildId, async (w) => {
            const [[err, reply] = [null, 0]] = await this.redis.pipeline()
              .bulkSetMembers(...scriptArgs('bulkSetMembers', { ...k, ...w.keys, ...w.args, whole, named, dated, bare, profiled }), ...members).exec() ?? []
            if (err !== null) throw err
            return reply as number | [number, number]
          }, bulkRefusal)
          // Not `done += await …`: that reads `done` before the await, and the workers overwrite each other.
          done += set as number
          onProgress?.(done)
        }
      } catch (err) {
        failure ??= { err }
      } finally {
        stopped = true // the source is done, or a batch failed: the other workers send no more
      }
    }
    // Settled, not raced: when the call rejects, no batch of it is still on its way.
    await Promise.all(Array.from({ length: BULK_IN_FLIGHT }, worker))
    if (failure !== undefined) throw failure.err
    return done
  }

  #operation (guildId: string, opId: string | undefined): OperationKeys {
    return operationKeys(this.keys, guildId, this.operationWindowMs, opId)
  }

  #ref (ref: MemberRef): MemberRef {
    return { guildId: assertSnowflake('guild_id', ref.guildId), userId: assertSnowflake('user_id', ref.userId) }
  }
}
