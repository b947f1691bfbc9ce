// History by Redis's clock, moved by a test (test/helpers/fake-clock.ts): each day of a server
// (its time zone) closes once it ended, by the calendar ticker, and keeps every member's XP,
// gain and rank at its end and the server's stats; rank_change compares with the last closed
// day; a day no instance was running for closes when one starts, exactly as it ended, however
// the board changed since; the close is exact under writes, once across closers, and the same
// when another closer takes over from one that died mid-way; days past
// history_days go; no 304 survives a close.
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { FakeClock, fakeClockRedis } from './helpers/fake-clock.js'
import { createRedis, type RedisClient } from '../src/redis/client.js'
import { boardMember, KeyBuilder, userIdFromBoardMember } from '../src/redis/keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { RedisClock } from '../src/redis/clock.js'
import { DayCloser } from '../src/history/day-close.js'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { monitored } from './helpers/redis-server.js'
import { CLOSE_CONNECTION_NAME } from '../src/plugins/calendar-ticker.js'
import { Random } from '../src/random.js'

const GUILD = '1300000000000000001'
const ZONE = 'America/Los_Angeles'
/** 00:00 of a November 2026 day in Los Angeles (UTC-8), plus `ms`. */
const la = (day: number, ms = 0): number => Date.UTC(2026, 10, day, 8) + ms

interface Fixture {
  clock: FakeClock
  url: string
  /** The Redis, to stall it (SIGSTOP). */
  pid: number
  keys: KeyBuilder
  raw: RedisClient
  writer: LeaderboardWriter
  reader: LeaderboardReader
}

async function fixture (t: Test, start: number, settings = {}): Promise<Fixture> {
  const clock = FakeClock.create(t)
  clock.set(start)
  const server = await fakeClockRedis(t, clock)
  const keys = new KeyBuilder('h')
  const raw = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 10_000 })
  t.teardown(() => { raw.disconnect() })
  const writer = new LeaderboardWriter(raw, keys, { clock: new RedisClock() })
  await writer.configureGuild(GUILD, { season: { every: 'none', timezone: ZONE }, ...settings })
  return { clock, url: server.url, pid: server.pid, keys, raw, writer, reader: new LeaderboardReader(raw, keys) }
}

/** An app on the fixture's Redis whose calendar ticker looks every 50 ms, and a key of the server. */
async function instance (t: Test, f: Fixture): Promise<TestApp & { get: (path: string, headers?: Record<string, string>) => Promise<{ status: number, body: any, etag: string }> }> {
  const ctx = await buildTestApp(t, f.url, { redisPrefix: 'h', calendarTickMs: 50 })
  const { key } = await ctx.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await ctx.app.inject({ url: `/api/v1/servers/${GUILD}${path}`, headers: { 'x-api-key': key, ...headers } })
    return { status: res.statusCode, body: res.body === '' ? null : res.json(), etag: String(res.headers.etag) }
  }
  return { ...ctx, get }
}

async function closedThrough (f: Fixture): Promise<string | null> {
  return await f.raw.hget(f.keys.guild(GUILD).hist, 'closed_through')
}

/** Waits until the server's days are closed through `day`. */
async function closed (f: Fixture, day: string): Promise<void> {
  for (let waited = 0; ((await closedThrough(f)) ?? '') < day; waited += 20) {
    if (waited > 60_000) throw new Error(`${day} was not closed (closed through ${String(await closedThrough(f))})`)
    await sleep(20)
  }
}

const award = async (f: Fixture, userId: string, xp: number): Promise<unknown> => await f.writer.awardXp({ guildId: GUILD, userId, xp })
const set = async (f: Fixture, userId: string, xp: number): Promise<unknown> => await f.writer.setXp({ guildId: GUILD, userId, xp })

/** History begins on the 20th; on the 21st `count` members are set; the clock is just past the 21st's end, its first close due. */
async function firstDayOf (t: Test, count: number): Promise<Fixture> {
  const f = await fixture(t, la(20, 20 * 3_600_000))
  await award(f, '1', 1)
  f.clock.set(la(21, 3_600_000))
  await f.writer.bulkSetMembers(GUILD, Array.from({ length: count }, (_, i) => ({ userId: String(100 + i), xp: i })))
  f.clock.set(la(22, 5000))
  return f
}

