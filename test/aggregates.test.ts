// The aggregates stay exact under concurrent writers: thousands of interleaved writes from
// several connections, then the stats hash against a full recomputation from the board. Once on
// a single redis-server, once on a 3-master cluster with two servers in different slots (a
// script that strayed outside its server's hash tag would fail there with CROSSSLOT).
import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { RedisCluster, RedisServer } from './helpers/redis-server.js'
import { Random } from '../src/random.js'
import { createRedis, type RedisClient } from '../src/redis/client.js'
import { KeyBuilder, userIdFromBoardMember } from '../src/redis/keys.js'
import { parseRecord } from '../src/redis/records.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { CURVES, levelForXp, MAX_XP } from '../src/levels/curves.js'
import { MAX_AWARD } from '../src/validation.js'
import { DailyClaimRefusedError, XpLimitError } from '../src/errors.js'

const CONNECTIONS = 4
const MEMBERS = 300
// Members that only ever claim their daily (ids past MEMBERS' own): each is recorded at 0 XP
// whatever order the writers' other writes reach Redis in. The random members' final XP depends
// on that order (four connections, a refused call sent again later), and a run could leave none
// of them at 0, which the aggregates must also count right.
const CLAIMERS = 20
const OPERATIONS = 4000
// Thousands of writes are in flight at once: on a loaded machine the last of them are answered
// seconds after they were made, which is queueing, not an outage (on a 3-master cluster at a
// load average of 30, over 120 s). The writer's default 10 s for an unknown outcome would reject
// them; this test pins exact aggregates, not a deadline: the longest the writer allows.
const WRITER_OPTIONS = { settleTimeoutMs: 3_600_000 }
const keys = new KeyBuilder('agg')

type Outcome = 'award' | 'set' | 'remove' | 'removeMissing' | 'claim' | 'claimRefused' | 'configure' |
  'username' | 'usernameMissing' | 'xpLimit'

/** One random write; resolves to what happened. Only the refusals the rules allow are caught. */
async function randomWrite (writer: LeaderboardWriter, guildId: string, random: Random): Promise<Outcome> {
  const userId = String(random.int(1, MEMBERS) * 7919) // ids of 4 to 7 digits
  const roll = random.next()
  try {
    if (roll < 0.38) {
      const xp = random.next() < 0.02 ? MAX_AWARD : random.int(1, 3000)
      await writer.awardXp(random.next() < 0.3 ? { guildId, userId, xp, username: `user ${userId}` } : { guildId, userId, xp })
      return 'award'
    }
    if (roll < 0.58) {
      const kind = random.next()
      const xp = kind < 0.12 ? 0 : kind < 0.7 ? random.int(1, 200_000) : kind < 0.97 ? random.int(0, 5_000_000_000) : MAX_XP - random.int(0, 5000)
      await writer.setXp({ guildId, userId, xp })
      return 'set'
    }
    if (roll < 0.68) return await writer.removeMember({ guildId, userId }) ? 'remove' : 'removeMissing'
    if (roll < 0.85) {
      // Dates spread over a few weeks, in random order: some extend a streak, many are refused.
      const at = new Date(Date.UTC(2024, 0, 1) + random.int(0, 30 * 86_400_000))
      const claimer = random.next() < 0.2 ? String((MEMBERS + random.int(1, CLAIMERS)) * 7919) : userId
      await writer.claimDaily({ guildId, userId: claimer, at })
      return 'claim'
    }
    if (roll < 0.9) {
      await writer.configureGuild(guildId, random.next() < 0.5
        ? { curve: random.pick(CURVES) }
        : { multiplier: random.pick([0.01, 0.29, '0.5', 1, 1.15, '2.55', 10, 100]) })
      return 'configure'
    }
    return await writer.setUsername({ guildId, userId, username: `name ${random.int(0, 99)}` }) ? 'username' : 'usernameMissing'
  } catch (err) {
    if (err instanceof DailyClaimRefusedError) return 'claimRefused'
    if (err instanceof XpLimitError) return 'xpLimit'
    throw err
  }
}

/** OPERATIONS writes in random order, spread over the writers, all in flight at once. */
async function runWorkload (writers: LeaderboardWriter[], guildId: string, seed: number): Promise<Record<string, number>> {
  const random = new Random(seed)
  const outcomes = await Promise.all(Array.from({ length: OPERATIONS }, async (_, i) =>
    await randomWrite(writers[i % writers.length] as LeaderboardWriter, guildId, random)))
  const counts: Record<string, number> = {}
  for (const o of outcomes) counts[o] = (counts[o] ?? 0) + 1
  return counts
}

