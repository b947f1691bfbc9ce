// A day's close, call by call: what bounds the work of each of its script calls (so that no call
// holds Redis long, whatever the server's size), with what it keeps unchanged. The close's
// results are pinned in test/history.test.ts.
import t, { type Test } from 'tap'
import { FakeClock, fakeClockRedis } from './helpers/fake-clock.js'
import { monitored, redisFixture, type RedisServer } from './helpers/redis-server.js'
import { createRedis, type RedisClient } from '../src/redis/client.js'
import { RedisClock } from '../src/redis/clock.js'
import { boardMember, KeyBuilder } from '../src/redis/keys.js'
import { DayCloser } from '../src/history/day-close.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import * as scripts from '../src/redis/write-scripts.js'
import { CloseDayStatus } from '../src/redis/script-status.js'

const GUILD = '1400000000000000001'
const MB = 1_048_576
/** 00:00 of 2026-11-21 in UTC. */
const day21 = Date.UTC(2026, 10, 21)

/** A Redis whose clock the test moves, at the evening before the 21st (history's first write), and a writer on it. */
async function clocked (t: Test): Promise<{ clock: FakeClock, server: RedisServer, keys: KeyBuilder, redis: RedisClient, writer: LeaderboardWriter }> {
  const clock = FakeClock.create(t)
  clock.set(day21 - 3_600_000)
  const server = await fakeClockRedis(t, clock)
  const keys = new KeyBuilder('dc')
  const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 10_000 })
  t.teardown(() => { redis.disconnect() })
  return { clock, server, keys, redis, writer: new LeaderboardWriter(redis, keys, { clock: new RedisClock() }) }
}

t.test('the change records\' string grows by at most 1 MB a call (2 MB the first), and ends allocated as if sized at once', async (t) => {
  const { redis, raw, keys } = await redisFixture(t, 'dc')
  const k = keys.guild(GUILD)
  const day = '2026-11-21'
  const changesDay = keys.histChanges(GUILD, day)
  const lease = { lease: k.histLease, token: 'closer', leaseMs: 60_000 }
  await raw.set(k.histLease, 'closer')
  // 400,000 touched members by history index: 5,200,000 bytes of records.
  const N = 400_000
  for (let from = 0; from < N; from += 10_000) {
    await raw.zadd(k.histOrder, ...Array.from({ length: 10_000 }, (_, i) => [from + i, boardMember(String(100_000 + from + i))]).flat())
  }
  const final = 13 * N
  const lengths: number[] = []
  const statuses = new Set<unknown>()
  for (let first = 0; ; first += 5_000) {
    const reply = await scripts.closeDayStep(redis, 'closeDayChanges', {
      ...lease, order: k.histOrder, day: keys.day(GUILD, day), dayGains: keys.dayGains(GUILD, day), dayStart: keys.dayStart(GUILD, day), changesDay, fresh: k.histFresh, first, count: 5_000
    })
    statuses.add(reply[0])
    lengths.push(await raw.strlen(changesDay))
    if (Number(reply[1]) < 5_000) break
  }
  t.same([...statuses], [CloseDayStatus.done])
  const grown = lengths.map((length, i) => length - (lengths[i - 1] ?? 0))
  t.ok((grown[0] ?? 0) <= 2 * MB, `the first call: ${grown[0]} bytes`)
  t.same(grown.slice(1).filter((bytes) => bytes > MB), [], 'every later call: 1 MB at most')
  t.equal(lengths.at(-1), final, 'a record for each member')
  const records = await raw.getBuffer(changesDay) ?? Buffer.alloc(0)
  t.same([0, 1, N - 1].map((i) => records.readUIntBE(13 * i, 3)), [0, 1, N - 1], 'in order of history index')
  await raw.setrange('sized-at-once', final - 1, '\0')
  const [used, atOnce] = await Promise.all([raw.memory('USAGE', changesDay, 'SAMPLES', 0), raw.memory('USAGE', 'sized-at-once', 'SAMPLES', 0)])
  t.ok(Number(used) <= Number(atOnce) + 64, `${String(used)} bytes of memory, ${String(atOnce)} for the same length sized at once`)
})