t.test('three closed days: each member\'s XP, gain and rank at each day\'s end, the server\'s stats, and rank_change against the last closed day', async (t) => {
  const f = await fixture(t, la(20, 10 * 3_600_000))
  const app = await instance(t, f)
  // The 20th: history starts in its middle, so it is not closed (its first hours were not kept).
  await award(f, '1', 10)
  await award(f, '2', 20)
  await award(f, '4', 40)
  f.clock.set(la(21, 1000))
  await sleep(200)
  t.equal(await closedThrough(f), null, 'the 20th, history\'s first day, began before it: not closed')
  t.same((await app.get('/leaderboard')).body.data.map((e: { rank_change: unknown }) => e.rank_change), [null, null, null], 'no closed day: no rank_change')
  await award(f, '1', 100) // 110
  await set(f, '2', 500)
  await award(f, '3', 30)
  f.clock.set(la(22, 1000))
  await closed(f, '2026-11-21')
  await award(f, '4', 1000) // 1040
  f.clock.set(la(23, 1000))
  await closed(f, '2026-11-22')
  t.same((await app.get('/leaderboard')).body.data.map((e: { user_id: string, rank_change: unknown }) => [e.user_id, e.rank_change]),
    [['4', 0], ['2', 0], ['1', 0], ['3', 0]], 'nothing moved since the 22nd ended')
  await award(f, '3', 2000) // 2030
  await set(f, '2', 0)
  f.clock.set(la(24, 1000))
  await closed(f, '2026-11-23')
  await set(f, '2', 5000)
  await award(f, '5', 1)

  const board = (await app.get('/leaderboard')).body.data
  t.same(board.map((e: { user_id: string, rank: number, rank_change: unknown }) => [e.user_id, e.rank, e.rank_change]),
    [['2', 1, 3], ['3', 2, -1], ['4', 3, -1], ['1', 4, -1], ['5', 5, null]], 'rank at the 23rd\'s end minus rank now; null for a member new since')
  t.match((await app.get('/members/2')).body, { rank: 1, rank_change: 3 }, 'the member record')
  t.same((await app.get('/members/3/around?radius=1')).body.data.map((e: { user_id: string, rank_change: unknown }) => [e.user_id, e.rank_change]),
    [['2', 3], ['3', -1], ['4', -1]], 'around entries')

  const history = async (userId: string) => (await app.get(`/members/${userId}/history?days=7`)).body.data
  t.same(await history('1'), [
    { date: '2026-11-21', xp: 110, xp_gained: 100, rank: 2 },
    { date: '2026-11-22', xp: 110, xp_gained: 0, rank: 3 },
    { date: '2026-11-23', xp: 110, xp_gained: 0, rank: 3 }
  ])
  t.same(await history('3'), [
    { date: '2026-11-21', xp: 30, xp_gained: 30, rank: 4 },
    { date: '2026-11-22', xp: 30, xp_gained: 0, rank: 4 },
    { date: '2026-11-23', xp: 2030, xp_gained: 2000, rank: 1 }
  ])
  t.same(await history('2'), [
    { date: '2026-11-21', xp: 500, xp_gained: 0, rank: 1 },
    { date: '2026-11-22', xp: 500, xp_gained: 0, rank: 2 },
    { date: '2026-11-23', xp: 0, xp_gained: 0, rank: 4 }
  ], 'set XP is no gain; the XP set since the 23rd ended is not the 23rd\'s')
  t.same(await history('5'), [
    { date: '2026-11-21', xp: 0, xp_gained: 0, rank: null },
    { date: '2026-11-22', xp: 0, xp_gained: 0, rank: null },
    { date: '2026-11-23', xp: 0, xp_gained: 0, rank: null }
  ], 'a member new since: no rank on the days before it')
  t.same((await app.get('/members/4/history?days=2')).body.data.map((d: { date: string }) => d.date), ['2026-11-22', '2026-11-23'], 'days=2: the last two')
  t.equal((await app.get('/members/99/history')).status, 404)
  t.same((await app.get('/stats/history')).body.data, [
    { date: '2026-11-21', total_members: 4, total_xp: 680, active_members: 2, xp_gained: 130 },
    { date: '2026-11-22', total_members: 4, total_xp: 1680, active_members: 1, xp_gained: 1000 },
    { date: '2026-11-23', total_members: 3, total_xp: 3180, active_members: 1, xp_gained: 2000 }
  ])
})

