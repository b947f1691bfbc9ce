// Period leaderboards: awards (after the multiplier) count into the current ISO week's and UTC
// month's boards by Redis's clock; setting XP does not count; a removal leaves every period
// board; `?period=` ranks by XP gained in the period. The period arithmetic is pinned at chosen
// times: a week's turn, a year's turn where the ISO week-year is not the calendar year, a month's.
import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { setTimeout as sleep } from 'node:timers/promises'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { dataSnapshot } from './helpers/redis-snapshot.js'
import { statsOf, storedStats, boardOf } from './helpers/guild-state.js'
import {
  isoWeek, isoWeekStart, keepUntil, nextSpan, PERIOD_KEEP_MARGIN_MS, periodWindow, previousSpan, utcMonth
} from '../src/periods/periods.js'
import { RedisClock } from '../src/redis/clock.js'
import { boardMember, userIdFromBoardMember } from '../src/redis/keys.js'
import { awardXp } from '../src/redis/write-scripts.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { levelProgress } from '../src/levels/curves.js'
import { redisNow } from '../src/redis/client.js'

const DAY = 86_400_000
const at = (iso: string): number => Date.parse(iso)

t.test('ISO weeks start on Monday 00:00 UTC: Sunday 23:59:59.999 is the week before', async (t) => {
  const sunday = at('2026-11-22T23:59:59.999Z')
  const monday = at('2026-11-23T00:00:00.000Z')
  t.same(isoWeek(sunday), { unit: 'week', label: '2026-W47', start: at('2026-11-16T00:00:00Z'), end: monday })
  t.same(isoWeek(monday), { unit: 'week', label: '2026-W48', start: monday, end: at('2026-11-30T00:00:00Z') })
  t.equal(isoWeekStart(at('2026-11-26T12:34:56.789Z')), monday, 'a Thursday belongs to the Monday before')
  t.equal(isoWeek(at('1970-01-01T00:00:00Z')).label, '1970-W01', 'the epoch, a Thursday')
})

t.test("a year's turn: the ISO week-year is the year of the week's Thursday, not the calendar year", async (t) => {
  // 2026 begins on a Thursday, so it has 53 ISO weeks: its last one runs to Sunday 2027-01-03.
  t.equal(isoWeek(at('2026-12-31T23:59:59.999Z')).label, '2026-W53')
  t.equal(isoWeek(at('2027-01-01T00:00:00.000Z')).label, '2026-W53', '1 January 2027 is still in 2026-W53')
  t.equal(isoWeek(at('2027-01-03T23:59:59.999Z')).label, '2026-W53')
  t.same(isoWeek(at('2027-01-04T00:00:00.000Z')), { unit: 'week', label: '2027-W01', start: at('2027-01-04T00:00:00Z'), end: at('2027-01-11T00:00:00Z') })
  // And the other way: 30 December 2024 (a Monday) opens 2025-W01.
  t.equal(isoWeek(at('2024-12-29T23:59:59.999Z')).label, '2024-W52')
  t.equal(isoWeek(at('2024-12-30T00:00:00.000Z')).label, '2025-W01')
  t.equal(previousSpan(isoWeek(at('2027-01-04T00:00:00Z'))).label, '2026-W53', 'last week, across the turn')
})

t.test('ISO week labels agree with a week-by-week count from a known Monday, 1999 to 2041', async (t) => {
  // Independent of isoWeek's arithmetic: walk Mondays from 1999-01-04 (1999-W01), counting, and
  // start at W01 again on the Monday of the week that holds 4 January.
  let monday = at('1999-01-04T00:00:00Z')
  let year = 1999
  let week = 1
  const wrong: string[] = []
  while (monday < at('2042-01-01T00:00:00Z')) {
    const expected = `${year}-W${String(week).padStart(2, '0')}`
    for (const offset of [0, 3 * DAY, 7 * DAY - 1]) {
      const got = isoWeek(monday + offset)
      if (got.label !== expected || got.start !== monday) wrong.push(`${new Date(monday + offset).toISOString()}: ${got.label}, expected ${expected}`)
    }
    monday += 7 * DAY
    const jan4 = Date.UTC(new Date(monday + 6 * DAY).getUTCFullYear(), 0, 4) // of the year the week ends in
    if (jan4 >= monday && jan4 < monday + 7 * DAY) {
      year++
      week = 1
    } else {
      week++
    }
  }
  t.same(wrong, [])
})

