// Who is shown (the writer library against a real Redis, read through the public API): a hidden
// member leaves every public read at once (pages, around, bulk members, period boards, stats,
// the stream) and everyone below moves up; its XP is kept, awards to it stay hidden, and shown
// again it is back with its XP and exact ranks. Reasons add up: a member who opted out stays
// hidden when it rejoins.
import t, { type Test } from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import { SseReader } from './helpers/sse.js'
import { boardMember } from '../src/redis/keys.js'
import { levelForXp, MAX_XP } from '../src/levels/curves.js'
import { redisNow } from '../src/redis/client.js'
import { zonedDay } from '../src/calendar/zoned.js'
import { COOLDOWN_HOUR_MS } from '../src/writer/calendar-writes.js'

t.jobs = 4

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

let guilds = 0
const MEMBERS = 30

/** A server of 30 members: user i (1..30) holds 100 * i XP, all of it gained this week and month, so user 30 is rank 1. */
async function fixture (t: Test) {
  const ctx = await buildTestApp(t, server.url)
  const guildId = String(1_700_000_000_000_000_000n + BigInt(++guilds))
  const { key } = await ctx.apiKeys.create({ guildId, plan: 'professional' })
  for (let i = 1; i <= MEMBERS; i++) await ctx.writer.awardXp({ guildId, userId: String(i), xp: 100 * i, username: `user ${i}` })
  const get = async (path: string) => {
    const response = await ctx.app.inject({ url: `/api/v1/servers/${guildId}${path}`, headers: { 'x-api-key': key } })
    return { status: response.statusCode, body: response.json() }
  }
  return { ...ctx, guildId, key, get }
}

interface Entry { rank: number, user_id: string, xp: number }

/** Every read a hidden member leaves, as one snapshot. */
async function reads (get: (path: string) => Promise<{ status: number, body: any }>) {
  return {
    page: (await get('/leaderboard?limit=5')).body,
    page2: (await get('/leaderboard?limit=25&page=2')).body,
    week: (await get('/leaderboard?period=week&limit=5')).body,
    month: (await get('/leaderboard?period=month&limit=5')).body,
    member29: (await get('/members/29')).body,
    around29: (await get('/members/29/around?radius=1')).body,
    bulk: (await get('/members?ids=30,29,1')).body,
    stats: (await get('/stats')).body
  }
}

t.test('hiding the rank-1 member moves everyone up by one on every read; showing it restores every read exactly', async (t) => {
  const { writer, guildId, get } = await fixture(t)
  const before = await reads(get)
  t.equal(before.page.data[0].user_id, '30', 'user 30 is rank 1')

  const hidden = await writer.setVisibility({ guildId, userId: '30', visible: false, reason: 'left' })
  t.same(hidden, { userId: '30', visible: false, reasons: ['left'], xp: 3000 })
  const after = await reads(get)
  t.same(after.page.data.map((e: Entry) => [e.rank, e.user_id]), [[1, '29'], [2, '28'], [3, '27'], [4, '26'], [5, '25']], 'the page moved up by one')
  t.equal(after.page.total, MEMBERS - 1, 'the total counts shown members')
  t.same(after.page2.data.map((e: Entry) => e.user_id), ['4', '3', '2', '1'], 'the last page ends with the last shown member, no hidden one after it')
  for (const period of ['week', 'month'] as const) {
    t.same(after[period].data.map((e: Entry) => [e.rank, e.user_id, e.xp]), [29, 28, 27, 26, 25].map((u, i) => [i + 1, String(u), 100 * u]), `the ${period}'s board too`)
    t.equal(after[period].total, MEMBERS - 1)
  }
  t.equal(after.member29.rank, 1, "user 29's record says rank 1")
  t.same(after.around29, { data: [after.page.data[0], after.page.data[1]], total: MEMBERS - 1, rank: 1 }, 'around starts at the new rank 1')
  t.same(after.bulk.missing, ['30'], 'bulk members: the hidden member is missing')
  t.same(after.bulk.data.map((m: { user_id: string, rank: number }) => [m.user_id, m.rank]), [['29', 1], ['1', 29]])
  t.same(after.stats, { ...before.stats, total_members: MEMBERS - 1, total_xp: before.stats.total_xp - 3000, average_level: after.stats.average_level })
  const levels = Array.from({ length: MEMBERS - 1 }, (_, i) => levelForXp('mee6', 100 * (i + 1)))
  t.equal(after.stats.average_level, Math.round(levels.reduce((a, b) => a + b) / levels.length), 'the average level counts shown members only')
  t.equal((await get('/members/30')).status, 404, "the hidden member's record is 404")
  t.equal((await get('/members/30/around')).status, 404, 'and so is around it')

  const shown = await writer.setVisibility({ guildId, userId: '30', visible: true })
  t.same(shown, { userId: '30', visible: true, reasons: [], xp: 3000 })
  t.same(await reads(get), before, 'shown again: every read is as before')
})