t.test('a day no instance ran at the end of closes when one starts, as it stood at its end, though members changed, left and joined since', async (t) => {
  const f = await fixture(t, la(20, 20 * 3_600_000))
  await award(f, '1', 1) // history starts on the 20th: the 21st is its first whole day
  f.clock.set(la(21, 3_600_000))
  for (const [user, xp] of [['1', 100], ['2', 200], ['3', 300], ['4', 400]] as const) await award(f, user, xp)
  // No instance anywhere: writers go on past midnight, and past the next.
  f.clock.set(la(22, 5000))
  await award(f, '1', 1000) // 1101: above everyone now, second to last at the 21st's end
  await f.writer.removeMember({ guildId: GUILD, userId: '3' })
  await award(f, '5', 5000) // joined after the 21st
  await set(f, '4', 1)
  f.clock.set(la(23, 5000))
  await award(f, '2', 7) // 207, touched only on the 23rd
  await award(f, '4', 2000) // 2001, touched on both
  f.clock.set(la(24, 60_000))
  await award(f, '2', 1)

  const app = await instance(t, f)
  await closed(f, '2026-11-23')
  t.same((await app.get('/stats/history')).body.data, [
    { date: '2026-11-21', total_members: 4, total_xp: 1001, active_members: 4, xp_gained: 1000 },
    { date: '2026-11-22', total_members: 4, total_xp: 6302, active_members: 2, xp_gained: 6000 },
    { date: '2026-11-23', total_members: 4, total_xp: 8309, active_members: 2, xp_gained: 2007 }
  ], 'each day as it ended: on the 21st member 3 was there, member 5 was not')
  const history = async (userId: string) => (await app.get(`/members/${userId}/history`)).body.data.map((d: { xp: number, rank: number | null }) => [d.xp, d.rank])
  t.same(await history('1'), [[101, 4], [1101, 2], [1101, 3]])
  t.same(await history('2'), [[200, 3], [200, 3], [207, 4]], 'touched only on the 23rd: its value at the 21st\'s end is in the 23rd\'s day-start')
  t.same(await history('4'), [[400, 1], [1, 4], [2001, 2]])
  t.same(await history('5'), [[0, null], [5000, 1], [5000, 1]])
})

t.test('an instance closes days on a connection of its own, not its requests\' (where a first close\'s change records, written whole, would hold every read up behind them)', async (t) => {
  const f = await firstDayOf(t, 2000)
  // Where the close's commands come from: its first step (7 keys, the lease first) and its SET.
  const sources = new Set<string>()
  let app: Awaited<ReturnType<typeof instance>> | undefined
  await monitored(f.url, (args, source) => {
    const command = args[0]?.toLowerCase()
    const begin = (command === 'eval' || command === 'evalsha') && args[2] === '7' && args[3] === f.keys.guild(GUILD).histLease
    if (begin || (command === 'set' && args[1]?.includes(':hist:changes-staging:') === true)) sources.add(source)
  }, async () => {
    app = await instance(t, f)
    await closed(f, '2026-11-21')
  })
  if (app === undefined) throw new Error('no app')
  t.equal((await app.get('/stats/history')).body.data.length, 1, 'the day closed')
  const named = String(await f.raw.client('LIST')).split('\n').find((line) => line.includes(` name=${CLOSE_CONNECTION_NAME} `))
  t.ok(named !== undefined, `a connection named ${CLOSE_CONNECTION_NAME}`)
  t.same([...sources], [/ addr=(\S+) /.exec(named ?? '')?.[1]], 'the close\'s commands all come from it')
})

t.test('an instance that closes while a close is held up by a stalled Redis cuts it short, not waiting for its commands\' 60 s', async (t) => {
  const f = await firstDayOf(t, 20_000)
  const app = await instance(t, f)
  // Its close has begun (the lease is taken) and is far from done when Redis stops.
  for (let waited = 0; await f.raw.exists(f.keys.guild(GUILD).histLease) === 0; waited++) {
    if (waited > 30_000) throw new Error('the close never began')
    await sleep(1)
  }
  process.kill(f.pid, 'SIGSTOP')
  const started = performance.now()
  try {
    await app.app.close()
  } finally {
    // Whatever happened: a stopped Redis would hold its own teardown (SIGTERM waits for SIGCONT).
    process.kill(f.pid, 'SIGCONT')
  }
  const ms = performance.now() - started
  // An app closes in about 10 s with Redis stalled and no close running (a command of its own
  // waits out the test app's REDIS_COMMAND_TIMEOUT_MS, 10 s); a close's command would hold it 60 s.
  t.ok(ms < 30_000, `the app closed in ${Math.round(ms)} ms, without waiting out the close's command`)
  t.equal(await closedThrough(f), null, 'the close was cut short (a closer that dies mid-close is taken over: see below)')
})

