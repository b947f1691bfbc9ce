// awardXp's awards made in one turn of the event loop go to Redis together (award-batch, each
// with its own operation id), and each caller gets exactly what an award of its own would have
// answered: its result, its roles, its refusal, its XpLimitError, its operation id to retry with.
import t from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { createRedis, type RedisClient } from '../src/redis/client.js'
import { boardMember, KeyBuilder } from '../src/redis/keys.js'
import { type AwardResult, LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { WriteOutcomeUnknownError, XpLimitError } from '../src/errors.js'
import { MAX_XP } from '../src/levels/curves.js'
import { boardOf, statsOf, storedStats } from './helpers/guild-state.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })
const redis = createRedis({ url: server.url, offlineQueue: true })
t.teardown(() => { redis.disconnect() })
const keys = new KeyBuilder('coalesce')
const writer = new LeaderboardWriter(redis, keys)

/** The award scripts Redis has run so far (as functions, or as scripts where functions are refused). */
async function scriptCalls (client: RedisClient): Promise<number> {
  const stats = await client.info('commandstats')
  return ['fcall', 'evalsha', 'eval'].reduce((sum, name) => sum + Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0), 0)
}

type Outcome = AwardResult | { error: string }
const outcome = async (award: Promise<AwardResult>): Promise<Outcome> => await award.catch((err: unknown) => ({ error: err instanceof XpLimitError ? 'XpLimitError' : String(err) }))

t.test('awards made together answer each caller as awards made one by one do, in far fewer script calls', async (t) => {
  const [G, H] = ['7200000000000000001', '7200000000000000002']
  const settings = { roleRewards: [{ level: 1, roleId: '910000000000000001' }, { level: 3, roleId: '910000000000000003' }], roleRewardsMode: 'replace' as const }
  for (const g of [G, H]) {
    await writer.configureGuild(g, settings)
    await writer.setXp({ guildId: g, userId: '9', xp: MAX_XP - 5 })
  }
  // A level-up, a jump over two rewards, the XP limit, an operation id given twice, names, and
  // many members at once: what a busy server's messages bring in one turn.
  const awards = [
    { userId: '1', xp: 150, username: 'ada' },
    { userId: '2', xp: 900, displayName: 'Bo' },
    { userId: '9', xp: 10 },
    { userId: '3', xp: 40, opId: 'msg-1' },
    { userId: '3', xp: 40, opId: 'msg-1' },
    ...Array.from({ length: 200 }, (_, i) => ({ userId: String(100 + (i % 70)), xp: 1 + (i * 7) % 60 }))
  ]
  const before = await scriptCalls(redis)
  const together = await Promise.all(awards.map(async (a) => await outcome(writer.awardXp({ guildId: G, ...a }))))
  const calls = await scriptCalls(redis) - before
  const oneByOne: Outcome[] = []
  for (const a of awards) oneByOne.push(await outcome(writer.awardXp({ guildId: H, ...a })))
  t.same(together, oneByOne, 'each caller gets what its own award answered, one by one')
  t.match(together[0], { applied: true, gained: 150, level: 1, leveledUp: true, roles: { add: ['910000000000000001'], remove: [] } })
  t.match(together[1], { level: 4, roles: { add: ['910000000000000003'], remove: [] } }, 'replace: the highest reward only')
  t.same(together[2], { error: 'XpLimitError' }, 'the XP limit throws for its caller alone')
  t.same(together[4], together[3], 'an operation id given twice: the first result, applied once')
  t.ok(calls <= 2, `${awards.length} awards in ${calls} script calls`)
  const [boardG, boardH] = [await boardOf(redis, keys.guild(G)), await boardOf(redis, keys.guild(H))]
  t.same(Object.fromEntries(boardG), Object.fromEntries(boardH), 'the same board')
  t.equal(boardG.get('3'), 40, 'the repeated operation applied once')
  t.same(await storedStats(redis, keys.guild(G)), statsOf([...boardG.values()]), 'aggregates exact')
  t.same(await storedStats(redis, keys.guild(G)), await storedStats(redis, keys.guild(H)), 'the same aggregates')
})

t.test('the rules judge awards made together in the order they were made: a second award in the cooldown is refused', async (t) => {
  const G = '7200000000000000003'
  await writer.configureGuild(G, { cooldownSeconds: 60, dailyXpCap: 100 })
  const results = await Promise.all([
    writer.awardXp({ guildId: G, userId: '1', xp: 20 }),
    writer.awardXp({ guildId: G, userId: '1', xp: 20 }),
    writer.awardXp({ guildId: G, userId: '2', xp: 150 })
  ])
  t.match(results, [
    { applied: true, gained: 20, xp: 20 },
    { applied: false, reason: 'cooldown', gained: 0, xp: 20 },
    { applied: true, reason: 'daily_cap', gained: 100, xp: 100 }
  ])
})

t.test('awards to two servers in one turn each go to their own server', async (t) => {
  const [G, H] = ['7200000000000000004', '7200000000000000005']
  const results = await Promise.all([
    writer.awardXp({ guildId: G, userId: '1', xp: 10 }),
    writer.awardXp({ guildId: H, userId: '1', xp: 20 }),
    writer.awardXp({ guildId: G, userId: '1', xp: 30 }),
    writer.awardXp({ guildId: H, userId: '2', xp: 40 })
  ])
  t.same(results.map((r) => r.xp), [10, 20, 40, 40])
  t.same(Object.fromEntries(await boardOf(redis, keys.guild(G))), { 1: 40 })
  t.same(Object.fromEntries(await boardOf(redis, keys.guild(H))), { 1: 20, 2: 40 })
})