t.test('awards to a hidden member are kept and stay hidden; shown, it is back with them', async (t) => {
  const { writer, guildId, get, redis, keys } = await fixture(t)
  const stats = (await get('/stats')).body
  await writer.setVisibility({ guildId, userId: '5', visible: false, reason: 'opted_out' })
  const hiddenStats = (await get('/stats')).body
  t.same(await writer.awardXp({ guildId, userId: '5', xp: 4000, displayName: 'Five' }), { gained: 4000, xp: 4500, level: 9, leveledUp: true, applied: true },
    'the award answers its XP and level')
  await writer.awardMany(guildId, [{ userId: '5', xp: 100 }, { userId: '6', xp: 1 }])
  t.equal((await get('/members/5')).status, 404, 'still hidden')
  const board = (await get('/leaderboard?limit=100')).body
  t.notOk(board.data.some((e: Entry) => e.user_id === '5'), 'not on the board')
  t.equal(board.data[0].user_id, '30', 'and not at the top, where its XP would put it')
  t.notOk((await get('/leaderboard?period=week&limit=100')).body.data.some((e: Entry) => e.user_id === '5'), 'nor on the week\'s board')
  t.same((await get('/stats')).body, { ...hiddenStats, total_xp: hiddenStats.total_xp + 1 }, 'the stats moved by the shown member\'s award only')
  t.equal(Number(await redis.zscore(keys.guild(guildId).board, boardMember('5'))), -(4600 + 1), 'kept as -(xp + 1)')

  await writer.setVisibility({ guildId, userId: '5', visible: true, reason: 'opted_out' })
  const member = (await get('/members/5')).body
  t.match(member, { xp: 4600, rank: 1, display_name: 'Five', weekly_xp: 4600 }, 'shown: its XP with the awards, its exact rank, its name')
  t.same((await get('/leaderboard?period=week&limit=1')).body.data[0].user_id, '5', 'first on the week\'s board')
  t.equal((await get('/stats')).body.total_xp, stats.total_xp + 4100 + 1, 'the stats count it again')
})

t.test('reasons add up: an opted-out member who leaves and rejoins stays hidden until it opts in', async (t) => {
  const { writer, guildId, get } = await fixture(t)
  await writer.setVisibility({ guildId, userId: '7', visible: false, reason: 'opted_out' })
  t.same((await writer.setVisibility({ guildId, userId: '7', visible: false, reason: 'left' })).reasons, ['left', 'opted_out'])
  const rejoined = await writer.setVisibility({ guildId, userId: '7', visible: true, reason: 'left' })
  t.same(rejoined, { userId: '7', visible: false, reasons: ['opted_out'], xp: 700 }, 'rejoining takes away `left` only')
  t.equal((await get('/members/7')).status, 404)
  t.same(await writer.setVisibility({ guildId, userId: '7', visible: true, reason: 'opted_out' }), { userId: '7', visible: true, reasons: [], xp: 700 })
  t.equal((await get('/members/7')).body.rank, MEMBERS - 6)
  await writer.setVisibility({ guildId, userId: '7', visible: false, reason: 'left' })
  await writer.setVisibility({ guildId, userId: '7', visible: false, reason: 'opted_out' })
  t.same((await writer.setVisibility({ guildId, userId: '7', visible: true })).reasons, [], 'showing without a reason takes every reason away')
  t.equal((await get('/members/7')).status, 200)
})