t.test('the close is exact under writes: awards, sets, removals and new members while it runs, a few members a call', async (t) => {
  const f = await fixture(t, la(20, 20 * 3_600_000))
  await award(f, '1', 1)
  f.clock.set(la(21, 1000))
  const random = new Random(28)
  const members = new Map<string, number>()
  for (let i = 1; i <= 300; i++) {
    const userId = String(1000 + i)
    const xp = random.int(0, 5000)
    await set(f, userId, xp)
    members.set(userId, xp)
  }
  const ends = new Map([...members, ['1', 1]])
  f.clock.set(la(22, 1000))
  const closer = new DayCloser(f.raw, f.keys, { chunk: 7 })
  const writing = { on: true }
  const removed = new Set<string>()
  const writes = (async () => {
    let n = 0
    while (writing.on) {
      const userId = String(1000 + random.int(1, 330))
      const roll = random.next()
      if (roll < 0.5) await award(f, userId, random.int(1, 3000))
      else if (roll < 0.8) await set(f, userId, random.int(0, 9000))
      else if (await f.writer.removeMember({ guildId: GUILD, userId })) removed.add(userId)
      n++
    }
    return n
  })()
  const days = await closer.closeDue(GUILD)
  writing.on = false
  const n = await writes
  t.same(days, ['2026-11-21'])
  t.ok(n > 50, `${n} writes while it closed`)
  // Ranks at the 21st's end, as the contract orders them: XP descending, then user id ascending.
  const order = [...ends].sort(([a, x], [b, y]) => y - x || Number(a) - Number(b)).map(([id]) => id)
  const wrong: string[] = []
  t.ok(removed.size > 5, `${removed.size} members removed while it closed`)
  for (const userId of order) {
    // A member removed since lost its history with the rest of its data (back since, it starts again).
    if (removed.has(userId)) continue
    const [day] = (await f.reader.readMemberHistory(GUILD, userId, 1)).value?.data ?? []
    const expected = { date: '2026-11-21', xp: ends.get(userId), rank: order.indexOf(userId) + 1 }
    if (day?.xp !== expected.xp || day?.rank !== expected.rank) wrong.push(`${userId}: ${JSON.stringify(day)}, expected ${JSON.stringify(expected)}`)
  }
  t.same(wrong, [])
  const stats = (await f.reader.readStatsHistory(GUILD, 1)).value.data[0]
  t.same(stats, {
    date: '2026-11-21',
    total_members: [...ends.values()].filter((x) => x > 0).length,
    total_xp: [...ends.values()].reduce((a, b) => a + b, 0),
    active_members: 0,
    xp_gained: 0
  })
  t.equal(await f.raw.exists(f.keys.guild(GUILD).histSnapshot, f.keys.guild(GUILD).histOrder, f.keys.dayStart(GUILD, '2026-11-21'), f.keys.day(GUILD, '2026-11-21'), f.keys.dayGains(GUILD, '2026-11-21')), 0,
    'the keys the close read from are gone')
})

t.test('a day whose first write gains nothing: its keys still expire (a day no instance closes goes), and the close keeps the members it touched without a gain', async (t) => {
  const f = await fixture(t, la(20, 20 * 3_600_000))
  await award(f, '1', 1)
  f.clock.set(la(21, 1000))
  await f.writer.bulkSetMembers(GUILD, [{ userId: '2', xp: 500 }, { userId: '3', xp: 40 }])
  await set(f, '1', 300)
  await award(f, '3', 20)
  const day = '2026-11-21'
  t.ok(await f.raw.pttl(f.keys.dayStart(GUILD, day)) > 0, 'the day-start hash expires')
  t.ok(await f.raw.pttl(f.keys.dayGains(GUILD, day)) > 0, "the day's gains, begun after the day's first write, expire too")
  t.same(await f.raw.hgetall(f.keys.dayGains(GUILD, day)), { [boardMember('3')]: '20' }, "the day's gains hold the gains alone")
  f.clock.set(la(22, 1000))
  t.same(await new DayCloser(f.raw, f.keys, { chunk: 2 }).closeDue(GUILD), [day])
  const history = async (userId: string) => (await f.reader.readMemberHistory(GUILD, userId, 1)).value?.data
  t.same(await history('1'), [{ date: day, xp: 300, xp_gained: 0, rank: 2 }], 'set outright: its XP and rank at the end')
  t.same(await history('2'), [{ date: day, xp: 500, xp_gained: 0, rank: 1 }], 'set in bulk')
  t.same(await history('3'), [{ date: day, xp: 60, xp_gained: 20, rank: 3 }], 'set in bulk, then awarded: the gain alone')
  t.same((await f.reader.readStatsHistory(GUILD, 1)).value.data, [{ date: day, total_members: 3, total_xp: 860, active_members: 1, xp_gained: 20 }])
})

t.test('two closers at once: each day closes once, and as it ended', async (t) => {
  const f = await fixture(t, la(20, 20 * 3_600_000))
  await award(f, '1', 1)
  f.clock.set(la(21, 1000))
  await award(f, '1', 10)
  f.clock.set(la(22, 1000))
  await award(f, '2', 20)
  f.clock.set(la(23, 1000))
  const [a, b] = await Promise.all([new DayCloser(f.raw, f.keys, { chunk: 1 }).closeDue(GUILD), new DayCloser(f.raw, f.keys, { chunk: 1 }).closeDue(GUILD)])
  t.same([...a, ...b].sort(), ['2026-11-21', '2026-11-22'], 'each day once')
  t.same((await f.reader.readStatsHistory(GUILD, 5)).value.data.map((d) => [d.date, d.total_xp, d.xp_gained]),
    [['2026-11-21', 11, 10], ['2026-11-22', 31, 20]])
  t.same(await new DayCloser(f.raw, f.keys).closeDue(GUILD), [], 'nothing left to close')
})

