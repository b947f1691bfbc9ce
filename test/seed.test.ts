// The realistic seed and the demo setup against a real redis-server: what they leave in Redis,
// read back through KeyBuilder and checked against the contract's rules and the level math.
import t from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'
import { prepareDemo, seasonCurlLines } from '../src/demo/prepare-demo.js'
import { InvalidParameterError } from '../src/errors.js'
import { CURVES, levelForXp } from '../src/levels/curves.js'
import { createRedis, redisNow } from '../src/redis/client.js'
import { KeyBuilder, userIdFromBoardMember } from '../src/redis/keys.js'
import { type BaseRecord, baseRecord } from './helpers/guild-state.js'
import { dailyRecord } from '../src/seed/daily-claims.js'
import { planMembers } from '../src/seed/plan-members.js'
import { seedGuild } from '../src/seed/seed-guild.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'

const DAY_MS = 86_400_000

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })
const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 5000 })
t.teardown(() => { redis.disconnect() })
const keys = new KeyBuilder('seedtest')
const writer = new LeaderboardWriter(redis, keys)
const reader = new LeaderboardReader(redis, keys)

interface Member { userId: string, xp: number }

async function board (guildId: string): Promise<Member[]> {
  const flat = await redis.zrevrange(keys.guild(guildId).board, 0, -1, 'WITHSCORES')
  const out: Member[] = []
  for (let i = 0; i < flat.length; i += 2) out.push({ userId: userIdFromBoardMember(flat[i] ?? ''), xp: Number(flat[i + 1]) })
  return out
}

/** Every member's record, by user id, parsed from the members hash. */
async function records (guildId: string): Promise<Map<string, BaseRecord>> {
  const stored = await redis.hgetall(keys.guild(guildId).members)
  return new Map(Object.entries(stored).map(([member, record]) => [userIdFromBoardMember(member), baseRecord(record)]))
}

const N = 400
const now = await redisNow(redis)
const summary = await seedGuild(writer, { guildId: '900', members: N, seed: 'tap', now })
const members = await board('900')

t.test('seeding N members puts exactly N on the board, with snowflake ids of 17 to 19 digits', async (t) => {
  t.equal(members.length, N)
  t.equal(summary.members, N)
  t.ok(members.every((m) => /^[1-9]\d{16,18}$/.test(m.userId)), 'every id is a 17-19 digit snowflake')
  t.equal(new Set(members.map((m) => m.userId)).size, N, 'ids are distinct')
})

t.test('the stats hash equals a full recomputation from the board under every curve', async (t) => {
  const stats = await redis.hgetall(keys.guild('900').stats)
  const xps = members.map((m) => m.xp)
  t.equal(Number(stats.xp_total), xps.reduce((a, b) => a + b, 0), 'xp_total')
  t.equal(Number(stats.members_with_xp), xps.filter((x) => x > 0).length, 'members_with_xp')
  for (const curve of CURVES) {
    t.equal(Number(stats[`level_sum:${curve}`]), xps.reduce((a, x) => a + levelForXp(curve, x), 0), `level_sum:${curve}`)
  }
  t.equal(Number(stats.xp_total), summary.totalXp, 'the summary agrees')
})

t.test('the XP spread is long-tailed: some members at 0, most with little, a few with a lot', async (t) => {
  const xps = members.map((m) => m.xp).sort((a, b) => b - a)
  const zero = xps.filter((x) => x === 0).length
  t.ok(zero > 0 && zero < N / 4, `some members have 0 XP (${zero})`)
  t.equal(zero, summary.zeroXp)
  const median = xps[Math.floor(N / 2)] ?? 0
  const top = xps[0] ?? 0
  t.ok(top > 50 * Math.max(median, 1), `the top (${top}) is far above the median (${median})`)
  const topTenth = xps.slice(0, N / 10).reduce((a, b) => a + b, 0)
  t.ok(topTenth > xps.reduce((a, b) => a + b, 0) / 2, 'the top tenth holds most of the XP')
})

t.test('there are ties: members with exactly equal non-zero XP, one of them near the top', async (t) => {
  const counts = new Map<number, number>()
  for (const { xp } of members) if (xp > 0) counts.set(xp, (counts.get(xp) ?? 0) + 1)
  const tied = [...counts.values()].filter((c) => c > 1).reduce((a, b) => a + b, 0)
  t.ok(tied >= 4, `${tied} members share their XP with another`)
  t.equal(tied, summary.tied)
  t.equal(members[2]?.xp, members[3]?.xp, 'ranks 3 and 4 are tied, where the demo shows it')
})