t.test("a UTC month's turn, across a year and a leap day", async (t) => {
  t.same(utcMonth(at('2026-11-30T23:59:59.999Z')), { unit: 'month', label: '2026-11', start: at('2026-11-01T00:00:00Z'), end: at('2026-12-01T00:00:00Z') })
  t.equal(utcMonth(at('2026-12-01T00:00:00.000Z')).label, '2026-12')
  t.same(utcMonth(at('2026-12-31T23:59:59.999Z')), { unit: 'month', label: '2026-12', start: at('2026-12-01T00:00:00Z'), end: at('2027-01-01T00:00:00Z') })
  t.equal(utcMonth(at('2027-01-01T00:00:00.000Z')).label, '2027-01')
  t.equal(previousSpan(utcMonth(at('2027-01-01T00:00:00Z'))).label, '2026-12')
  t.equal(utcMonth(at('2028-02-29T12:00:00Z')).end, at('2028-03-01T00:00:00Z'), 'a leap February')
})

t.test('a period board lives until the end of the period after it, plus a margin', async (t) => {
  const week = isoWeek(at('2026-11-25T10:00:00Z')) // 2026-W48
  t.equal(keepUntil(week), at('2026-12-07T00:00:00Z') + PERIOD_KEEP_MARGIN_MS, 'W48 is "last week" through W49')
  const month = utcMonth(at('2026-12-15T10:00:00Z'))
  t.equal(keepUntil(month), at('2027-02-01T00:00:00Z') + PERIOD_KEEP_MARGIN_MS, 'December is "last month" through January')
  t.equal(nextSpan(month).label, '2027-01')
})

t.test("the window in which a time's periods are current: the week and the month both", async (t) => {
  // Week 2026-W49 runs Monday 30 November to Sunday 6 December: it spans two months.
  const november = periodWindow(at('2026-11-30T08:00:00Z'))
  t.same([november.week.label, november.month.label, november.lastWeek.label, november.lastMonth.label], ['2026-W49', '2026-11', '2026-W48', '2026-10'])
  t.same([november.from, november.until], [at('2026-11-30T00:00:00Z'), at('2026-12-01T00:00:00Z')])
  const december = periodWindow(at('2026-12-01T00:00:00Z'))
  t.same([december.week.label, december.month.label], ['2026-W49', '2026-12'])
  t.same([december.from, december.until], [at('2026-12-01T00:00:00Z'), at('2026-12-07T00:00:00Z')])
})

// Through Redis and the API.

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })
const raw = new Redis(server.url)
t.teardown(() => { raw.disconnect() })

let guilds = 0
const newGuild = (): string => String(1_500_000_000_000_000_000n + BigInt(++guilds))

/** Waits while Redis's clock is within 5 s of a week's or month's turn, so a test sees one period throughout. */
async function awayFromTurn (): Promise<number> {
  for (;;) {
    const now = await redisNow(raw as unknown as TestApp['redis'])
    const w = periodWindow(now)
    if (now - w.from > 5000 && w.until - now > 5000) return now
    await sleep(1000)
  }
}

async function fixture (t: Test) {
  const ctx = await buildTestApp(t, server.url)
  const guildId = newGuild()
  const { key } = await ctx.apiKeys.create({ guildId, plan: 'professional' })
  const now = await awayFromTurn()
  const p = periodWindow(now)
  const period = (label: string): string => ctx.keys.period(guildId, label)
  const get = async (path: string, headers: Record<string, string> = {}) =>
    await ctx.app.inject({ url: `/api/v1/servers/${guildId}${path}`, headers: { 'x-api-key': key, ...headers } })
  return { ...ctx, guildId, key, p, period, get }
}

/** A period board as user id -> XP. */
async function periodBoard (key: string): Promise<Record<string, number>> {
  const flat = await raw.zrange(key, 0, -1, 'WITHSCORES')
  const out: Record<string, number> = {}
  for (let i = 0; i < flat.length; i += 2) out[userIdFromBoardMember(flat[i] as string)] = Number(flat[i + 1])
  return out
}

