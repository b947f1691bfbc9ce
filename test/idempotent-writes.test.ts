// Writes are applied once, whatever the connection does: ioredis resends the commands a dropped
// connection left unanswered, and a bot may retry a call with the same operation id. Under
// connection kills from a second client, the XP on the board equals the sum of the gains the
// writers were told of, every claim and removal reports success once, and the aggregates stay
// exact.
import t from 'tap'
import { Redis } from 'ioredis'
import { RedisServer } from './helpers/redis-server.js'
import { createRedis, type RedisClient, redisNow } from '../src/redis/client.js'
import { isoWeek } from '../src/periods/periods.js'
import { boardMember, KeyBuilder } from '../src/redis/keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { InvalidParameterError } from '../src/errors.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const GUILD = '1300000000000000001'
const WRITERS = 4
const AWARDS_PER_WRITER = 600
const IN_FLIGHT = 16
const MEMBERS = 50

function writerClient (): RedisClient {
  const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 10_000 })
  redis.on('error', () => {}) // the kills are the point
  return redis
}

/** Calls `fn` until it resolves (a bot retrying with the same operation id); counts the retries. */
async function untilDone<T> (fn: () => Promise<T>, retries: { count: number }): Promise<T> {
  for (;;) {
    try {
      return await fn()
    } catch (err) {
      if (err instanceof InvalidParameterError) throw err
      retries.count++
    }
  }
}

/** Kills every normal client connection but its own, every `ms`, until stopped. */
function killer (ms: number): { stop: () => Promise<number> } {
  const admin = new Redis(server.url)
  let kills = 0
  const state = { running: true }
  const loop = (async () => {
    while (state.running) {
      await new Promise((resolve) => setTimeout(resolve, ms))
      kills += Number(await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes').catch(() => 0))
    }
  })()
  return {
    stop: async () => {
      state.running = false
      await loop
      admin.disconnect()
      return kills
    }
  }
}

t.test('awards, claims and removals under connection kills are applied once; the board holds exactly the acknowledged gains', async (t) => {
  const keys = new KeyBuilder(`idem${process.pid}`)
  const clients = Array.from({ length: WRITERS }, writerClient)
  t.teardown(() => { for (const c of clients) c.disconnect() })
  const writers = clients.map((c) => new LeaderboardWriter(c, keys))
  const acknowledged = new Map<string, number>()
  const retries = { count: 0 }
  const kill = killer(40)

  await Promise.all(writers.map(async (writer, w) => {
    let next = 0
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < AWARDS_PER_WRITER) {
        const i = next++
        const userId = String(1 + ((i * 7 + w * 13) % MEMBERS))
        const opId = `w${w}-award-${i}` // as a bot would pass the message id
        const { gained } = await untilDone(async () => await writer.awardXp({ guildId: GUILD, userId, xp: 1 + (i % 50), opId }), retries)
        acknowledged.set(userId, (acknowledged.get(userId) ?? 0) + gained)
      }
    }))
  }))
  // Every member claims once and the first ten leave; each call must report success once.
  const claims = await Promise.all(Array.from({ length: MEMBERS }, async (_, i) =>
    await untilDone(async () => await (writers[i % WRITERS] as LeaderboardWriter).claimDaily({ guildId: GUILD, userId: String(i + 1), opId: `claim-${i}` }), retries)))
  const removals = await Promise.all(Array.from({ length: 10 }, async (_, i) =>
    await untilDone(async () => await (writers[i % WRITERS] as LeaderboardWriter).removeMember({ guildId: GUILD, userId: String(i + 1), opId: `leave-${i}` }), retries)))
  const kills = await kill.stop()
  t.ok(kills >= 5, `${kills} connections killed during the run (${retries.count} calls retried by the test)`)

  t.ok(claims.every((c) => c.streak === 1), 'every claim succeeded once: none came back as already claimed')
  t.ok(removals.every((removed) => removed), 'every removal succeeded once: none came back as not a member')

  const check = new Redis(server.url)
  t.teardown(() => { check.disconnect() })
  const k = keys.guild(GUILD)
  const board = await check.zrange(k.board, 0, -1, 'WITHSCORES')
  const onBoard = new Map<string, number>()
  for (let i = 0; i < board.length; i += 2) onBoard.set(String(board[i]), Number(board[i + 1]))
  let expectedTotal = 0
  const wrong: string[] = []
  for (const [userId, gained] of acknowledged) {
    if (Number(userId) <= 10) continue // removed
    expectedTotal += gained
    if (onBoard.get(boardMember(userId)) !== gained) wrong.push(`${userId}: board ${onBoard.get(boardMember(userId))}, acknowledged ${gained}`)
  }
  t.same(wrong, [], 'each member holds exactly the XP its acknowledged awards gave')
  t.equal(onBoard.size, MEMBERS - 10)
  t.equal(Number(await check.hget(k.stats, 'xp_total')), expectedTotal, 'xp_total equals the acknowledged gains')
  // The period boards are written by the same script runs: they hold the same gains, once.
  const week = keys.period(GUILD, isoWeek(await redisNow(check as unknown as RedisClient)).label)
  const weekBoard = await check.zrange(week, 0, -1, 'WITHSCORES')
  const inWeek = new Map<string, number>()
  for (let i = 0; i < weekBoard.length; i += 2) inWeek.set(String(weekBoard[i]), Number(weekBoard[i + 1]))
  const wrongWeek = [...acknowledged].filter(([userId, gained]) => inWeek.get(boardMember(userId)) !== (Number(userId) <= 10 ? undefined : gained))
  t.same(wrongWeek, [], "this week's board holds exactly the acknowledged gains; removed members are off it")
})