t.test('a user hidden before it is a member enters hidden; showing one who is not a member creates nothing', async (t) => {
  const { writer, guildId, get } = await fixture(t)
  t.same(await writer.setVisibility({ guildId, userId: '900', visible: false, reason: 'opted_out' }), { userId: '900', visible: false, reasons: ['opted_out'], xp: null })
  await writer.awardXp({ guildId, userId: '900', xp: 99_999 })
  await writer.claimDaily({ guildId, userId: '901' }) // not hidden: a member with 0 XP
  await writer.setVisibility({ guildId, userId: '902', visible: false, reason: 'left' })
  await writer.claimDaily({ guildId, userId: '902' })
  await writer.setVisibility({ guildId, userId: '903', visible: false, reason: 'left' })
  await writer.setXp({ guildId, userId: '903', xp: 50 })
  await writer.setVisibility({ guildId, userId: '904', visible: false, reason: 'left' })
  await writer.bulkSetMembers(guildId, [{ userId: '904', xp: 70 }, { userId: '905', xp: 70 }])
  const board = (await get('/leaderboard?limit=100')).body
  t.equal(board.total, MEMBERS + 2, 'the daily claimer and the bulk member are shown; the four hidden users are not')
  t.same(board.data.filter((e: Entry) => Number(e.user_id) >= 900).map((e: Entry) => e.user_id), ['905', '901'])
  t.equal(board.data[0].user_id, '30', 'the hidden award did not take rank 1')
  t.equal((await get('/stats')).body.total_xp, 100 * MEMBERS * (MEMBERS + 1) / 2 + 70, 'no hidden XP in the stats')

  t.same(await writer.setVisibility({ guildId, userId: '950', visible: true }), { userId: '950', visible: true, reasons: [], xp: null })
  t.equal((await get('/leaderboard?limit=1')).body.total, MEMBERS + 2, 'showing a user who is not a member adds nobody')
  t.match(await writer.setVisibility({ guildId, userId: '900', visible: true }), { visible: true, xp: 99_999 })
  t.equal((await get('/leaderboard?limit=1')).body.data[0].user_id, '900', 'shown, the award counts')
})

t.test('set XP, daily claims and bulk writes keep a hidden member hidden; removing one forgets it', async (t) => {
  const { writer, guildId, get } = await fixture(t)
  await writer.setVisibility({ guildId, userId: '3', visible: false, reason: 'left' })
  const stats = (await get('/stats')).body
  await writer.setXp({ guildId, userId: '3', xp: 10 })
  await writer.claimDaily({ guildId, userId: '3' })
  await writer.bulkSetMembers(guildId, [{ userId: '3', xp: 20, username: 'three' }])
  t.equal((await get('/members/3')).status, 404, 'still hidden')
  t.same((await get('/stats')).body, stats, 'and out of the stats')
  t.same(await writer.setVisibility({ guildId, userId: '3', visible: true }), { userId: '3', visible: true, reasons: [], xp: 20 })
  t.equal((await get('/stats')).body.total_xp, stats.total_xp + 20)

  await writer.setVisibility({ guildId, userId: '4', visible: false, reason: 'left' })
  const hiddenStats = (await get('/stats')).body
  t.ok(await writer.removeMember({ guildId, userId: '4' }), 'a hidden member can be removed')
  t.same((await get('/stats')).body, hiddenStats, 'removing it moves no stat')
  await writer.awardXp({ guildId, userId: '4', xp: 1 })
  t.equal((await get('/members/4')).body.xp, 1, 'removed, the user is forgotten: its next award shows')
})