t.test('a share of members have streaks: current ones ending today or yesterday, and broken ones', async (t) => {
  const stored = await records('900')
  const claimed = [...stored].filter(([, r]) => r.lastClaim !== null)
  const today = Math.floor(now / DAY_MS)
  let current = 0
  let broken = 0
  let longest = 0
  t.ok(claimed.every(([, r]) => (r.lastClaim ?? 0) <= now), 'no claim is dated after the clock')
  t.ok([...stored.values()].every((r) => (r.lastClaim === null) === (r.streak === 0)), 'every streak has its claim date and back')
  for (const [, { streak, lastClaim }] of claimed) {
    const day = Math.floor(Number(lastClaim) / DAY_MS)
    if (day >= today - 1) {
      current++
      longest = Math.max(longest, streak)
    } else {
      broken++
    }
  }
  t.ok(current > 0 && broken > 0, `${current} current and ${broken} broken streaks`)
  t.ok(current + broken < N, 'not everyone claims')
  t.ok(longest >= 3, `some streak has grown over several days (longest ${longest})`)
  t.same({ current, broken }, { current: summary.activeStreaks, broken: summary.brokenStreaks })
  // Every planned claim counted: each member holds the streak and date its claims, one after
  // another through the daily-claim rules, leave behind.
  const wrong = planMembers({ members: N, seed: 'tap', now }).filter((m) => {
    const want = dailyRecord(m.claims)
    const got = stored.get(m.userId)
    return want === undefined ? got?.lastClaim !== null : got?.streak !== want.streak || got.lastClaim !== want.lastClaim.getTime()
  }).map((m) => m.userId)
  t.same(wrong, [], 'every member holds the daily record its planned claims leave')
})

t.test('part of some members\' XP was awarded this week, through the award path: the week and month boards show it', async (t) => {
  const recent = planMembers({ members: N, seed: 'tap', now }).filter((m) => m.recentXp > 0)
  t.ok(recent.length > N / 5 && recent.length < N / 2, `${recent.length} of ${N} members earned XP this week`)
  t.equal(summary.recent, recent.length)
  for (const period of ['week', 'month'] as const) {
    const board = await reader.page('900', 1, 100, period)
    t.equal(board.total, recent.length, `${period}: every member with recent XP`)
    const planned = new Map(recent.map((m) => [m.userId, m.recentXp]))
    t.ok(board.data.every((e) => planned.get(e.user_id) === e.xp), `${period}: each with the XP planned as recent`)
  }
  t.ok(recent.every((m) => m.recentXp <= m.xp), 'recent XP is part of the total, which stays as planned')
})

t.test('every member has a plausible, mostly distinct username', async (t) => {
  const stored = await records('900')
  t.equal(stored.size, N)
  t.ok(members.every((m) => stored.get(m.userId)?.username !== null), 'every member on the board has a username')
  const values = [...stored.values()].map((r) => r.username ?? '')
  t.ok(values.every((name) => name.trim().length > 0 && name.length <= 100))
  t.ok(new Set(values).size >= N * 0.95, 'mostly distinct')
  t.ok(values.some((name) => /^[a-z]+$/.test(name)) && values.some((name) => /\d/.test(name)), 'in several styles')
})

t.test('the same seed and clock give the same members, ids, names and XP in another server', async (t) => {
  await seedGuild(writer, { guildId: '901', members: N, seed: 'tap', now })
  t.same(await board('901'), members)
  t.same(await redis.hgetall(keys.guild('901').members), await redis.hgetall(keys.guild('900').members), 'the same names, streaks and claims')
  const other = planMembers({ members: 50, seed: 'other', now })
  t.notSame(other.map((m) => m.userId), members.slice(0, 50).map((m) => m.userId), 'another seed, other members')
})

t.test('progress is reported up to (N, N); a curve given is configured', async (t) => {
  const seen: Array<[number, number]> = []
  await seedGuild(writer, { guildId: '902', members: 30, curve: 'flat', onProgress: (done, total) => { seen.push([done, total]) } })
  t.same(seen.at(-1), [30, 30])
  t.ok(seen.every(([done], i) => i === 0 || done > (seen[i - 1]?.[0] ?? 0)), 'progress only grows')
  t.equal(await redis.hget(keys.guild('902').settings, 'curve'), 'flat')
})

t.test('a crowd larger than one write call (25,000) is written whole: every member once, exact aggregates, progress growing to (N, N)', async (t) => {
  const big = 26_000
  const seen: number[] = []
  const result = await seedGuild(writer, { guildId: '904', members: big, seed: 'big', now, onProgress: (done, total) => { if (total === big) seen.push(done) } })
  t.equal(await redis.zcard(keys.guild('904').board), big)
  t.equal(await redis.hlen(keys.guild('904').members), big, 'every member has its record')
  t.equal(result.members, big)
  t.same(seen.at(-1), big)
  t.ok(seen.every((done, i) => i === 0 || done > (seen[i - 1] ?? 0)), 'progress only grows')
  const xps = (await board('904')).map((m) => m.xp)
  const stats = await redis.hgetall(keys.guild('904').stats)
  t.equal(Number(stats.xp_total), xps.reduce((a, b) => a + b, 0))
  t.equal(Number(stats.members_with_xp), xps.filter((x) => x > 0).length)
  for (const curve of CURVES) t.equal(Number(stats[`level_sum:${curve}`]), xps.reduce((a, x) => a + levelForXp(curve, x), 0), `level_sum:${curve}`)
  t.same(new Set((await board('904')).map((m) => m.userId)), new Set(planMembers({ members: big, seed: 'big', now }).map((m) => m.userId)), 'the planned crowd, all of it')
})