t.test('an operation id is remembered: a retry returns the first result and changes nothing, for every kind of write', async (t) => {
  const keys = new KeyBuilder(`idem2${process.pid}`)
  const redis = writerClient()
  t.teardown(() => { redis.disconnect() })
  const writer = new LeaderboardWriter(redis, keys)
  const ref = { guildId: GUILD, userId: '42' }
  const award = await writer.awardXp({ ...ref, xp: 30, opId: 'a' })
  t.same(await writer.awardXp({ ...ref, xp: 30, opId: 'a' }), award)
  t.same(await writer.awardXp({ ...ref, xp: 999, opId: 'a' }), award, 'the id decides, not the arguments')
  t.equal(await writer.setXp({ ...ref, xp: 500, opId: 's' }), 30)
  t.equal(await writer.setXp({ ...ref, xp: 500, opId: 's' }), 30, 'the previous XP as first reported')
  const claim = await writer.claimDaily({ ...ref, opId: 'c' })
  t.same(await writer.claimDaily({ ...ref, opId: 'c' }), claim)
  t.equal(await writer.setUsername({ ...ref, username: 'Ada', opId: 'n' }), true)
  t.equal(await writer.removeMember({ ...ref, opId: 'r' }), true)
  t.equal(await writer.removeMember({ ...ref, opId: 'r' }), true)
  t.equal(await writer.removeMember(ref), false, 'a new operation sees the member gone')
  t.equal(await writer.setUsername({ ...ref, username: 'Ada', opId: 'n' }), true, 'the rename as first reported')
  t.equal(await redis.zcard(keys.guild(GUILD).board), 0)
  await t.rejects(writer.awardXp({ ...ref, xp: 1, opId: 'has space' }), InvalidParameterError)
  await t.rejects(writer.awardXp({ ...ref, xp: 1, opId: 'x'.repeat(65) }), InvalidParameterError)
})

t.test('operation ids cost a bounded amount: one small hash per time bucket, with a TTL of two buckets', async (t) => {
  const keys = new KeyBuilder(`idem3${process.pid}`)
  const redis = writerClient()
  t.teardown(() => { redis.disconnect() })
  const writer = new LeaderboardWriter(redis, keys, { operationWindowMs: 60_000 })
  for (let i = 0; i < 200; i++) await writer.awardXp({ guildId: GUILD, userId: String(i + 1), xp: 5 })
  const buckets = await redis.keys(`${keys.prefix}:{${GUILD}}:ops:*`)
  t.ok(buckets.length >= 1 && buckets.length <= 2, `${buckets.length} bucket hashes`)
  let entries = 0
  for (const bucket of buckets) {
    entries += await redis.hlen(bucket)
    const ttl = await redis.pttl(bucket)
    t.ok(ttl > 0 && ttl <= 2 * 60_000 + 60_000, `TTL ${ttl} ms`)
  }
  t.equal(entries, 200, 'one entry per operation')
})