t.test('history_days: older closed days go, the newest are kept; days missed longer ago than that are not closed', async (t) => {
  const f = await fixture(t, la(10, 20 * 3_600_000), { historyDays: 2 })
  await award(f, '1', 1)
  const closer = new DayCloser(f.raw, f.keys)
  for (let day = 11; day <= 14; day++) {
    f.clock.set(la(day, 1000))
    await award(f, '1', day)
    await closer.closeDue(GUILD)
  }
  t.same((await f.reader.readStatsHistory(GUILD, 30)).value.data.map((d) => d.date), ['2026-11-12', '2026-11-13'])
  const keys = [f.keys.histRanks(GUILD, '2026-11-11'), f.keys.histChanges(GUILD, '2026-11-11')]
  t.equal(await f.raw.exists(...keys), 0, 'the 11th\'s ranks and changes are gone')
  t.same(Object.keys(await f.raw.hgetall(f.keys.guild(GUILD).histStats)).sort(), ['2026-11-12', '2026-11-13'])
  // Ten days with no instance: only the last two are closed.
  f.clock.set(la(24, 1000))
  await award(f, '2', 1)
  t.same(await closer.closeDue(GUILD), ['2026-11-22', '2026-11-23'])
  t.same((await f.reader.readStatsHistory(GUILD, 30)).value.data.map((d) => d.date), ['2026-11-22', '2026-11-23'])
  t.same((await f.reader.readMemberHistory(GUILD, '1', 30)).value?.data.map((d) => [d.date, d.xp]), [['2026-11-22', 51], ['2026-11-23', 51]])
})

t.test('no 304 survives a rollover: a day\'s close, and a season\'s end, change every ETag of the server', async (t) => {
  // Sunday 22 November, 23:59:59 in Los Angeles: the day and the week end together.
  const f = await fixture(t, la(22, 12 * 3_600_000), { season: { every: 'week', timezone: ZONE } })
  await award(f, '1', 5)
  f.clock.set(la(23, 60_000)) // Monday: the 22nd is not history's first whole day; the 23rd is
  await award(f, '1', 10)
  await award(f, '2', 20)
  const app = await instance(t, f)
  await sleep(300)
  const paths = ['/leaderboard', '/leaderboard?season=current', '/members/1', '/members/1/history', '/stats/history', '/seasons']
  const before = new Map<string, string>()
  for (const path of paths) {
    const res = await app.get(path)
    t.equal(res.status, 200, path)
    before.set(path, res.etag)
    t.equal((await app.get(path, { 'if-none-match': res.etag })).status, 304, `${path}: 304 while nothing changes`)
  }
  t.equal(await f.raw.hget(f.keys.guild(GUILD).seasons, 'current'), '2', 'the award on Monday ended the first week')
  f.clock.set(la(30, 1000)) // the next Monday: the week ended, and every day since the 23rd
  await closed(f, '2026-11-29')
  for (let waited = 0; Number(await f.raw.hget(f.keys.guild(GUILD).seasons, 'current') ?? 1) < 3; waited += 20) {
    if (waited > 30_000) throw new Error('the season did not end')
    await sleep(20)
  }
  for (const path of paths) {
    const res = await app.get(path, { 'if-none-match': before.get(path) ?? '' })
    t.equal(res.status, 200, `${path}: a new body and tag after the rollover`)
    t.not(res.etag, before.get(path))
  }
  t.same((await app.get('/leaderboard?season=current')).body, { data: [], total: 0, page: 1 }, 'the new season has no XP yet')
  t.equal((await app.get('/members/1/history')).body.data.length, 7)
})

t.test('members without a record (never named) get one to keep their history index; a removed member\'s index is not given again', async (t) => {
  const f = await fixture(t, la(20, 20 * 3_600_000))
  await award(f, '1', 1)
  f.clock.set(la(21, 1000))
  await award(f, '2', 2)
  f.clock.set(la(22, 1000))
  await new DayCloser(f.raw, f.keys).closeDue(GUILD)
  const k = f.keys.guild(GUILD)
  const record = await f.raw.hget(k.members, boardMember('2'))
  t.match(record?.split('\x1f'), ['::', /^\d+$/, '', ''], 'a record with only the index')
  await f.writer.removeMember({ guildId: GUILD, userId: '1' })
  await award(f, '1', 3)
  f.clock.set(la(23, 1000))
  await new DayCloser(f.raw, f.keys).closeDue(GUILD)
  t.equal(await f.raw.hget(k.hist, 'next_index'), '3', 'member 1 came back with a new index')
  t.same((await f.reader.readMemberHistory(GUILD, '1', 5)).value?.data.map((d) => d.rank), [null, 1], 'its history starts again')
})

