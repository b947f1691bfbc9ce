// Cooldowns kept by the hour of Redis's clock (includes/cooldowns.lua), the clock moved by the test
// (test/helpers/fake-clock.ts): a cooldown holds across an hour's edge, to the ms, for writers
// whose clocks are off either way; an hour's hash is deleted once the hour after next begins, so
// two are kept; the sorted set an earlier version kept holds awards off while it exists, and the
// awards made meanwhile are added to it for the instances not yet upgraded; a removed member's
// cooldown goes from wherever it is kept.
import t, { type Test } from 'tap'
import { FakeClock, fakeClockRedis } from './helpers/fake-clock.js'
import { createRedis, type RedisClient } from '../src/redis/client.js'
import { RedisClock } from '../src/redis/clock.js'
import { boardMember, KeyBuilder } from '../src/redis/keys.js'
import { COOLDOWN_HOUR_MS } from '../src/writer/calendar-writes.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'

const HOUR = COOLDOWN_HOUR_MS
const GUILD = '1300000000000000001'
/** An hour's edge (Unix ms), and its hour's number. */
const EDGE = Date.parse('2026-11-26T15:00:00Z')
const H = EDGE / HOUR

interface Fixture {
  clock: FakeClock
  keys: KeyBuilder
  raw: RedisClient
  /** A writer on a connection of its own whose estimate of Redis's clock starts `skewMs` off it, and that estimate. */
  writer: (skewMs?: number) => { writer: LeaderboardWriter, estimate: RedisClock }
}

async function fixture (t: Test, start: number): Promise<Fixture> {
  const clock = FakeClock.create(t)
  clock.set(start)
  const server = await fakeClockRedis(t, clock)
  const keys = new KeyBuilder('c')
  const connect = (): RedisClient => {
    const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 10_000 })
    t.teardown(() => { redis.disconnect() })
    return redis
  }
  return {
    clock,
    keys,
    raw: connect(),
    writer: (skewMs = 0) => {
      const estimate = new RedisClock()
      estimate.observe(clock.now() + skewMs)
      return { writer: new LeaderboardWriter(connect(), keys, { clock: estimate }), estimate }
    }
  }
}

const award = async (writer: LeaderboardWriter, userId: string): Promise<unknown> => await writer.awardXp({ guildId: GUILD, userId, xp: 10 })
const awardInBatch = async (writer: LeaderboardWriter, userId: string): Promise<unknown> => (await writer.awardMany(GUILD, [{ userId, xp: 10 }]))[0]

t.test("a cooldown holds across an hour's edge, to the ms, by Redis's clock, for writers whose clocks are off either way", async (t) => {
  const f = await fixture(t, EDGE - 5000)
  // Ten minutes ahead: before the edge it names the next hour's keys; behind: after it, the hour before's.
  const ahead = f.writer(600_000)
  const behind = f.writer(-600_000)
  await ahead.writer.configureGuild(GUILD, { cooldownSeconds: 60 })
  t.match(await award(ahead.writer, '1'), { applied: true })
  t.match(await awardInBatch(ahead.writer, '2'), { applied: true })
  t.ok(Math.abs(ahead.estimate.now() - f.clock.now()) < 60_000, 'the writer ahead was refused and learned Redis\'s clock')
  const last = Number(await f.raw.hget(f.keys.cooldownHour(GUILD, H - 1), boardMember('1')))
  t.ok(last >= EDGE - 5000 && last < EDGE, `kept in the hash of the hour before the edge (${last - EDGE} ms)`)

  f.clock.set(EDGE + 1000)
  t.match(await award(behind.writer, '1'), { applied: false, reason: 'cooldown' }, 'after the edge, by a writer that thinks it is before it: held')
  t.match(await awardInBatch(behind.writer, '2'), { applied: false, reason: 'cooldown' }, 'the same in a batch')
  t.ok(Math.abs(behind.estimate.now() - f.clock.now()) < 60_000, 'the writer behind was refused and learned Redis\'s clock')
  // Most of the cooldown later, the hour still younger than it: held.
  f.clock.set(last + 55_000)
  t.match(await award(ahead.writer, '1'), { applied: false, reason: 'cooldown' }, '55 s after: held')
  f.clock.set(last + 60_000)
  t.match(await award(ahead.writer, '1'), { applied: true, xp: 20 }, 'its cooldown over: applied')
  t.ok(Number(await f.raw.hget(f.keys.cooldownHour(GUILD, H), boardMember('1'))) >= last + 60_000, 'the next cooldown is in the new hour\'s hash')
})

t.test("Redis's clock decides an award's hour: a writer behind it, after the edge, keeps the cooldown in the new hour, which the hour after reads", async (t) => {
  const f = await fixture(t, EDGE + 1000)
  const behind = f.writer(-600_000)
  await behind.writer.configureGuild(GUILD, { cooldownSeconds: 3600 })
  t.match(await award(behind.writer, '1'), { applied: true })
  t.match(await awardInBatch(behind.writer, '2'), { applied: true })
  t.equal(await f.raw.exists(f.keys.cooldownHour(GUILD, H - 1)), 0, 'nothing in the hour before\'s hash')
  f.clock.set(EDGE + HOUR + 500)
  const { writer } = f.writer()
  t.match(await award(writer, '1'), { applied: false, reason: 'cooldown' }, 'an hour less half a second later, in the next hour: held')
  t.match(await awardInBatch(writer, '2'), { applied: false, reason: 'cooldown' }, 'the same in a batch')
})

