// The same service on a 3-master Redis Cluster: a server's keys share one slot, an API key's
// record and rate window share another, and every read, write and limit works across nodes.
import t from 'tap'
import { RedisCluster } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import type { Cluster } from 'ioredis'
import { pruneLibraries } from '../src/redis/functions.js'
import { COOLDOWN_HOUR_MS } from '../src/writer/calendar-writes.js'
import { DayCloser } from '../src/history/day-close.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'

const cluster = await RedisCluster.start(3)
t.teardown(async () => { await cluster.close() })

t.test('the API reads, authenticates and rate-limits on a cluster', async (t) => {
  const { app, writer, apiKeys, redis, keys } = await buildTestApp(t, cluster.url, {
    redisCluster: true, planLimits: { free: 3, starter: 1000, professional: 10000 }
  })
  // Guilds chosen so that their slots land on different masters.
  const guilds = ['1100000000000000001', '1100000000000000002', '1100000000000000003']
  const nodes = new Set<string>()
  for (const guildId of guilds) {
    await writer.configureGuild(guildId, { curve: 'linear' })
    await writer.awardXp({ guildId, userId: '10', xp: 300, username: 'Ada' })
    await writer.awardXp({ guildId, userId: '9', xp: 300 })
    await writer.claimDaily({ guildId, userId: '11' })
    const slot = await redis.cluster('KEYSLOT', keys.guild(guildId).board) as number
    const shards = await redis.cluster('SLOTS')
    const owner = shards.find(([from, to]) => slot >= from && slot <= to)
    nodes.add(String(owner?.[2]?.[1]))
  }
  t.ok(nodes.size >= 2, `the guilds live on ${nodes.size} different masters`)

  for (const guildId of guilds) {
    const { key } = await apiKeys.create({ guildId, plan: 'free' })
    const headers = { 'x-api-key': key }
    const board = await app.inject({ url: `/api/v1/servers/${guildId}/leaderboard`, headers })
    t.equal(board.statusCode, 200)
    t.same(board.json(), {
      data: [
        { rank: 1, user_id: '9', username: '9', display_name: null, avatar_url: null, level: 2, xp: 300, level_progress: { xp: 50, required: 275 }, rank_change: null },
        { rank: 2, user_id: '10', username: 'Ada', display_name: null, avatar_url: null, level: 2, xp: 300, level_progress: { xp: 50, required: 275 }, rank_change: null },
        { rank: 3, user_id: '11', username: '11', display_name: null, avatar_url: null, level: 0, xp: 0, level_progress: { xp: 0, required: 75 }, rank_change: null }
      ],
      total: 3,
      page: 1
    })
    const member = await app.inject({ url: `/api/v1/servers/${guildId}/members/11`, headers })
    t.match(member.json(), { rank: 3, daily_streak: 1 })
    const stats = await app.inject({ url: `/api/v1/servers/${guildId}/stats`, headers })
    t.same(stats.json(), { total_members: 2, total_xp: 600, average_level: 2, xp_curve: 'linear', xp_multiplier: 1, name: null, icon_url: null })
    t.equal(stats.headers['x-ratelimit-remaining'], '0')
    const refused = await app.inject({ url: `/api/v1/servers/${guildId}/stats`, headers })
    t.equal(refused.statusCode, 429, 'the per-key limit holds on the cluster')
    t.same((await apiKeys.list(guildId)).map((k) => k.guildId), [guildId])
  }
})

t.test('pruning the libraries of older builds deletes them on every primary, and awards go on on each', async (t) => {
  const { writer, redis } = await buildTestApp(t, cluster.url, { redisCluster: true })
  const older = 'leaderboard_00000000000000bb'
  const masters = (redis as Cluster).nodes('master')
  for (const node of masters) await node.call('FUNCTION', 'LOAD', 'REPLACE', `#!lua name=${older}\nredis.register_function('awardXp_00000000000000bb', function () return 1 end)`)
  const pruned = await pruneLibraries(redis)
  t.equal(pruned.length, 3, 'every primary')
  t.ok(pruned.every((p) => p.deleted.length === 1 && p.deleted[0] === older), JSON.stringify(pruned))
  for (const node of masters) {
    const names = ((await node.call('FUNCTION', 'LIST')) as string[][]).map((entry) => entry[1])
    t.notOk(names.includes(older), `gone from ${node.options.port}`)
  }
  for (const guildId of ['1100000000000000001', '1100000000000000002', '1100000000000000003']) {
    t.match(await writer.awardXp({ guildId, userId: '77', xp: 5 }), { gained: 5 })
  }
})