/** A member's rank at a closed day's end in its ranks string (3 bytes, big-endian, at its history index). */
const rankAt = (ranks: Buffer, index: number): number => ranks.readUIntBE(3 * index, 3)

/** A closed day's change records: index (3 bytes), visible XP at the day's start (5; all ones: none), XP gained (5). */
function changeRecords (changes: Buffer): Array<[index: number, start: number, gained: number]> {
  const records: Array<[number, number, number]> = []
  for (let at = 0; at < changes.length; at += 13) records.push([changes.readUIntBE(at, 3), changes.readUIntBE(at + 3, 5), changes.readUIntBE(at + 8, 5)])
  return records
}
const NO_XP = 2 ** 40 - 1

t.test('a closed day\'s ranks and change records: their layout, each member\'s at its history index, and no more memory than their length', async (t) => {
  const f = await fixture(t, la(20, 20 * 3_600_000))
  await award(f, '1', 1)
  f.clock.set(la(21, 1000))
  const N = 3000
  const xp = (i: number, day: number): number => (i * 7919 + day * 104_729) % 50_000
  await f.writer.bulkSetMembers(GUILD, Array.from({ length: N }, (_, i) => ({ userId: String(10_000 + i), xp: xp(i, 21) })))
  f.clock.set(la(22, 1000))
  const closer = new DayCloser(f.raw, f.keys, { chunk: 250 })
  t.same(await closer.closeDue(GUILD), ['2026-11-21'])
  // The 22nd: every third member gains, one is set.
  const gains = new Map<string, number>()
  for (let i = 0; i < N; i += 3) gains.set(String(10_000 + i), 1 + (i % 97))
  await f.writer.awardMany(GUILD, [...gains].map(([userId, gain]) => ({ userId, xp: gain })))
  await set(f, '10001', 77)
  f.clock.set(la(23, 1000))
  t.same(await closer.closeDue(GUILD), ['2026-11-22'])

  const k = f.keys.guild(GUILD)
  const records = await f.raw.hgetall(k.members)
  const indexOf = (userId: string): number => Number((records[boardMember(userId)] ?? '').split('\x1f')[1])
  const board = await f.raw.zrevrange(k.board, 0, -1)
  const ranks = await f.raw.getBuffer(k.histRanksLatest) ?? Buffer.alloc(0)
  t.equal(ranks.length, 3 * (N + 1), 'the ranks: 3 bytes for each history index given')
  const wrongRanks = board.filter((member, i) => rankAt(ranks, indexOf(userIdFromBoardMember(member))) !== i + 1)
  t.same(wrongRanks, [], 'each member\'s rank at the 22nd\'s end at its index')

  const changes = changeRecords(await f.raw.getBuffer(f.keys.histChanges(GUILD, '2026-11-22')) ?? Buffer.alloc(0))
  t.equal(changes.length, gains.size + 1, 'a record for each member the 22nd touched')
  t.same(changes.map(([index]) => index), changes.map(([index]) => index).sort((a, b) => a - b), 'in order of history index')
  const byIndex = new Map(changes.map(([index, start, gained]) => [index, [start, gained]]))
  t.same(byIndex.get(indexOf('10001')), [xp(1, 21), 0], 'set: its XP at the day\'s start, no gain')
  t.same(byIndex.get(indexOf('10003')), [xp(3, 21), 1 + 3], 'an award: its XP at the day\'s start and its gain')
  t.equal(changeRecords(await f.raw.getBuffer(f.keys.histChanges(GUILD, '2026-11-21')) ?? Buffer.alloc(0)).find(([index]) => index === indexOf('10001'))?.[1], NO_XP,
    'a member not on the board at the 21st\'s start: all ones')

  // Built a chunk at a time, a string grows by doubling (by 1 MB past 1 MB): what is kept is
  // allocated to its length, to the allocator's size class (at most a quarter more).
  for (const key of [k.histRanksLatest, f.keys.histRanks(GUILD, '2026-11-21'), f.keys.histChanges(GUILD, '2026-11-21'), f.keys.histChanges(GUILD, '2026-11-22')]) {
    const [length, used] = await Promise.all([f.raw.strlen(key), f.raw.memory('USAGE', key, 'SAMPLES', 0)])
    t.ok(Number(used) <= 1.25 * length + 200, `${key}: ${String(used)} bytes of memory for ${length}`)
  }
})