t.test("awards count into this week's and this month's boards after the multiplier; set-XP, bulk writes and claims do not", async (t) => {
  const { writer, guildId, p, period } = await fixture(t)
  await writer.configureGuild(guildId, { multiplier: '0.29' })
  await writer.awardXp({ guildId, userId: '1', xp: 100 }) // 29
  await writer.awardXp({ guildId, userId: '1', xp: 100 }) // 29
  await writer.awardXp({ guildId, userId: '2', xp: 10 }) // 2
  await writer.awardXp({ guildId, userId: '3', xp: 1 }) // 0: no period XP
  await writer.setXp({ guildId, userId: '2', xp: 5000 })
  await writer.setXp({ guildId, userId: '4', xp: 700 })
  await writer.bulkSetMembers(guildId, [{ userId: '5', xp: 900 }, { userId: '1', xp: 10 }])
  await writer.claimDaily({ guildId, userId: '6' })
  for (const span of [p.week, p.month]) {
    const k = period(span.label)
    t.same(await raw.zrange(k, 0, -1, 'WITHSCORES'), [boardMember('2'), '2', boardMember('1'), '58'], `${span.label}: the gains only`)
  }
  t.equal(await raw.exists(period(p.lastWeek.label), period(p.lastMonth.label)), 0, 'nothing counts into a past period')
})

t.test("a period board's key expires at the end of the following period plus the margin", async (t) => {
  const { writer, guildId, p, period } = await fixture(t)
  await writer.awardXp({ guildId, userId: '1', xp: 10 })
  await writer.awardXp({ guildId, userId: '2', xp: 10 })
  t.equal(Number(await raw.call('PEXPIRETIME', period(p.week.label))), keepUntil(p.week))
  t.equal(Number(await raw.call('PEXPIRETIME', period(p.month.label))), keepUntil(p.month))
})

t.test("a period board's expiry is set by each call that adds a member to it (shown or hidden, one award or a batch), and by no other", async (t) => {
  const { writer, guildId, p, period } = await fixture(t)
  const boards = [period(p.week.label), period(p.month.label)]
  const expiries = async (): Promise<number[]> => await Promise.all(boards.map(async (k) => Number(await raw.call('PEXPIRETIME', k))))
  const forgotten = async (): Promise<void> => { for (const k of boards) await raw.persist(k) }
  // A hidden user's first award makes the boards (its score there is -(xp + 1)).
  await writer.setVisibility({ guildId, userId: '1', visible: false, reason: 'left' })
  await writer.awardXp({ guildId, userId: '1', xp: 10 })
  t.same(await expiries(), [keepUntil(p.week), keepUntil(p.month)], "a hidden member's first award sets it")
  // With the expiry taken off, awards to members already on both boards leave it off (no
  // PEXPIREAT on their path), and the first award that adds a member puts it back.
  await forgotten()
  await writer.awardXp({ guildId, userId: '1', xp: 10 })
  await writer.awardMany(guildId, [{ userId: '1', xp: 5 }, { userId: '1', xp: 5 }])
  t.same(await expiries(), [-1, -1], 'awards to members on both boards: no expiry set')
  await writer.awardMany(guildId, [{ userId: '1', xp: 5 }, { userId: '2', xp: 5 }])
  t.same(await expiries(), [keepUntil(p.week), keepUntil(p.month)], 'a batch that adds a member sets it')
  await forgotten()
  await writer.awardXp({ guildId, userId: '3', xp: 10 })
  t.same(await expiries(), [keepUntil(p.week), keepUntil(p.month)], 'an award that adds a member sets it')
  t.same(await periodBoard(boards[0] as string), { 1: -36, 2: 5, 3: 10 }, 'the gains, the hidden one encoded')
})

t.test('removing a member removes it from every period board: this and last week, this and last month', async (t) => {
  const { writer, guildId, p, period } = await fixture(t)
  await writer.awardXp({ guildId, userId: '1', xp: 40 })
  await writer.awardXp({ guildId, userId: '2', xp: 30 })
  // Last week's and last month's boards as earlier awards left them.
  for (const span of [p.lastWeek, p.lastMonth]) await raw.zadd(period(span.label), 70, boardMember('1'), 20, boardMember('2'))
  t.equal(await writer.removeMember({ guildId, userId: '1' }), true)
  for (const span of [p.week, p.month, p.lastWeek, p.lastMonth]) {
    t.same(await periodBoard(period(span.label)), { 2: span === p.week || span === p.month ? 30 : 20 }, `${span.label}: only member 2 is left`)
  }
})

