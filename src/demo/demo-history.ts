// A few closed days for a freshly seeded demo server, so that its rank_change and history reads
// have something to show. Awards cannot be made in the past (Redis's clock decides the day every
// write counts in), so this writes what awards on those days would have left, the days' boards
// and day-start hashes (docs/architecture.md, "Key schema"), going back from the board as it
// stands, and lets the day close (src/history/day-close.ts) build the history from them as it
// does for any server.
import type { RedisClient } from '../redis/client.js'
import { redisNow } from '../redis/client.js'
import type { KeyBuilder } from '../redis/keys.js'
import { DayCloser } from '../history/day-close.js'
import { shiftDay, zonedDay } from '../calendar/zoned.js'
import { Random } from '../random.js'

/** How many days before today the demo's history holds. */
export const DEMO_HISTORY_DAYS = 5
/** The share of the members active on each of those days. */
const ACTIVE_SHARE = 0.3

/**
 * Writes DEMO_HISTORY_DAYS days of activity before today (UTC, the demo server's time zone) for
 * a server whose board was just seeded, then closes them. Returns the days closed.
 */
export async function addDemoHistory (redis: RedisClient, keys: KeyBuilder, guildId: string, seed: string): Promise<string[]> {
  const k = keys.guild(guildId)
  const now = await redisNow(redis)
  const today = zonedDay(now, 'UTC')
  // The seeded crowd counts as the board at yesterday's end: today's record of the seeding (every
  // member new today) goes, and each member's XP at the end of the day walked back to starts there.
  await redis.unlink(keys.dayGains(guildId, today.label), keys.dayStart(guildId, today.label))
  const flat = await redis.zrange(k.board, 0, -1, 'WITHSCORES')
  const xpAtEnd = new Map<string, number>()
  for (let i = 0; i < flat.length; i += 2) xpAtEnd.set(flat[i] as string, Number(flat[i + 1]))
  const random = new Random(`${seed}:history`)
  const expireAt = today.end + 2 * 86_400_000 // the close frees them; this bounds a close never run
  for (let back = 1; back <= DEMO_HISTORY_DAYS; back++) {
    const label = shiftDay(today.label, -back)
    const gains: Record<string, string> = {}
    const starts: Record<string, string> = {}
    for (const [member, xp] of xpAtEnd) {
      if (!random.chance(ACTIVE_SHARE) || xp <= 1) continue
      const gained = Math.min(xp - 1, random.int(15, 400))
      gains[member] = String(gained)
      starts[member] = String(xp - gained)
      xpAtEnd.set(member, xp - gained)
    }
    if (Object.keys(gains).length === 0) continue
    await redis.multi()
      .hset(keys.dayGains(guildId, label), gains).pexpireat(keys.dayGains(guildId, label), expireAt)
      .hset(keys.dayStart(guildId, label), starts).pexpireat(keys.dayStart(guildId, label), expireAt)
      .exec()
  }
  // History begins with the first of those days (a first write then would have set it).
  await redis.hset(k.hist, 'since', String(today.start - DEMO_HISTORY_DAYS * 86_400_000))
  return await new DayCloser(redis, keys).closeDue(guildId)
}