t.test('seedGuild refuses a bad guild id or member count before writing anything', async (t) => {
  await t.rejects(seedGuild(writer, { guildId: '0123', members: 5 }), InvalidParameterError)
  await t.rejects(seedGuild(writer, { guildId: '903', members: 0 }), InvalidParameterError)
  await t.rejects(seedGuild(writer, { guildId: '903', members: 1.5 }), InvalidParameterError)
  t.equal(await redis.zcard(keys.guild('903').board), 0)
})

t.test('prepareDemo seeds an empty demo server, then leaves it alone, with a fresh working key each time', async (t) => {
  const first = await prepareDemo({ redis, keys, guildId: '950', members: 40, baseUrl: 'http://localhost:3000' })
  t.match(first, { guildId: '950', seeded: true, members: 40 })
  t.equal(await redis.zcard(keys.guild('950').board), 40)
  t.equal(first.curl, `curl -H 'x-api-key: ${first.key}' http://localhost:3000/api/v1/servers/950/leaderboard`)
  const store = new ApiKeyStore(redis, keys)
  t.match(await store.check(first.key), { status: 'ok', guildId: '950', plan: 'professional' })
  t.equal((await store.get(first.keyId))?.name, 'demo')

  const second = await prepareDemo({ redis, keys, guildId: '950', members: 99, baseUrl: 'https://lb.example.com/api/v1/' })
  t.match(second, { guildId: '950', seeded: false, members: 40 })
  t.not(second.key, first.key)
  t.equal(second.curl, `curl -H 'x-api-key: ${second.key}' https://lb.example.com/api/v1/servers/950/leaderboard`, 'a base URL given with /api/v1 is not doubled')
  t.match(await store.check(second.key), { status: 'ok', guildId: '950' })
  await t.rejects(prepareDemo({ redis, keys, guildId: '951', baseUrl: 'localhost:3000' }), InvalidParameterError)
  t.equal(await redis.zcard(keys.guild('951').board), 0, 'a bad base URL is refused before seeding')
})

t.test('prepareDemo defaults to server 1100000000000000001 with 500 members', async (t) => {
  const demo = await prepareDemo({ redis, keys, baseUrl: 'http://localhost:3000' })
  t.match(demo, { guildId: '1100000000000000001', seeded: true, members: 500 })
  t.ok((await reader.page(demo.guildId, 1, 10, 'week')).total > 100, 'its ?period=week board has members')
})

t.test('prepareDemo gives the demo server a weekly season and five closed days of history, and curl lines that read them', async (t) => {
  const demo = await prepareDemo({ redis, keys, guildId: '952', members: 60, baseUrl: 'http://localhost:3000' })
  t.match(await writer.settings.read('952'), { season: { every: 'week', timezone: 'UTC' } })
  t.ok((await reader.page('952', 1, 100, 'all', 'current')).total > 0, 'the current season has XP gained in it')
  const now = await redisNow(redis)
  const days = Array.from({ length: 5 }, (_, i) => new Date(now - (5 - i) * DAY_MS).toISOString().slice(0, 10))
  const stats = (await reader.readStatsHistory('952', 30)).value.data
  t.same(stats.map((d) => d.date), days, 'the five days before today, closed, oldest first')
  const top = await board('952')
  const withXp = top.filter((m) => m.xp > 0).length
  t.ok(stats.every((d, i) => d.total_members === withXp && d.active_members > 0 && d.xp_gained > 0 && (i === 0 || d.total_xp > (stats[i - 1]?.total_xp ?? 0))),
    'every member with XP on the board each day, some active, the XP growing', { stats, withXp })
  const last = stats.at(-1)
  t.equal(last?.total_xp, top.reduce((sum, m) => sum + m.xp, 0), 'the last day ends where the seeded board stands')
  const history = (await reader.readMemberHistory('952', top[0]?.userId ?? '', 30)).value
  t.same(history?.data.map((d) => d.date), days)
  t.equal(history?.data.at(-1)?.xp, top[0]?.xp)
  t.ok((await reader.page('952', 1, 60)).data.every((e) => e.rank_change === 0), 'nothing moved since the last close')
  const [season, member, server] = await seasonCurlLines(redis, keys, demo)
  t.equal(season, `curl -H 'x-api-key: ${demo.key}' http://localhost:3000/api/v1/servers/952/leaderboard?season=current`)
  t.equal(member, `curl -H 'x-api-key: ${demo.key}' http://localhost:3000/api/v1/servers/952/members/${top[0]?.userId ?? ''}/history?days=7`)
  t.equal(server, `curl -H 'x-api-key: ${demo.key}' http://localhost:3000/api/v1/servers/952/stats/history?days=7`)
})
