// The library's awardMany (the write API's POST /awards): each award as awardXp applies it,
// many to a script call, with exact aggregates, period boards, operation ids applied once, and
// an award over the XP limit refused alone.
import t from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { createRedis } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { InvalidParameterError } from '../src/errors.js'
import { levelForXp, MAX_XP } from '../src/levels/curves.js'
import { boardOf, statsOf, storedStats } from './helpers/guild-state.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })
const redis = createRedis({ url: server.url, offlineQueue: true })
t.teardown(() => { redis.disconnect() })
const keys = new KeyBuilder('batch')
const writer = new LeaderboardWriter(redis, keys)
const reader = new LeaderboardReader(redis, keys)

t.test('a batch of 1,000 awards (four script calls) leaves exact aggregates and period boards, as awardXp one by one would', async (t) => {
  const [G, H] = ['7100000000000000001', '7100000000000000002']
  await writer.configureGuild(G, { multiplier: '1.5' })
  await writer.configureGuild(H, { multiplier: '1.5' })
  const awards = Array.from({ length: 1000 }, (_, i) => ({ userId: String(1 + (i * 37) % 300), xp: 1 + (i * 13) % 500, username: `u${i % 300}` }))
  const results = await writer.awardMany(G, awards)
  for (const a of awards) await writer.awardXp({ guildId: H, ...a })
  t.equal(results.length, 1000)
  const [boardG, boardH] = [await boardOf(redis, keys.guild(G)), await boardOf(redis, keys.guild(H))]
  t.same([...boardG.entries()].sort(), [...boardH.entries()].sort(), 'the same board')
  t.same(await storedStats(redis, keys.guild(G)), statsOf([...boardG.values()]), 'aggregates exact')
  t.same((await reader.readPage(G, 1, 100, 'week')).value, (await reader.readPage(H, 1, 100, 'week')).value, 'the same week board')
  const last = results.filter((r) => r.userId === '1').at(-1)
  t.equal(last?.xp, boardG.get('1'), 'the last result of a member holds its final XP')
})

t.test('an operation id already applied (by awardXp or an earlier batch) is not applied again', async (t) => {
  const G = '7100000000000000003'
  await writer.awardXp({ guildId: G, userId: '1', xp: 10, opId: 'msg-1' })
  const first = await writer.awardMany(G, [{ userId: '1', xp: 10, opId: 'msg-1' }, { userId: '2', xp: 20, opId: 'msg-2' }])
  const again = await writer.awardMany(G, [{ userId: '2', xp: 20, opId: 'msg-2' }])
  t.same(first.map((r) => r.xp), [10, 20])
  t.same(again.map((r) => r.xp), [20])
  t.same(Object.fromEntries(await boardOf(redis, keys.guild(G))), { 1: 10, 2: 20 })
})

t.test('an award whose operation id was applied before answers its first result marked replayed: a bot does not announce a level-up twice', async (t) => {
  const G = '7100000000000000007'
  await writer.setXp({ guildId: G, userId: '9', xp: MAX_XP - 5 })
  const first = await writer.awardMany(G, [{ userId: '1', xp: 150, opId: 'msg-10' }, { userId: '9', xp: 10, opId: 'msg-11' }])
  t.same(first, [
    { userId: '1', xp: 150, gained: 150, level: 1, leveledUp: true, applied: true },
    { userId: '9', xp: MAX_XP - 5, gained: 0, level: levelForXp('mee6', MAX_XP - 5), leveledUp: false, applied: false, reason: 'xp_limit', refused: 'xp_limit' }
  ], 'a first result carries no mark')
  const again = await writer.awardMany(G, [{ userId: '1', xp: 150, opId: 'msg-10' }, { userId: '2', xp: 5, opId: 'msg-12' }, { userId: '9', xp: 10, opId: 'msg-11' }])
  t.same(again, [
    { ...first[0], replayed: true },
    { userId: '2', xp: 5, gained: 5, level: 0, leveledUp: false, applied: true },
    { ...first[1], replayed: true }
  ], 'the first results, marked; the new award unmarked')
  t.same(Object.fromEntries(await boardOf(redis, keys.guild(G))), { 1: 150, 2: 5, 9: MAX_XP - 5 }, 'applied once')
  // The same call resent (its own operation id): its first results as they were.
  const call = [{ userId: '1', xp: 150, opId: 'msg-10' }, { userId: '3', xp: 1 }]
  const once = await writer.awardMany(G, call, { opId: 'call-1' })
  t.same(await writer.awardMany(G, call, { opId: 'call-1' }), once)
  t.same(once.map((r) => r.replayed ?? false), [true, false])
})

t.test('an award past the XP limit is refused alone; the others are applied', async (t) => {
  const G = '7100000000000000004'
  await writer.setXp({ guildId: G, userId: '1', xp: MAX_XP - 5 })
  const results = await writer.awardMany(G, [{ userId: '2', xp: 5 }, { userId: '1', xp: 10 }, { userId: '3', xp: 7 }])
  t.same(results.map((r) => r.refused ?? 'ok'), ['ok', 'xp_limit', 'ok'])
  t.equal(Number(await redis.zscore(keys.guild(G).board, '99999999999999999998')), MAX_XP - 5, 'unchanged')
})

t.test('one bad award refuses the batch, naming its index, before anything is sent', async (t) => {
  const G = '7100000000000000005'
  for (const [bad, message] of [
    [{ userId: '01', xp: 5 }, /awards\[1\]: user_id/],
    [{ userId: '2', xp: 0 }, /awards\[1\]: xp/],
    [{ userId: '2', xp: 5, username: '' }, /awards\[1\]: username/],
    [{ userId: '2', xp: 5, opId: 'bad id' }, /awards\[1\]: opId/]
  ] as const) {
    await t.rejects(writer.awardMany(G, [{ userId: '1', xp: 5 }, bad as never]), { constructor: InvalidParameterError, message })
  }
  await t.rejects(writer.awardMany(G, []), InvalidParameterError)
  t.equal(await redis.exists(keys.guild(G).board), 0)
})

t.test('a call sent again with the same opId and awards is applied once and answers its first results', async (t) => {
  const G = '7100000000000000006'
  const awards = Array.from({ length: 600 }, (_, i) => ({ userId: String(1 + i % 50), xp: 3 }))
  const first = await writer.awardMany(G, awards, { opId: 'batch-1' })
  const again = await writer.awardMany(G, awards, { opId: 'batch-1' })
  t.same(again, first)
  t.equal(Math.max(...(await boardOf(redis, keys.guild(G))).values()), 36, 'each member awarded 12 times, not 24')
  await t.rejects(writer.awardMany(G, awards, { opId: 'x'.repeat(59) }), InvalidParameterError)
})