t.test('a step\'s calls read as many members as callMs holds at its lowest recent cost per member (at least 16), a quarter more than the last at most (up to chunk); the close is the same', async (t) => {
  const { clock, server, keys, redis, writer } = await clocked(t)
  const guilds = ['1400000000000000002', '1400000000000000003']
  const N = 3000
  for (const guildId of guilds) {
    await writer.configureGuild(guildId, { season: { every: 'none', timezone: 'UTC' } })
    await writer.awardXp({ guildId, userId: '1', xp: 1 })
  }
  clock.set(day21 + 1000)
  for (const guildId of guilds) {
    await writer.bulkSetMembers(guildId, Array.from({ length: N }, (_, i) => ({ userId: String(10_000 + i), xp: (i * 7919) % 50_000 })))
    await writer.awardMany(guildId, Array.from({ length: N / 3 }, (_, i) => ({ userId: String(10_000 + 3 * i), xp: 1 + (i % 97) })))
  }
  clock.set(day21 + 86_400_000 + 1000)

  // Each ranks call's count (its last argument), by server: the call (the close's one with 11 keys) names its
  // day's ranks as its fifth key, as EVALSHA and as EVAL (a script's first call on a connection).
  const counts = new Map<string, number[]>()
  const [slow, quick] = guilds as [string, string]
  await monitored(server.url, (args) => {
    const command = args[0]?.toLowerCase()
    if ((command !== 'eval' && command !== 'evalsha') || args[2] !== '11') return
    const guild = guilds.find((g) => args[7] === keys.histRanks(g, '2026-11-21'))
    if (guild !== undefined) counts.set(guild, [...(counts.get(guild) ?? []), Number(args.at(-1))])
  }, async () => {
    t.same(await new DayCloser(redis, keys, { callMs: 0 }).closeDue(slow), ['2026-11-21'])
    t.same(await new DayCloser(redis, keys, { callMs: 1e9, chunk: 500 }).closeDue(quick), ['2026-11-21'])
  })
  const slowCounts = counts.get(slow) ?? []
  t.same(slowCounts.slice(0, 3), [250, 16, 16], 'no member fits in 0 ms: 16 a call')
  t.equal(slowCounts.length, 1 + Math.ceil((N + 1 - 250 + 1) / 16), 'to the end')
  t.same(counts.get(quick), [250, 313, 392, 490, 500, 500, 500, 500], 'every member fits in 1e9 ms: a quarter more each call, up to 500')

  const [a, b] = [keys.guild(slow), keys.guild(quick)]
  t.same(await redis.getBuffer(a.histRanksLatest), await redis.getBuffer(b.histRanksLatest), 'the same ranks')
  t.same(await redis.getBuffer(keys.histChanges(slow, '2026-11-21')), await redis.getBuffer(keys.histChanges(quick, '2026-11-21')), 'the same change records')
  t.same(await redis.hget(a.histStats, '2026-11-21'), await redis.hget(b.histStats, '2026-11-21'), 'the same stats')
})

