// The write side the bot uses: every change to a server's data is one Lua script, so the
// aggregates stay exact under any interleaving of writers.
import type { RedisClient } from '../redis/client.js'
import { defineCommands } from '../redis/scripts.js'
import { boardMember, KeyBuilder } from '../redis/keys.js'
import { type Curve, CURVES, isCurve, MAX_XP } from '../levels/curves.js'
import { DailyClaimRefusedError, InvalidParameterError, XpLimitError } from '../errors.js'
import {
  assertInteger, assertSnowflake, assertUsername, assertXp, MAX_AWARD, parseMultiplier
} from '../validation.js'

/** How far ahead of the service's clock a daily claim may be dated. */
export const MAX_CLAIM_AHEAD_MS = 5 * 60 * 1000

export interface MemberRef {
  guildId: string
  userId: string
}

export interface AwardResult {
  /** XP actually added: floor(award * multiplier). */
  gained: number
  xp: number
}

export interface DailyClaim {
  streak: number
  claimedAt: Date
}

export interface GuildSettingsInput {
  curve?: Curve | string
  /** 0.01 to 100, at most two decimals; a string such as "1.25" is read exactly. */
  multiplier?: number | string
}

export class LeaderboardWriter {
  readonly redis: RedisClient
  readonly keys: KeyBuilder

  constructor (redis: RedisClient, keys: KeyBuilder = new KeyBuilder()) {
    this.redis = redis
    this.keys = keys
    defineCommands(redis)
  }

  /** Adds floor(xp * the server's multiplier) to a member, creating it if needed. */
  async awardXp (ref: MemberRef & { xp: number, username?: string }): Promise<AwardResult> {
    const { guildId, userId } = this.#ref(ref)
    const award = assertInteger('xp', ref.xp, 1, MAX_AWARD)
    const username = ref.username === undefined ? '' : assertUsername(ref.username)
    const k = this.keys.guild(guildId)
    const [status, xp, gained] = await this.redis.awardXp(
      k.board, k.names, k.stats, k.settings, boardMember(userId), userId, award, username, MAX_XP)
    if (status !== 1) {
      throw new XpLimitError(`awarding ${gained} XP would lift user ${userId} past ${MAX_XP} XP; nothing was changed`)
    }
    return { gained, xp }
  }

  /** Sets a member's XP outright (not multiplied), creating it if needed. Returns the previous XP. */
  async setXp (ref: MemberRef & { xp: number, username?: string }): Promise<number> {
    const { guildId, userId } = this.#ref(ref)
    const xp = assertXp(ref.xp)
    const username = ref.username === undefined ? '' : assertUsername(ref.username)
    const k = this.keys.guild(guildId)
    return await this.redis.setXp(k.board, k.names, k.stats, boardMember(userId), userId, xp, username)
  }

  /** Records a member's display name. Returns false (and stores nothing) for a non-member. */
  async setUsername (ref: MemberRef & { username: string }): Promise<boolean> {
    const { guildId, userId } = this.#ref(ref)
    const username = assertUsername(ref.username)
    const k = this.keys.guild(guildId)
    return await this.redis.setUsername(k.board, k.names, boardMember(userId), userId, username) === 1
  }

  /** Removes a member and all its data. Returns false when it was not a member. */
  async removeMember (ref: MemberRef): Promise<boolean> {
    const { guildId, userId } = this.#ref(ref)
    const k = this.keys.guild(guildId)
    return await this.redis.removeMember(k.board, k.names, k.streaks, k.claims, k.stats, boardMember(userId), userId) === 1
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
    const [status, value, claimedAt] = await this.redis.dailyClaim(
      k.board, k.streaks, k.claims, boardMember(userId), userId, at, MAX_CLAIM_AHEAD_MS)
    const when = new Date(value).toISOString()
    switch (status) {
      case 1: return { streak: value, claimedAt: new Date(claimedAt ?? 0) }
      case -1: throw new DailyClaimRefusedError('already_claimed', `user ${userId} already claimed on that UTC day (last claim ${when})`)
      case -2: throw new DailyClaimRefusedError('before_last_claim', `the claim is dated before user ${userId}'s last claim (${when})`)
      default: throw new DailyClaimRefusedError('in_future', `the claim is dated more than 5 minutes after the service's clock (${when})`)
    }
  }

  /** Sets a server's curve and/or multiplier. A curve switch shows in the very next read. */
  async configureGuild (guildId: string, settings: GuildSettingsInput): Promise<void> {
    assertSnowflake('guild_id', guildId)
    const fields: Record<string, string> = {}
    if (settings.curve !== undefined) {
      if (!isCurve(settings.curve)) throw new InvalidParameterError(`curve must be one of ${CURVES.join(', ')}`)
      fields.curve = settings.curve
    }
    if (settings.multiplier !== undefined) {
      fields.multiplier_hundredths = String(parseMultiplier(settings.multiplier))
    }
    if (Object.keys(fields).length === 0) throw new InvalidParameterError('give a curve or a multiplier to set')
    // One HSET is atomic; the scripts read the settings inside their own atomic step.
    await this.redis.hset(this.keys.guild(guildId).settings, fields)
  }

  #ref (ref: MemberRef): MemberRef {
    return { guildId: assertSnowflake('guild_id', ref.guildId), userId: assertSnowflake('user_id', ref.userId) }
  }
}