t.test('a closed day as the close before this layout\'s allocation change wrote it (ranks grown by BITFIELD, changes by APPEND) reads as it did', async (t) => {
  // Written key by key, the way those closes left them: nothing else of the server but its board
  // and member records (with their history indexes), so the reads see only this layout.
  const f = await fixture(t, la(23, 1000))
  const k = f.keys.guild(GUILD)
  const indexes: Record<string, number> = { 1: 0, 2: 1, 3: 2 }
  for (const [userId, index] of Object.entries(indexes)) await f.raw.hset(k.members, boardMember(userId), `::user${userId}\x1f${index}\x1f\x1f`)
  await f.raw.zadd(k.board, 150, boardMember('1'), 200, boardMember('2'), 350, boardMember('3'))
  const ranksOf = (ranks: Record<string, number>): Array<string | number> =>
    Object.entries(ranks).flatMap(([userId, rank]) => ['SET', 'u24', `#${String(indexes[userId])}`, rank])
  await f.raw.call('BITFIELD', f.keys.histRanks(GUILD, '2026-11-21'), ...ranksOf({ 1: 2, 2: 1, 3: 3 }))
  await f.raw.call('BITFIELD', k.histRanksLatest, ...ranksOf({ 1: 3, 2: 2, 3: 1 }))
  const change = (index: number, start: number, gained: number): Buffer => {
    const record = Buffer.alloc(13)
    record.writeUIntBE(index, 0, 3)
    record.writeUIntBE(start, 3, 5)
    record.writeUIntBE(gained, 8, 5)
    return record
  }
  for (const record of [change(0, NO_XP, 100), change(1, NO_XP, 200), change(2, NO_XP, 50)]) await f.raw.append(f.keys.histChanges(GUILD, '2026-11-21'), record)
  for (const record of [change(0, 100, 50), change(2, 50, 300)]) await f.raw.append(f.keys.histChanges(GUILD, '2026-11-22'), record)
  await f.raw.hset(k.histStats, '2026-11-21', '3:350:3:350', '2026-11-22', '3:700:2:350')
  await f.raw.hset(k.hist, 'since', String(la(20, 1000)), 'closed_through', '2026-11-22', 'closed_from', '2026-11-21', 'latest_day', '2026-11-22', 'next_index', '3')

  const history = async (userId: string) => (await f.reader.readMemberHistory(GUILD, userId, 30)).value?.data
  t.same(await history('1'), [{ date: '2026-11-21', xp: 100, xp_gained: 100, rank: 2 }, { date: '2026-11-22', xp: 150, xp_gained: 50, rank: 3 }])
  t.same(await history('2'), [{ date: '2026-11-21', xp: 200, xp_gained: 200, rank: 1 }, { date: '2026-11-22', xp: 200, xp_gained: 0, rank: 2 }])
  t.same(await history('3'), [{ date: '2026-11-21', xp: 50, xp_gained: 50, rank: 3 }, { date: '2026-11-22', xp: 350, xp_gained: 300, rank: 1 }])
  t.same((await f.reader.readStatsHistory(GUILD, 30)).value.data, [
    { date: '2026-11-21', total_members: 3, total_xp: 350, active_members: 3, xp_gained: 350 },
    { date: '2026-11-22', total_members: 3, total_xp: 700, active_members: 2, xp_gained: 350 }
  ])
  // The next close goes on from it: the 23rd's ranks become the latest, the 22nd's keep their day's name.
  await award(f, '1', 1000) // 1150
  f.clock.set(la(24, 1000))
  t.same(await new DayCloser(f.raw, f.keys).closeDue(GUILD), ['2026-11-23'])
  t.same((await history('1'))?.map((d) => [d.date, d.xp, d.rank]), [['2026-11-21', 100, 2], ['2026-11-22', 150, 3], ['2026-11-23', 1150, 1]])
  t.same((await history('3'))?.map((d) => [d.date, d.xp, d.rank]), [['2026-11-21', 50, 3], ['2026-11-22', 350, 1], ['2026-11-23', 350, 2]])
})