t.test('a day that touched members with a history index and members given theirs by its close: one change record each, in index order, with its XP at the day\'s start and its gain', async (t) => {
  const { clock, server, keys, redis, writer } = await clocked(t)
  const award = async (userId: string, xp: number): Promise<unknown> => await writer.awardXp({ guildId: GUILD, userId, xp })
  await writer.configureGuild(GUILD, { season: { every: 'none', timezone: 'UTC' } })
  await award('1', 1)
  clock.set(day21 + 1000)
  // The 21st: 1,000 members, each given its index by the 21st's close (a day-start hash past the
  // size Redis keeps as a listpack, which HSCAN reads whole).
  await writer.bulkSetMembers(GUILD, Array.from({ length: 1000 }, (_, i) => ({ userId: String(100 + i), xp: 1000 + 10 * i })))
  t.equal(await redis.object('ENCODING', keys.dayStart(GUILD, '2026-11-21')), 'hashtable')
  // Four of them gain; one of those is hidden before the day ends, and one removed after it
  // ended: the day's activity is the three on the visible board at its end that gained.
  const gains21 = new Map([['100', 5], ['101', 6], ['102', 7], ['103', 8]])
  for (const [userId, xp] of gains21) await award(userId, xp)
  await writer.setVisibility({ guildId: GUILD, userId: '103', visible: false, reason: 'opted_out' })
  clock.set(day21 + 86_400_000 + 1000)
  await writer.removeMember({ guildId: GUILD, userId: '102' })
  const closer = new DayCloser(redis, keys, { chunk: 50 })
  let [orderWrites, changesCalls, stagedSets] = [0, 0, 0]
  /**
   * Closes `day`, and counts its touched step's calls (the close's script with 8 keys whose second
   * is the day's day-start hash); `orderWrites` counts the commands (a script's too) that write the
   * close's order set, `changesCalls` the changes step's calls (7 keys: the order set, then the
   * day's change records sixth), `stagedSets` the SETs of change records written whole.
   */
  const touchedCalls = async (day: string): Promise<number> => {
    let calls = 0
    ;[orderWrites, changesCalls, stagedSets] = [0, 0, 0]
    await monitored(server.url, (args) => {
      const command = args[0]?.toLowerCase()
      const script = command === 'eval' || command === 'evalsha'
      if (script && args[2] === '8' && args[4] === keys.dayStart(GUILD, day)) calls++
      if (script && args[2] === '7' && args[4] === keys.guild(GUILD).histOrder && args[8] === keys.histChanges(GUILD, day)) changesCalls++
      if (command === 'set' && args[1]?.startsWith(`${keys.guild(GUILD).hist}:changes-staging:`) === true) stagedSets++
      if (command === 'zadd' && args[1] === keys.guild(GUILD).histOrder) orderWrites++
    }, async () => {
      t.same(await closer.closeDue(GUILD), [day])
    })
    return calls
  }
  // No member had a history index before the first close: its ranks step gives every member on
  // the visible board theirs and keeps the records of those the day touched, so the touched step
  // has nothing to add (not the hidden member, nor the removed one), and says so at once; nothing
  // goes into the order set.
  t.equal(await touchedCalls('2026-11-21'), 1, 'the first close: one touched call')
  t.equal(orderWrites, 0, 'the first close writes no order set')
  // Its change records are all the ranks step's: written whole, with one SET, and renamed into
  // place, rather than copied into the day's string a chunk a call.
  t.same([stagedSets, changesCalls], [1, 0], 'the first close writes its change records with one SET, and no changes step')
  t.same(await redis.keys(`${keys.guild(GUILD).hist}:changes-staging:*`), [], 'and its staging key is gone')
  const [active21, gained21] = (await redis.hget(keys.guild(GUILD).histStats, '2026-11-21'))?.split(':').slice(2).map(Number) ?? []
  t.same([active21, gained21], [3, 5 + 6 + 7], 'the 21st\'s activity: the members on its visible board at its end that gained')
  const records21 = await redis.hgetall(keys.guild(GUILD).members)
  const changes21 = await redis.getBuffer(keys.histChanges(GUILD, '2026-11-21')) ?? Buffer.alloc(0)
  t.equal(changes21.length, 13 * 998, 'a change record for each member the 21st touched that has an index: not the hidden one, nor the removed one')
  const index100 = Number((records21[boardMember('100')] ?? '').split('\x1f')[1])
  const at = changes21.findIndex((_, i) => i % 13 === 0 && changes21.readUIntBE(i, 3) === index100)
  t.same([changes21.readUIntBE(at + 3, 5), changes21.readUIntBE(at + 8, 5)], [2 ** 40 - 1, 5], 'its XP at the day\'s start (none: new that day) and its gain')
  // The 22nd: five of them gain, one is set, and 30 new members come (a few a chunk, both kinds in the chunks).
  const olds = new Map([['105', 7], ['110', 0], ['120', 3], ['131', 9], ['139', 2]])
  for (const [userId, xp] of olds) if (xp > 0) await award(userId, xp)
  await writer.setXp({ guildId: GUILD, userId: '110', xp: 5 })
  const news = Array.from({ length: 30 }, (_, i) => [String(5000 + i), 1 + i * 200] as const)
  for (const [userId, xp] of news) await award(userId, xp)
  clock.set(day21 + 2 * 86_400_000 + 1000)
  // The touched step must walk this day's members with an index: the change records below hold
  // them. The ones given theirs by this close go into the order set with the others.
  await touchedCalls('2026-11-22')
  t.ok(orderWrites > 0, 'a later close writes its order set')
  t.ok(changesCalls > 0 && stagedSets === 0, 'and its change records by the changes step')

  const records = await redis.hgetall(keys.guild(GUILD).members)
  const indexOf = (userId: string): number => Number((records[boardMember(userId)] ?? '').split('\x1f')[1])
  const changes = await redis.getBuffer(keys.histChanges(GUILD, '2026-11-22')) ?? Buffer.alloc(0)
  const found: Array<[number, number, number]> = []
  for (let at = 0; at < changes.length; at += 13) found.push([changes.readUIntBE(at, 3), changes.readUIntBE(at + 3, 5), changes.readUIntBE(at + 8, 5)])
  const expected: Array<[number, number, number]> = [
    ...[...olds].map(([userId, xp]): [number, number, number] => [indexOf(userId), 1000 + 10 * (Number(userId) - 100), xp]),
    ...news.map(([userId, xp]): [number, number, number] => [indexOf(userId), 2 ** 40 - 1, xp])
  ].sort((a, b) => a[0] - b[0])
  t.same(found, expected)
  t.ok(news.every(([userId]) => indexOf(userId) > indexOf('139')), 'the new members\' indexes follow the others\'')
  t.equal(await redis.exists(keys.guild(GUILD).histFresh, keys.guild(GUILD).histOrder), 0, 'the close\'s own keys are gone')
  const [stats] = (await redis.hget(keys.guild(GUILD).histStats, '2026-11-22'))?.split(':').slice(2) ?? []
  t.equal(Number(stats), 4 + 30, 'active: the members that gained, old and new')
})