t.test('awards made together whose call cannot be settled each reject with their own operation id; retrying each with it applies each once', async (t) => {
  const stalled = await RedisServer.start()
  t.teardown(async () => { await stalled.close() })
  const stalledRedis = createRedis({ url: stalled.url, offlineQueue: true, commandTimeoutMs: 200 })
  stalledRedis.on('error', () => {})
  t.teardown(() => { stalledRedis.disconnect() })
  const stalledWriter = new LeaderboardWriter(stalledRedis, keys, { settleTimeoutMs: 800 })
  const G = '7200000000000000006'
  await stalledWriter.awardXp({ guildId: G, userId: '1', xp: 1 }) // settings read, scripts loaded
  process.kill(stalled.pid, 'SIGSTOP')
  let resumed = false
  const resume = (): void => { if (!resumed) { resumed = true; process.kill(stalled.pid, 'SIGCONT') } }
  t.teardown(resume)
  const awards = [{ userId: '1', xp: 10 }, { userId: '2', xp: 20 }, { userId: '3', xp: 30, opId: 'mine' }]
  const failed = await Promise.all(awards.map(async (a) => await stalledWriter.awardXp({ guildId: G, ...a }).then(() => null, (err: unknown) => err)))
  resume()
  t.ok(failed.every((err) => err instanceof WriteOutcomeUnknownError), `each rejected with WriteOutcomeUnknownError (${failed.map(String).join('; ')})`)
  const opIds = failed.map((err) => (err as WriteOutcomeUnknownError).opId)
  t.equal(new Set(opIds).size, 3, 'each with an operation id of its own')
  t.equal(opIds[2], 'mine', "the caller's own id where it gave one")
  t.ok(failed.every((err) => (err as WriteOutcomeUnknownError).operation === 'awardXp'))
  // The stalled call may have been applied once Redis resumed; each retry applies its award at most once in all.
  const retried = await Promise.all(awards.map(async (a, i) => await stalledWriter.awardXp({ guildId: G, ...a, opId: opIds[i] })))
  t.same(retried.map((r) => r.gained), [10, 20, 30], 'each retry reports its award')
  t.same(retried.map((r) => r.xp), [11, 20, 30])
  const board = await boardOf(stalledRedis, keys.guild(G))
  t.same(Object.fromEntries(board), { 1: 11, 2: 20, 3: 30 }, 'applied once each')
  t.equal(Number(await stalledRedis.zscore(keys.guild(G).board, boardMember('3'))), 30)
})

t.test('writes to a server go in the order they were made: an award made before another write in the same turn is applied before it', async (t) => {
  const G = '7200000000000000007'
  const ref = { guildId: G, userId: '1' }
  const [award, previous] = await Promise.all([writer.awardXp({ ...ref, xp: 50 }), writer.setXp({ ...ref, xp: 0 })])
  t.match(award, { xp: 50 })
  t.equal(previous, 50, 'the set saw the award')
  t.equal(Number(await redis.zscore(keys.guild(G).board, boardMember('1'))), 0, 'the set, made last, holds')
  const [, again] = await Promise.all([writer.setXp({ ...ref, xp: 100 }), writer.awardXp({ ...ref, xp: 5 }), writer.awardXp({ ...ref, xp: 5 })])
  t.match(again, { xp: 105 })
  t.equal(Number(await redis.zscore(keys.guild(G).board, boardMember('1'))), 110, 'awards made after a set in the same turn come after it')
  await Promise.all([writer.awardXp({ ...ref, xp: 7 }), writer.removeMember(ref)])
  t.equal(await redis.zscore(keys.guild(G).board, boardMember('1')), null, 'a removal made after an award removes the member')
})

t.test('the order holds when the server\'s settings change under the writer and each of its writes is sent again', async (t) => {
  const G = '7200000000000000008'
  const ref = { guildId: G, userId: '1' }
  const other = createRedis({ url: server.url })
  t.teardown(() => { other.disconnect() })
  const elsewhere = new LeaderboardWriter(other, keys)
  for (let round = 0; round < 20; round++) {
    await writer.awardXp({ ...ref, xp: 1 }) // this writer's settings cached at the epoch now
    await elsewhere.configureGuild(G, { multiplier: round % 2 === 0 ? 2 : 1 })
    const calls = await scriptCalls(redis)
    const [, previous] = await Promise.all([writer.awardXp({ ...ref, xp: 50 }), writer.setXp({ ...ref, xp: 0 }), writer.awardXp({ ...ref, xp: 3 }), writer.removeMember({ guildId: G, userId: '2' }), writer.awardXp({ guildId: G, userId: '2', xp: 4 })])
    // Five writes, five calls: each refused at the old settings, then sent again.
    const sent = await scriptCalls(redis) - calls
    t.ok(sent >= 10, `round ${round}: each write was sent again (${sent} calls)`)
    t.ok(previous > 50, `round ${round}: the set saw the award made before it`)
    t.equal(Number(await redis.zscore(keys.guild(G).board, boardMember('1'))), round % 2 === 0 ? 6 : 3, `round ${round}: the award made after the set holds, over it`)
    t.equal(Number(await redis.zscore(keys.guild(G).board, boardMember('2'))), round % 2 === 0 ? 8 : 4, `round ${round}: the award made after a removal holds`)
  }
})