t.test("Redis's clock decides the period, not the writer's: a writer whose clock is 9 days ahead (or behind) still counts into Redis's week", async (t) => {
  const { redis, keys, guildId, p, period } = await fixture(t)
  let xp = 0
  for (const skew of [9 * DAY, -9 * DAY, 40 * DAY]) {
    const clock = new RedisClock()
    clock.observe(Date.now() + skew)
    const skewed = new LeaderboardWriter(redis, keys, { clock })
    xp += 5
    t.match(await skewed.awardXp({ guildId, userId: '7', xp: 5 }), { gained: 5, xp })
    t.ok(Math.abs(clock.now() - Date.now()) < 60_000, `skew ${skew / DAY} days: the writer learned Redis's clock from the script`)
  }
  t.same(await periodBoard(period(p.week.label)), { 7: 15 })
  t.same(await periodBoard(period(p.month.label)), { 7: 15 })
  const clock = new RedisClock()
  clock.observe(Date.now() - 9 * DAY)
  const reader = new LeaderboardReader(redis, keys, clock)
  t.match((await reader.member(guildId, '7')), { weekly_xp: 15, monthly_xp: 15 }, 'a reader with a wrong clock reads the right week')
  t.match((await reader.page(guildId, 1, 10, 'week')).data, [{ user_id: '7', xp: 15 }])
})

t.test('the award script refuses a window that does not hold Redis time, changing nothing; one that does is applied', async (t) => {
  const { redis, keys, guildId, p, period } = await fixture(t)
  const k = keys.guild(guildId)
  const day = new Date(p.from).toISOString().slice(0, 10)
  const award = async (from: number, to: number, op: string) => await awardXp(redis, {
    ...k,
    ops: keys.operations(guildId, 1),
    opsPrev: keys.operations(guildId, 0),
    week: period(p.week.label),
    month: period(p.month.label),
    season: k.seasonCurrent,
    day: keys.day(guildId, day),
    dayGains: keys.dayGains(guildId, day),
    dayStart: keys.dayStart(guildId, day),
    cooldownHour: keys.cooldownHour(guildId, 1),
    cooldownHourPrev: keys.cooldownHour(guildId, 0),
    cooldownHourOld: keys.cooldownHour(guildId, 0),
    epoch: 0,
    seasonEndsAt: '',
    dayLabel: day,
    dayExpireAt: p.until + DAY,
    member: boardMember('9'),
    gain: 10,
    username: '',
    maxXp: 1e12,
    opId: op,
    opsTtlMs: 60_000,
    from,
    until: to,
    weekExpireAt: keepUntil(p.week),
    monthExpireAt: keepUntil(p.month),
    displayName: '',
    avatarUrl: ''
  })
  const before = await dataSnapshot(raw, `${keys.prefix}:*`)
  const now = await redisNow(redis)
  const late = await award(now + 60_000, now + 120_000, 'a')
  t.equal(late[0], -2, 'a window still to come')
  t.ok(Math.abs(Number(late[1]) - now) < 5000, "with Redis's time")
  t.equal((await award(now - 120_000, now - 60_000, 'b'))[0], -2, 'a window past')
  t.same(await dataSnapshot(raw, `${keys.prefix}:*`), before, 'nothing changed')
  t.same(await award(now - 60_000, now + 60_000, 'a'), [1, 10, 10, '', ''], 'the same operation, in a window holding now, is applied (the refusal was not remembered)')
  t.same(await periodBoard(period(p.week.label)), { 9: 10 })
})

t.test('a replayed award (same operation id) counts into the period boards once', async (t) => {
  const { writer, guildId, p, period } = await fixture(t)
  await writer.awardXp({ guildId, userId: '1', xp: 25, opId: 'msg-1' })
  await writer.awardXp({ guildId, userId: '1', xp: 25, opId: 'msg-1' })
  t.same(await periodBoard(period(p.week.label)), { 1: 25 })
  t.same(await periodBoard(period(p.month.label)), { 1: 25 })
})

/** A period board's entry under the linear curve: its level and progress are by the member's overall XP, `xp` the period's. */
function entry (rank: number, userId: string, username: string, overall: number, xp: number) {
  const { level, xp: within, required } = levelProgress('linear', overall)
  return { rank, user_id: userId, username, display_name: null, avatar_url: null, level, xp, level_progress: { xp: within, required }, rank_change: null }
}

