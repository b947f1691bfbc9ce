// What a server's data holds, read back with plain commands: the board, the member records and
// the stats hash, and the stats a full scan of the board computes (what "exact" means).
import type { RedisClient } from '../../src/redis/client.js'
import type { GuildKeys } from '../../src/redis/keys.js'
import { userIdFromBoardMember } from '../../src/redis/keys.js'
import { type MemberRecordParts, parseRecord } from '../../src/redis/records.js'
import { CURVES, levelForXp } from '../../src/levels/curves.js'

export const STAT_FIELDS = ['xp_total', 'members_with_xp', ...CURVES.map((c) => `level_sum:${c}`)]

/** The stats hash as numbers, an absent field read as 0. */
export async function storedStats (redis: RedisClient, k: GuildKeys): Promise<Record<string, number>> {
  const values = await redis.hmget(k.stats, ...STAT_FIELDS)
  return Object.fromEntries(STAT_FIELDS.map((f, i) => [f, Number(values[i] ?? 0)]))
}

/** The stats of members holding these XP values, computed from scratch. */
export function statsOf (xps: number[]): Record<string, number> {
  const out: Record<string, number> = {
    xp_total: xps.reduce((a, b) => a + b, 0),
    members_with_xp: xps.filter((x) => x > 0).length
  }
  for (const c of CURVES) out[`level_sum:${c}`] = xps.reduce((a, x) => a + levelForXp(c, x), 0)
  return out
}

/** user id -> XP, from the board. */
export async function boardOf (redis: RedisClient, k: GuildKeys): Promise<Map<string, number>> {
  const flat = await redis.zrange(k.board, 0, -1, 'WITHSCORES')
  const board = new Map<string, number>()
  for (let i = 0; i < flat.length; i += 2) board.set(userIdFromBoardMember(flat[i] as string), Number(flat[i + 1]))
  return board
}

/** user id -> raw record, from the members hash. */
export async function rawRecordsOf (redis: RedisClient, k: GuildKeys): Promise<Map<string, string>> {
  const stored = await redis.hgetall(k.members)
  return new Map(Object.entries(stored).map(([member, record]) => [userIdFromBoardMember(member), record]))
}

/** user id -> parsed record, from the members hash. */
/** A record's base: the daily record and the username (its extension is test/records.test.ts's). */
export type BaseRecord = Pick<MemberRecordParts, 'streak' | 'lastClaim' | 'username'>

export function baseRecord (record: string | null | undefined): BaseRecord {
  const { streak, lastClaim, username } = parseRecord(record)
  return { streak, lastClaim, username }
}

export async function recordsOf (redis: RedisClient, k: GuildKeys): Promise<Map<string, BaseRecord>> {
  const raw = await rawRecordsOf(redis, k)
  return new Map([...raw].map(([id, record]) => [id, baseRecord(record)]))
}

/** Every record is "<digits>:<digits>:<anything>" with a streak of 1 or more exactly when it has a claim. */
export function malformedRecords (records: Map<string, string>): string[] {
  return [...records].filter(([, record]) => {
    const match = /^(\d*):(\d*):/.exec(record)
    if (match === null) return true
    const [, streak = '', claim = ''] = match
    return (streak === '') !== (claim === '') || (streak !== '' && Number(streak) < 1)
  }).map(([id, record]) => `${id}: ${JSON.stringify(record)}`)
}