t.test('cooldowns on a cluster: the hour\'s hashes share the server\'s slot, so an award, a batch and a removal each hold or drop a cooldown in one call', async (t) => {
  const { writer, redis, keys } = await buildTestApp(t, cluster.url, { redisCluster: true })
  const guildId = '1100000000000000004'
  await writer.configureGuild(guildId, { cooldownSeconds: 60 })
  t.match(await writer.awardXp({ guildId, userId: '5', xp: 10 }), { applied: true })
  t.match(await writer.awardMany(guildId, [{ userId: '5', xp: 10 }, { userId: '6', xp: 10 }]), [{ applied: false, reason: 'cooldown' }, { applied: true }])
  const hour = Math.floor(Number((await redis.time())[0]) * 1000 / COOLDOWN_HOUR_MS)
  t.equal(await redis.cluster('KEYSLOT', keys.cooldownHour(guildId, hour)), await redis.cluster('KEYSLOT', keys.guild(guildId).board), 'in the board\'s slot')
  t.equal(await writer.removeMember({ guildId, userId: '5' }), true)
  t.match(await writer.awardXp({ guildId, userId: '5', xp: 10 }), { applied: true, xp: 10 }, 'removed and added again: applied')
  t.match(await writer.awardXp({ guildId, userId: '6', xp: 10 }), { applied: false, reason: 'cooldown' })
})

t.test('a day\'s close on a cluster: every step on the server\'s slot, a first close\'s change records written whole and renamed into place, and a member\'s history read back', async (t) => {
  const { writer, redis, keys } = await buildTestApp(t, cluster.url, { redisCluster: true })
  const guildId = '1100000000000000005'
  const k = keys.guild(guildId)
  // The writes and the renames below name one day: not across a midnight (UTC).
  const untilMidnight = 86_400_000 - (Number((await redis.time())[0]) * 1000) % 86_400_000
  if (untilMidnight < 30_000) await new Promise((resolve) => setTimeout(resolve, untilMidnight + 1000))
  await writer.configureGuild(guildId, { season: { every: 'none', timezone: 'UTC' } })
  const N = 300
  await writer.bulkSetMembers(guildId, Array.from({ length: N }, (_, i) => ({ userId: String(1000 + i), xp: 10 * i })))
  await writer.awardMany(guildId, Array.from({ length: N }, (_, i) => ({ userId: String(1000 + i), xp: 5 })))
  // Today's counts become yesterday's, and history began with yesterday: yesterday has ended, so
  // the closer closes it (Redis's clock is not moved on a cluster).
  const now = Number((await redis.time())[0]) * 1000
  const today = new Date(now).toISOString().slice(0, 10)
  const yesterdayStart = Date.parse(today) - 86_400_000
  const yesterday = new Date(yesterdayStart).toISOString().slice(0, 10)
  await redis.rename(keys.dayStart(guildId, today), keys.dayStart(guildId, yesterday))
  await redis.rename(keys.dayGains(guildId, today), keys.dayGains(guildId, yesterday))
  await redis.hset(k.hist, 'since', String(yesterdayStart), 'latest_day', yesterday)

  t.same(await new DayCloser(redis, keys, { chunk: 50 }).closeDue(guildId), [yesterday], 'yesterday closed')
  const changes = await redis.getBuffer(keys.histChanges(guildId, yesterday)) ?? Buffer.alloc(0)
  t.equal(changes.length, 13 * N, 'a change record for each member the day touched')
  t.same([changes.readUIntBE(3, 5), changes.readUIntBE(8, 5)], [2 ** 40 - 1, 5], 'new that day, and its gain')
  t.equal(await redis.exists(k.histFresh, k.histOrder, k.histSnapshot), 0, 'the close\'s own keys are gone')
  const history = await new LeaderboardReader(redis, keys).readMemberHistory(guildId, '1010', 1)
  t.same(history.value?.data, [{ date: yesterday, xp: 105, xp_gained: 5, rank: N - 10 }], 'a member\'s day: its XP and rank at the end, and its gain')
})