t.test("an hour's hash lives through the next hour and goes when the hour after that begins: two are kept", async (t) => {
  const f = await fixture(t, EDGE + 60_000)
  const { writer } = f.writer()
  await writer.configureGuild(GUILD, { cooldownSeconds: 60 })
  const hashes = async (): Promise<string[]> => (await f.raw.keys(`${f.keys.prefix}:{${GUILD}}:cooldowns:*`)).sort()
  t.match(await award(writer, '1'), { applied: true })
  const untilEnd = EDGE + 3 * HOUR - f.clock.now()
  const ttl = await f.raw.pttl(f.keys.cooldownHour(GUILD, H))
  t.ok(ttl <= untilEnd && ttl > untilEnd - 60_000, `it expires at the end of the hour after next, if no write comes (${ttl} ms)`)

  f.clock.set(EDGE + HOUR + 60_000)
  t.match(await award(writer, '2'), { applied: true })
  t.same(await hashes(), [f.keys.cooldownHour(GUILD, H), f.keys.cooldownHour(GUILD, H + 1)], 'the hour before is still read')

  f.clock.set(EDGE + 2 * HOUR + 60_000)
  t.match(await awardInBatch(writer, '3'), { applied: true })
  t.same(await hashes(), [f.keys.cooldownHour(GUILD, H + 1), f.keys.cooldownHour(GUILD, H + 2)], 'the first write of the hour after next deleted it')
  f.clock.set(EDGE + 2 * HOUR + 120_000)
  t.match(await award(writer, '4'), { applied: true })
  t.equal((await hashes()).length, 2, 'and the hour\'s next writes keep two')
})

t.test('upgrade: the sorted set an earlier version kept holds awards off while it exists, the later of its time and the hash\'s counts, and awards made meanwhile go into it too; it is never created', async (t) => {
  const f = await fixture(t, EDGE + 600_000)
  const { writer } = f.writer()
  await writer.configureGuild(GUILD, { cooldownSeconds: 60 })
  const legacy = f.keys.guild(GUILD).cooldowns
  // As the earlier version writes it: each member's last award's ms, and an hour to live after its last write.
  const olderInstanceAwards = async (...userIds: string[]): Promise<void> => {
    const now = f.clock.now()
    for (const userId of userIds) await f.raw.zadd(legacy, now - 10_000, boardMember(userId))
    await f.raw.pexpire(legacy, HOUR)
  }
  await olderInstanceAwards('1', '2')
  t.match(await award(writer, '1'), { applied: false, reason: 'cooldown' }, 'a cooldown the earlier version started holds')
  t.match(await awardInBatch(writer, '2'), { applied: false, reason: 'cooldown' }, 'in a batch too')

  t.match(await award(writer, '3'), { applied: true })
  f.clock.set(f.clock.now() + 120_000)
  await olderInstanceAwards('3') // an older instance, which does not read the hashes, applied an award since
  t.match(await award(writer, '3'), { applied: false, reason: 'cooldown' }, 'the later of the two times counts')

  const ttl = await f.raw.pttl(legacy)
  t.match(await award(writer, '4'), { applied: true })
  t.match(await awardInBatch(writer, '5'), { applied: true })
  for (const userId of ['4', '5']) {
    t.equal(await f.raw.zscore(legacy, boardMember(userId)), await f.raw.hget(f.keys.cooldownHour(GUILD, H), boardMember(userId)),
      `member ${userId}'s cooldown is in the sorted set too, for an instance not yet upgraded`)
  }
  t.ok(await f.raw.pttl(legacy) <= ttl, 'whose end stays the one the earlier version gave it')

  await f.raw.del(legacy)
  t.match(await award(writer, '6'), { applied: true })
  t.match(await awardInBatch(writer, '7'), { applied: true })
  t.equal(await f.raw.exists(legacy), 0, 'once gone, it is not made again')
})

t.test("a removed member loses its cooldown wherever it is kept: the hour before's hash, the earlier version's sorted set; the others' stay", async (t) => {
  const f = await fixture(t, EDGE - 5000)
  const { writer } = f.writer()
  await writer.configureGuild(GUILD, { cooldownSeconds: 3600 })
  for (const userId of ['1', '2', '3']) t.match(await award(writer, userId), { applied: true })
  f.clock.set(EDGE + 1000)
  await f.raw.zadd(f.keys.guild(GUILD).cooldowns, f.clock.now() - 500, boardMember('3')) // an older instance's award, after the edge
  await f.raw.pexpire(f.keys.guild(GUILD).cooldowns, HOUR)
  for (const userId of ['1', '2', '3']) t.match(await award(writer, userId), { applied: false, reason: 'cooldown' }, `member ${userId} held before the removal`)
  t.equal(await writer.removeMember({ guildId: GUILD, userId: '1' }), true)
  t.equal(await writer.removeMember({ guildId: GUILD, userId: '3' }), true)
  t.match(await award(writer, '1'), { applied: true, xp: 10 }, 'removed and added again: applied (its cooldown was in the hour before\'s hash)')
  t.match(await awardInBatch(writer, '3'), { applied: true, xp: 10 }, 'the same where the sorted set kept it too')
  t.match(await award(writer, '2'), { applied: false, reason: 'cooldown' }, 'the other member\'s cooldown stays')
})