t.test('GET ?period= ranks by XP gained in the period, ties by user_id as numbers; level is overall; total counts members with period XP', async (t) => {
  const { writer, guildId, p, period, get } = await fixture(t)
  await writer.configureGuild(guildId, { curve: 'linear' })
  await writer.setXp({ guildId, userId: '100', xp: 9000, username: 'veteran' }) // overall XP, no period XP
  await writer.awardXp({ guildId, userId: '100', xp: 50 })
  await writer.awardXp({ guildId, userId: '99', xp: 50, username: 'ninety-nine' })
  await writer.awardXp({ guildId, userId: '5', xp: 300 })
  await writer.setXp({ guildId, userId: '6', xp: 100_000 }) // no period XP: not on the period boards
  await raw.zadd(period(p.lastWeek.label), 11, boardMember('6'), 12, boardMember('5'))
  await raw.zadd(period(p.lastMonth.label), 400, boardMember('6'))

  const week = (await get('/leaderboard?period=week')).json()
  t.same(week, {
    data: [
      entry(1, '5', '5', 300, 300),
      entry(2, '99', 'ninety-nine', 50, 50),
      entry(3, '100', 'veteran', 9050, 50)
    ],
    total: 3,
    page: 1
  })
  t.same((await get('/leaderboard?period=month&limit=1&page=3')).json(), { data: [week.data[2]], total: 3, page: 3 }, 'paged like the all-time board')
  t.same((await get('/leaderboard?period=month&page=9')).json(), { data: [], total: 3, page: 9 })
  t.same((await get('/leaderboard?period=last_week')).json().data.map((e: { user_id: string, xp: number }) => [e.user_id, e.xp]), [['5', 12], ['6', 11]])
  t.same((await get('/leaderboard?period=last_month')).json(), {
    data: [entry(1, '6', '6', 100_000, 400)], total: 1, page: 1
  })
  t.same((await get('/leaderboard?period=all')).json(), (await get('/leaderboard')).json(), 'all is the default')
  t.equal((await get('/leaderboard')).json().total, 4)

  const member = (await get('/members/100')).json()
  t.match(member, { xp: 9050, weekly_xp: 50, monthly_xp: 50 })
  t.match((await get('/members/6')).json(), { weekly_xp: 0, monthly_xp: 0 }, 'last periods do not count as current')
})

t.test('the all-time aggregates stay exact and the period boards hold exactly the gains, through awards, sets and removals', async (t) => {
  const { writer, redis, keys, guildId, p, period } = await fixture(t)
  await writer.configureGuild(guildId, { multiplier: '1.37' })
  const gains = new Map<string, number>()
  for (let i = 0; i < 300; i++) {
    const userId = String(1 + (i * 17) % 40)
    if (i % 23 === 0) {
      await writer.removeMember({ guildId, userId })
      gains.delete(userId)
    } else if (i % 11 === 0) {
      await writer.setXp({ guildId, userId, xp: i * 3 })
    } else {
      const { gained } = await writer.awardXp({ guildId, userId, xp: 1 + (i * 31) % 500 })
      if (gained > 0) gains.set(userId, (gains.get(userId) ?? 0) + gained)
    }
  }
  const k = keys.guild(guildId)
  t.same(await storedStats(redis, k), statsOf([...(await boardOf(redis, k)).values()]), 'stats equal a full scan')
  const expected = Object.fromEntries(gains)
  t.same(await periodBoard(period(p.week.label)), expected, 'the week holds each member\'s gains since it last joined')
  t.same(await periodBoard(period(p.month.label)), expected)
})

t.test('period: validated; a period board has an ETag of its own that moves with writes and revalidates', async (t) => {
  const { writer, guildId, get } = await fixture(t)
  await writer.awardXp({ guildId, userId: '1', xp: 10 })
  for (const bad of ['year', 'WEEK', '', 'week&period=month']) {
    const res = await get(`/leaderboard?period=${bad}`)
    t.equal(res.statusCode, 400, `period=${bad}`)
    t.match(res.json(), { code: 'invalid_parameter', message: 'period must be one of all, week, month, last_week, last_month' })
  }
  const all = await get('/leaderboard')
  const week = await get('/leaderboard?period=week')
  t.not(week.headers.etag, all.headers.etag, 'the week board depends on the day, the all-time board does not')
  t.equal((await get('/leaderboard?period=week', { 'if-none-match': String(week.headers.etag) })).statusCode, 304)
  await writer.awardXp({ guildId, userId: '2', xp: 20 })
  const after = await get('/leaderboard?period=week', { 'if-none-match': String(week.headers.etag) })
  t.equal(after.statusCode, 200, 'a write changes the tag')
  t.not(after.headers.etag, week.headers.etag)
  t.equal(after.json().total, 2)
  t.equal((await get('/leaderboard?period=week', { 'if-none-match': String(after.headers.etag) })).statusCode, 304, 'the new tag revalidates')
})