t.test('a batch: users given twice end as their changes in turn leave them; a bad change names its index and writes nothing', async (t) => {
  const { writer, guildId, get } = await fixture(t)
  const results = await writer.setVisibilityMany(guildId, [
    { userId: '1', visible: false, reason: 'left' },
    { userId: '2', visible: false, reason: 'opted_out' },
    { userId: '1', visible: false, reason: 'opted_out' },
    { userId: '1', visible: true, reason: 'left' },
    { userId: '2', visible: true }
  ])
  t.same(results, [
    { userId: '1', visible: false, reasons: ['opted_out'], xp: 100 },
    { userId: '2', visible: true, reasons: [], xp: 200 }
  ])
  await t.rejects(writer.setVisibilityMany(guildId, [{ userId: '2', visible: false, reason: 'left' }, { userId: '3', visible: false } as never]),
    { code: 'invalid_parameter', message: /^changes\[1\]: hiding a member needs a reason/ })
  await t.rejects(writer.setVisibilityMany(guildId, [{ userId: '2', visible: false, reason: 'bored' as never }]), { message: /reason must be one of left, opted_out/ })
  t.equal((await get('/members/2')).status, 200, 'nothing of the refused batch was written')
})

t.test('a stream of the leaderboard shows the hide and the show', async (t) => {
  const { app, writer, guildId, key } = await fixture(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const stream = await SseReader.open(t, base, `/api/v1/servers/${guildId}/leaderboard/stream?limit=3`, { 'x-api-key': key })
  const first = JSON.parse((await stream.event(0)).data)
  t.same(first.data.map((e: Entry) => e.user_id), ['30', '29', '28'])
  await writer.setVisibility({ guildId, userId: '30', visible: false, reason: 'left' })
  const hidden = JSON.parse((await stream.event(1)).data)
  t.same(hidden.data.map((e: Entry) => [e.rank, e.user_id]), [[1, '29'], [2, '28'], [3, '27']], 'the change arrives on the stream')
  t.equal(hidden.total, MEMBERS - 1)
  await writer.setVisibility({ guildId, userId: '30', visible: true })
  t.same(JSON.parse((await stream.event(2)).data), first, 'and the show')
})

t.test('season boards, current and ended, lose a hidden member and get it back; awards to it in the season stay hidden', async (t) => {
  const { writer, guildId, get } = await fixture(t)
  await writer.endSeason(guildId) // season 1 ended with the fixture's XP; season 2 gains 10 * i
  for (let i = 1; i <= MEMBERS; i++) await writer.awardXp({ guildId, userId: String(i), xp: 10 * i })
  const seasonReads = async () => ({
    current: (await get('/leaderboard?season=current&limit=3')).body,
    ended: (await get('/leaderboard?season=1&limit=3')).body,
    member: (await get('/members/29?season=current')).body,
    around: (await get('/members/29/around?season=1&radius=1')).body,
    bulk: (await get('/members?ids=30,29&season=1')).body
  })
  const before = await seasonReads()
  t.same(before.current.data.map((e: Entry) => [e.rank, e.user_id, e.xp]), [[1, '30', 300], [2, '29', 290], [3, '28', 280]])
  t.same(before.ended.data.map((e: Entry) => [e.rank, e.user_id, e.xp]), [[1, '30', 3000], [2, '29', 2900], [3, '28', 2800]])

  await writer.setVisibility({ guildId, userId: '30', visible: false, reason: 'opted_out' })
  const after = await seasonReads()
  t.same(after.current.data.map((e: Entry) => [e.rank, e.user_id, e.xp]), [[1, '29', 290], [2, '28', 280], [3, '27', 270]], 'the current season moved up')
  t.same(after.ended.data.map((e: Entry) => [e.rank, e.user_id, e.xp]), [[1, '29', 2900], [2, '28', 2800], [3, '27', 2700]], 'the ended season too')
  t.equal(after.current.total, MEMBERS - 1)
  t.equal(after.ended.total, MEMBERS - 1)
  t.equal(after.member.rank, 1)
  t.equal(after.around.rank, 1)
  t.same(after.bulk.missing, ['30'])
  t.equal((await get('/members/30?season=1')).status, 404)

  await writer.awardXp({ guildId, userId: '30', xp: 1000 })
  t.equal((await get('/leaderboard?season=current&limit=3')).body.data[0].user_id, '29', 'an award to the hidden member stays hidden in the season')
  await writer.setVisibility({ guildId, userId: '30', visible: true })
  const shown = await seasonReads()
  t.same(shown.current.data.map((e: Entry) => [e.rank, e.user_id, e.xp]), [[1, '30', 1300], [2, '29', 290], [3, '28', 280]], 'shown, with the award counted in the season')
  const standing = (r: Awaited<ReturnType<typeof seasonReads>>) => ({
    ended: r.ended.data.map((e: Entry) => [e.rank, e.user_id, e.xp]),
    around: [r.around.rank, r.around.data.map((e: Entry) => [e.rank, e.user_id, e.xp])],
    bulk: r.bulk.data.map((m: Entry) => [m.rank, m.user_id, m.xp])
  })
  t.same(standing(shown), standing(before), 'the ended season\'s ranks and XP are as before (levels follow all-time XP)')
})

t.test('the stats stream shows the totals without a hidden member, and with it again', async (t) => {
  const { app, writer, guildId, key } = await fixture(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const stream = await SseReader.open(t, base, `/api/v1/servers/${guildId}/stats/stream`, { 'x-api-key': key })
  const first = JSON.parse((await stream.event(0)).data)
  t.equal(first.total_members, MEMBERS)
  await writer.setVisibility({ guildId, userId: '30', visible: false, reason: 'left' })
  const hidden = JSON.parse((await stream.event(1)).data)
  t.same([hidden.total_members, hidden.total_xp], [MEMBERS - 1, first.total_xp - 3000])
  await writer.setVisibility({ guildId, userId: '30', visible: true })
  t.same(JSON.parse((await stream.event(2)).data), first)
})

t.test('a board whose members are all hidden lists none of them (a page past the shown members is empty, never the hidden ones)', async (t) => {
  const { writer, guildId, get } = await fixture(t)
  await writer.setVisibilityMany(guildId, Array.from({ length: MEMBERS }, (_, i) => ({ userId: String(i + 1), visible: false, reason: 'left' as const })))
  for (const path of ['/leaderboard', '/leaderboard?period=week', '/leaderboard?season=current']) {
    t.same((await get(path)).body, { data: [], total: 0, page: 1 }, path)
  }
  await writer.setVisibility({ guildId, userId: '7', visible: true })
  t.same((await get('/leaderboard')).body.data.map((e: Entry) => [e.rank, e.user_id]), [[1, '7']], 'one shown: only it')
  t.same((await get('/leaderboard?page=2&limit=1')).body.data, [], 'and the page after it is empty')
})

t.test("the server's rules judge a hidden member as any other: its cooldown and its day's count are plain values, its reply carries its roles, and it stays hidden", async (t) => {
  const { writer, guildId, get, redis, keys } = await fixture(t)
  const ROLE = '7300000000000000001'
  await writer.setVisibilityMany(guildId, [{ userId: '40', visible: false, reason: 'opted_out' }, { userId: '41', visible: false, reason: 'left' }])
  await writer.configureGuild(guildId, { dailyXpCap: 150, roleRewards: [{ level: 1, roleId: ROLE }], roleRewardsMode: 'stack' })
  const stats = (await get('/stats')).body
  // mee6: level 1 at 100 XP.
  t.same(await writer.awardXp({ guildId, userId: '40', xp: 120 }),
    { gained: 120, xp: 120, level: 1, leveledUp: true, applied: true, roles: { add: [ROLE], remove: [] } }, 'applied, with the role the level reached')
  const day = keys.dayGains(guildId, zonedDay(await redisNow(redis), 'UTC').label)
  t.equal(await redis.hget(day, boardMember('40')), '120', "the day's count is the plain gain")
  t.equal(await redis.zscore(keys.guild(guildId).board, boardMember('40')), '-121', 'the board keeps it hidden')
  t.match((await writer.awardMany(guildId, [{ userId: '40', xp: 100 }]))[0], { applied: true, reason: 'daily_cap', gained: 30, xp: 150 }, 'the part under the cap')
  t.match((await writer.awardMany(guildId, [{ userId: '40', xp: 10 }]))[0], { applied: false, reason: 'daily_cap', gained: 0, xp: 150 }, 'then nothing')
  t.equal(await redis.zscore(keys.guild(guildId).board, boardMember('40')), '-151')

  await writer.configureGuild(guildId, { cooldownSeconds: 60 })
  t.match(await writer.awardXp({ guildId, userId: '41', xp: 10 }), { applied: true, gained: 10 })
  const hour = Math.floor(await redisNow(redis) / COOLDOWN_HOUR_MS)
  const cooldown = await redis.hget(keys.cooldownHour(guildId, hour), boardMember('41')) ?? await redis.hget(keys.cooldownHour(guildId, hour - 1), boardMember('41'))
  t.ok(Number(cooldown) > 0, 'its cooldown is a plain time')
  t.match(await writer.awardXp({ guildId, userId: '41', xp: 10 }), { applied: false, reason: 'cooldown', xp: 10 }, 'and holds')

  t.equal((await get('/members/40')).status, 404, 'still hidden')
  t.same((await get('/stats')).body, stats, 'the stats count none of it')
})

t.test('an award to a hidden member past the XP limit changes nothing: its hidden score stays as it was, and so do its plain awards after', async (t) => {
  const { writer, guildId, redis, keys } = await fixture(t)
  await writer.setVisibilityMany(guildId, [{ userId: '42', visible: false, reason: 'left' }])
  await writer.setXp({ guildId, userId: '42', xp: MAX_XP - 5 })
  const board = keys.guild(guildId).board
  t.equal(await redis.zscore(board, boardMember('42')), String(-(MAX_XP - 5 + 1)), 'hidden at MAX_XP - 5')
  t.match((await writer.awardMany(guildId, [{ userId: '42', xp: 10 }]))[0], { applied: false, reason: 'xp_limit', xp: MAX_XP - 5 })
  t.equal(await redis.zscore(board, boardMember('42')), String(-(MAX_XP - 5 + 1)), 'its score as it was')
  t.match((await writer.awardMany(guildId, [{ userId: '42', xp: 5 }]))[0], { applied: true, gained: 5, xp: MAX_XP })
  t.equal(await redis.zscore(board, boardMember('42')), String(-(MAX_XP + 1)), 'then up to the limit, still hidden')
  await writer.setXp({ guildId, userId: '43', xp: MAX_XP })
  t.match((await writer.awardMany(guildId, [{ userId: '43', xp: 1 }]))[0], { applied: false, reason: 'xp_limit', xp: MAX_XP }, 'a shown member at the limit')
  t.equal(await redis.zscore(board, boardMember('43')), String(MAX_XP), 'keeps its score')
})

t.test("under a custom curve, the stats' average level counts shown members only", async (t) => {
  const { writer, guildId, get } = await fixture(t)
  // Users 1..15 (100 to 1,500 XP) are at level 1; users 20..30 would be at level 2.
  await writer.configureGuild(guildId, { curve: 'custom', customCurve: [100, 2000] })
  await writer.setVisibilityMany(guildId, Array.from({ length: 15 }, (_, i) => ({ userId: String(16 + i), visible: false, reason: 'left' as const })))
  t.match((await get('/stats')).body, { xp_curve: 'custom', total_members: 15, total_xp: 100 * 15 * 16 / 2, average_level: 1 })
  await writer.setVisibilityMany(guildId, Array.from({ length: 15 }, (_, i) => ({ userId: String(16 + i), visible: true })))
  // 30 members: 19 at level 1, 11 at level 2 (2,000 XP and more).
  t.match((await get('/stats')).body, { total_members: 30, average_level: 1 })
})