/** The stats hash against a full scan of the board, and every per-member field against the board. */
async function checkGuild (t: Test, reader: RedisClient, guildId: string, counts: Record<string, number>): Promise<void> {
  const k = keys.guild(guildId)
  const flat = await reader.zrange(k.board, 0, '-1', 'WITHSCORES')
  const board = new Map<string, number>()
  for (let i = 0; i < flat.length; i += 2) board.set(userIdFromBoardMember(flat[i] as string), Number(flat[i + 1]))
  const xps = [...board.values()]

  // The workload must have left something worth checking, or the comparison proves nothing.
  t.ok(board.size > MEMBERS / 3, `${board.size} members on the board`)
  t.ok(xps.some((x) => x === 0) && xps.filter((x) => x > 0).length > MEMBERS / 4, `members with and without XP (${xps.filter((x) => x === 0).length} at 0)`)
  for (const outcome of ['award', 'set', 'remove', 'claim', 'claimRefused', 'configure', 'username'] as const) {
    t.ok((counts[outcome] ?? 0) > 0, `some writes ended as ${outcome} (${counts[outcome] ?? 0})`)
  }

  const expected: Record<string, number> = {
    xp_total: xps.reduce((a, b) => a + b, 0),
    members_with_xp: xps.filter((x) => x > 0).length
  }
  for (const curve of CURVES) expected[`level_sum:${curve}`] = xps.reduce((a, x) => a + levelForXp(curve, x), 0)
  const stats = await reader.hgetall(k.stats)
  const actual = Object.fromEntries(Object.keys(expected).map((field) => [field, Number(stats[field] ?? 0)]))
  t.same(actual, expected, 'the stats hash equals a full recomputation from the board')
  t.ok(Number.isSafeInteger(expected.xp_total), 'the XP total is an exact integer')

  const records = await reader.hgetall(k.members)
  const onBoard = new Set(flat.filter((_, i) => i % 2 === 0))
  const strays = Object.keys(records).filter((member) => !onBoard.has(member))
  t.same(strays, [], `${k.members} holds only members`)
  // A record's streak and claim date are written together: every streak has its claim date and back.
  const halfClaims = Object.entries(records).filter(([, record]) => {
    const { streak, lastClaim } = parseRecord(record)
    return !/^\d*:\d*:/.test(record) || (lastClaim === null) !== (streak === 0) || (lastClaim !== null && streak < 1)
  })
  t.same(halfClaims, [], 'every streak has its claim date and back')
  t.ok(Object.values(records).some((record) => parseRecord(record).lastClaim !== null), 'some members hold a claim')
}

t.test('single redis-server: aggregates stay exact under thousands of concurrent writes from 4 connections', async (t) => {
  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  const clients = Array.from({ length: CONNECTIONS }, () => createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 20_000 }))
  t.teardown(() => { for (const c of clients) c.disconnect() })
  const reader = new Redis(server.url)
  t.teardown(() => { reader.disconnect() })
  const writers = clients.map((c) => new LeaderboardWriter(c, keys, WRITER_OPTIONS))

  const guildId = '424242424242424242'
  const counts = await runWorkload(writers, guildId, 1)
  t.comment(JSON.stringify(counts))
  await checkGuild(t, reader, guildId, counts)

  // A second round on the same data, after all the first round's writes landed.
  const again = await runWorkload(writers, guildId, 2)
  await checkGuild(t, reader, guildId, again)
})

t.test('3-master cluster: two servers in different slots on different nodes, each with exact aggregates', async (t) => {
  const cluster = await RedisCluster.start(3)
  t.teardown(async () => { await cluster.close() })
  const clients = Array.from({ length: CONNECTIONS }, () =>
    createRedis({ url: cluster.url, cluster: true, offlineQueue: true, commandTimeoutMs: 20_000 }))
  t.teardown(() => { for (const c of clients) c.disconnect() })
  const reader = createRedis({ url: cluster.url, cluster: true, offlineQueue: true, commandTimeoutMs: 20_000 })
  t.teardown(() => { reader.disconnect() })
  const nodes = cluster.nodes.map((n) => new Redis(n.url))
  t.teardown(() => { for (const n of nodes) n.disconnect() })

  // Which node serves a slot, from CLUSTER SLOTS: [[start, end, [host, port, id]], ...].
  const first = nodes[0] as Redis
  const ranges = await first.cluster('SLOTS')
  const owner = (slot: number): number => {
    const port = ranges.find(([start, end]) => slot >= start && slot <= end)?.[2]?.[1]
    if (port === undefined) throw new Error(`no node serves slot ${slot}`)
    return cluster.nodes.findIndex((n) => n.port === Number(port))
  }
  const placed: Array<{ guildId: string, slot: number, node: number }> = []
  for (let candidate = 1; placed.length < 2 && candidate < 100; candidate++) {
    const guildId = String(candidate)
    const slot = await first.cluster('KEYSLOT', keys.guild(guildId).board) as number
    if (placed.every((p) => owner(slot) !== p.node)) placed.push({ guildId, slot, node: owner(slot) })
  }
  t.equal(placed.length, 2, `guilds ${placed.map((p) => `${p.guildId} (slot ${p.slot}, node ${p.node})`).join(', ')}`)
  const [a, b] = placed as [typeof placed[number], typeof placed[number]]
  t.not(a.slot, b.slot, 'different slots')
  t.not(a.node, b.node, 'different nodes')
  for (const p of placed) {
    for (const key of Object.values(keys.guild(p.guildId))) {
      t.equal(await first.cluster('KEYSLOT', key), p.slot, `${key} is in the guild's slot`)
    }
  }

  const writers = clients.map((c) => new LeaderboardWriter(c, keys, WRITER_OPTIONS))
  const [countsA, countsB] = await Promise.all([runWorkload(writers, a.guildId, 3), runWorkload(writers, b.guildId, 4)])
  t.comment(JSON.stringify({ [a.guildId]: countsA, [b.guildId]: countsB }))
  await checkGuild(t, reader, a.guildId, countsA)
  await checkGuild(t, reader, b.guildId, countsB)

  // The data really is where the slot says: each board on its own node.
  for (const p of placed) {
    t.equal(await (nodes[p.node] as Redis).exists(keys.guild(p.guildId).board), 1, `guild ${p.guildId}'s board is on node ${p.node}`)
  }
})