t.test("a day begun by a version that kept the day's gains in a sorted set (0 for a member touched without a gain): its later gains add to them, the daily cap counts both, and its close reads both", async (t) => {
  const f = await fixture(t, la(20, 20 * 3_600_000), { dailyXpCap: 100 })
  await award(f, '1', 1)
  f.clock.set(la(21, 1000))
  const day = '2026-11-21'
  await award(f, '1', 10)
  await award(f, '2', 50)
  await set(f, '3', 700)
  // What the earlier version wrote for these writes: its gains and first touches, 0 for the set.
  const gains = f.keys.dayGains(GUILD, day)
  const legacy = f.keys.day(GUILD, day)
  const fields = await f.raw.hgetall(gains)
  await f.raw.zadd(legacy, ...Object.entries(fields).flatMap(([member, xp]) => [xp, member]), 0, boardMember('3'))
  await f.raw.unlink(gains)
  t.same(await f.raw.zrange(legacy, 0, -1, 'WITHSCORES'), [boardMember('3'), '0', boardMember('1'), '10', boardMember('2'), '50'])

  t.match(await f.writer.awardXp({ guildId: GUILD, userId: '2', xp: 70 }), { applied: true, gained: 50, reason: 'daily_cap' }, 'the cap counts the sorted set\'s 50')
  t.match(await f.writer.awardXp({ guildId: GUILD, userId: '2', xp: 1 }), { applied: false, reason: 'daily_cap' }, 'and both together')
  t.match(await f.writer.awardXp({ guildId: GUILD, userId: '3', xp: 20 }), { applied: true, gained: 20 }, 'a member at 0 there has its whole cap')
  f.clock.set(la(22, 1000))
  t.same(await new DayCloser(f.raw, f.keys, { chunk: 2 }).closeDue(GUILD), [day])
  const history = async (userId: string) => (await f.reader.readMemberHistory(GUILD, userId, 1)).value?.data
  t.same(await history('1'), [{ date: day, xp: 11, xp_gained: 10, rank: 3 }])
  t.same(await history('2'), [{ date: day, xp: 100, xp_gained: 100, rank: 2 }], 'gained 50 in each')
  t.same(await history('3'), [{ date: day, xp: 720, xp_gained: 20, rank: 1 }])
  t.same((await f.reader.readStatsHistory(GUILD, 1)).value.data, [{ date: day, total_members: 3, total_xp: 831, active_members: 3, xp_gained: 130 }])
  t.equal(await f.raw.exists(legacy, gains), 0, 'both are gone with the close')
})

t.test('a closer that dies mid-close: once its lease ends another closes the day over, exactly as a close that ran whole', async (t) => {
  const f = await fixture(t, la(20, 1000))
  const OTHER = '1300000000000000002'
  await f.writer.configureGuild(OTHER, { season: { every: 'none', timezone: ZONE } })
  // The same writes to two servers: one's close dies half done, the other's runs whole.
  for (const guild of [GUILD, OTHER]) await f.writer.awardXp({ guildId: guild, userId: '1', xp: 1 }) // history begins
  f.clock.set(la(21, 1000))
  const random = new Random(28)
  const awards = Array.from({ length: 4000 }, (_, i) => ({ userId: String(1000 + i), xp: random.int(1, 500) }))
  for (let i = 0; i < awards.length; i += 1000) {
    for (const guild of [GUILD, OTHER]) await f.writer.awardMany(guild, awards.slice(i, i + 1000))
  }
  f.clock.set(la(22, 1000))
  const k = f.keys.guild(GUILD)

  const dying = createRedis({ url: f.url, offlineQueue: true })
  t.teardown(() => { dying.disconnect() })
  const leaseMs = 300
  const died = new DayCloser(dying, f.keys, { chunk: 20, leaseMs }).closeDue(GUILD).then((days) => days, () => 'died')
  // It dies once its ranks step has kept change records (the first close gives every member its
  // history index): what it leaves behind is what the next closer must not count twice.
  for (let waited = 0; await f.raw.hexists(k.histFresh, 'n') === 0; waited++) {
    if (waited > 30_000) throw new Error('the close never reached its ranks step')
    await sleep(1)
  }
  dying.disconnect()
  t.equal(await died, 'died', 'the first closer died')
  t.equal(await closedThrough(f), null, 'the day is not closed')
  t.equal(await f.raw.exists(k.histFresh, k.histSnapshot), 2, 'its work in progress is left behind')
  for (let waited = 0; await f.raw.exists(k.histLease) === 1; waited += 20) {
    if (waited > 10 * leaseMs + 10_000) throw new Error('the lease never ended')
    await sleep(20)
  }

  t.same(await new DayCloser(f.raw, f.keys).closeDue(GUILD), ['2026-11-21'], 'the next closer closes the day')
  t.same(await new DayCloser(f.raw, f.keys).closeDue(OTHER), ['2026-11-21'])
  t.equal(await f.raw.exists(k.histFresh, k.histOrder, k.histSnapshot), 0, 'nothing of the dead close is left')
  const layout = async (guild: string): Promise<unknown> => [
    await f.raw.getBuffer(f.keys.guild(guild).histRanksLatest), // the newest closed day's ranks
    await f.raw.getBuffer(f.keys.histChanges(guild, '2026-11-21')),
    (await f.reader.readStatsHistory(guild, 5)).value.data,
    await Promise.all(['1000', '2500', '4999'].map(async (u) => (await f.reader.readMemberHistory(guild, u, 5)).value))
  ]
  const [resumed, whole] = [await layout(GUILD), await layout(OTHER)]
  t.same(resumed, whole, 'ranks, change records, stats and members\' history as the whole close wrote them')
  t.match(whole, [Buffer, Buffer, [{ date: '2026-11-21', total_members: 4001 }], [{ data: [{ date: '2026-11-21' }] }, {}, {}]], 'the day was closed with every member')
})
