// Seasons by Redis's clock, moved by a test (test/helpers/fake-clock.ts): a weekly season in a
// time zone that is not UTC ends at its Monday 00:00, also across a daylight-saving change;
// awards from three writers around the end each count in exactly one season; a season ends by
// hand once however often it is asked; ended seasons are kept `season_retention` deep; the
// calendar ticker ends a due season with no write, once across instances; a server nothing ran
// for through whole weeks gets no empty seasons.
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { FakeClock, fakeClockRedis } from './helpers/fake-clock.js'
import { createRedis, type RedisClient } from '../src/redis/client.js'
import { KeyBuilder, userIdFromBoardMember } from '../src/redis/keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { RedisClock } from '../src/redis/clock.js'
import { buildTestApp } from './helpers/app.js'
import { buildTestAdmin } from './helpers/admin.js'
import { SseReader } from './helpers/sse.js'
import { levelForXp, levelProgress } from '../src/levels/curves.js'
import { WebhookStore } from '../src/webhooks/webhook-store.js'
import { queuedEvent } from '../src/webhooks/events.js'

const at = (iso: string): number => Date.parse(iso)
const GUILD = '1200000000000000001'

interface Fixture {
  clock: FakeClock
  url: string
  keys: KeyBuilder
  /** A writer with a connection and caches of its own, as another process's would be. */
  writer: () => LeaderboardWriter
  raw: RedisClient
}

/** A redis-server whose clock reads `start`, and writers on it. */
async function fixture (t: Test, start: number): Promise<Fixture> {
  const clock = FakeClock.create(t)
  clock.set(start)
  const server = await fakeClockRedis(t, clock)
  const keys = new KeyBuilder('s')
  const connect = (): RedisClient => {
    const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 10_000 })
    t.teardown(() => { redis.disconnect() })
    return redis
  }
  // Each writer's clock starts at this process's (days off Redis's): it learns Redis's from the scripts.
  return { clock, url: server.url, keys, writer: () => new LeaderboardWriter(connect(), keys, { clock: new RedisClock() }), raw: connect() }
}

/** A board as user id -> XP. */
async function boardOf (redis: RedisClient, key: string): Promise<Record<string, number>> {
  const flat = await redis.zrange(key, 0, -1, 'WITHSCORES')
  const out: Record<string, number> = {}
  for (let i = 0; i < flat.length; i += 2) out[userIdFromBoardMember(flat[i] as string)] = Number(flat[i + 1])
  return out
}

/** An ended season's record in the seasons hash. */
async function archived (f: Fixture, id: number): Promise<{ name: string, started_at?: number, ended_at: number } | null> {
  const json = await f.raw.hget(f.keys.guild(GUILD).seasons, String(id))
  return json === null ? null : JSON.parse(json)
}

async function currentSeason (f: Fixture): Promise<number> {
  return Number(await f.raw.hget(f.keys.guild(GUILD).seasons, 'current') ?? 1)
}

t.test('a weekly season in New York ends at Monday 00:00 there (05:00 UTC): an award a second before counts in it, one after in the next', async (t) => {
  const f = await fixture(t, at('2026-11-22T12:00:00Z')) // Sunday 07:00 in New York
  const writer = f.writer()
  await writer.configureGuild(GUILD, { season: { every: 'week', timezone: 'America/New_York' } })
  await writer.awardXp({ guildId: GUILD, userId: '1', xp: 10 })
  f.clock.set(at('2026-11-23T04:59:59.000Z')) // Sunday 23:59:59
  await writer.awardXp({ guildId: GUILD, userId: '2', xp: 20 })
  f.clock.set(at('2026-11-23T05:00:00.500Z')) // Monday 00:00:00.5
  await writer.awardXp({ guildId: GUILD, userId: '3', xp: 30 })
  await writer.awardXp({ guildId: GUILD, userId: '1', xp: 5 })

  const k = f.keys.guild(GUILD)
  t.equal(await currentSeason(f), 2, 'the write after the end ended the season, and counted in the next')
  t.same(await boardOf(f.raw, f.keys.season(GUILD, 1)), { 1: 10, 2: 20 }, 'season 1, archived as it stood')
  t.same(await boardOf(f.raw, k.seasonCurrent), { 3: 30, 1: 5 }, 'season 2')
  t.match(await archived(f, 1), { name: 'Season 1', ended_at: at('2026-11-23T05:00:00Z') }, 'it ended at Monday 00:00 in New York exactly')
  t.equal(Number(await f.raw.hget(k.seasons, 'current_started_at')), at('2026-11-23T05:00:00Z'), 'and the next began then')
  t.same(await boardOf(f.raw, k.board), { 1: 15, 2: 20, 3: 30 }, 'the all-time board has every award')
})

t.test('across a daylight-saving change: the week in which New York falls back is 169 hours, and the next one after spring forward is 167', async (t) => {
  const f = await fixture(t, at('2026-10-28T12:00:00Z')) // Wednesday of the week clocks go back (Sunday 1 November)
  const writer = f.writer()
  await writer.configureGuild(GUILD, { season: { every: 'week', timezone: 'America/New_York' } })
  // Monday 2 November 00:00 EST is 05:00 UTC; at 04:30 UTC it is still Sunday 23:30 there (an
  // end an hour early, by the summer offset, would count this award in the next season).
  f.clock.set(at('2026-11-02T04:30:00Z'))
  await writer.awardXp({ guildId: GUILD, userId: '1', xp: 1 })
  t.equal(await currentSeason(f), 1, 'still the week of 26 October at Sunday 23:30 EST')
  f.clock.set(at('2026-11-02T05:00:00.100Z'))
  await writer.awardXp({ guildId: GUILD, userId: '2', xp: 2 })
  t.match(await archived(f, 1), { ended_at: at('2026-11-02T05:00:00Z') })
  t.same(await boardOf(f.raw, f.keys.season(GUILD, 1)), { 1: 1 })

  // Spring forward on Sunday 14 March 2027: that week ends at Monday 15 March 00:00 EDT, 04:00 UTC.
  f.clock.set(at('2027-03-15T03:59:59.500Z'))
  await writer.awardXp({ guildId: GUILD, userId: '3', xp: 3 })
  const weeks = await currentSeason(f)
  f.clock.set(at('2027-03-15T04:00:00.100Z'))
  await writer.awardXp({ guildId: GUILD, userId: '4', xp: 4 })
  t.equal(await currentSeason(f), weeks + 1, 'Monday 00:00 EDT ended the week')
  t.match(await archived(f, weeks), { started_at: at('2027-03-08T05:00:00Z'), ended_at: at('2027-03-15T04:00:00Z') },
    'a week of 167 hours: from Monday 00:00 EST to Monday 00:00 EDT')
  t.same(await boardOf(f.raw, f.keys.season(GUILD, weeks)), { 3: 3 })
})

t.test('awards from three writers around the end: each counts in exactly one season, the one its time falls in, and the season ends once', async (t) => {
  const boundary = at('2026-11-30T00:00:00Z')
  const f = await fixture(t, boundary - 60_000)
  const writers = [f.writer(), f.writer(), f.writer()]
  await writers[0]?.configureGuild(GUILD, { season: { every: 'week', timezone: 'UTC' } })
  f.clock.set(boundary - 1500)
  const sent: Array<{ userId: string, before: number, after: number }> = []
  const until = boundary + 1500
  await Promise.all(writers.map(async (writer, w) => {
    for (let i = 0; f.clock.now() < until; i++) {
      const userId = String(1_000_000 * (w + 1) + i)
      const before = f.clock.now()
      await writer.awardXp({ guildId: GUILD, userId, xp: 7 })
      sent.push({ userId, before, after: f.clock.now() })
    }
  }))
  const one = await boardOf(f.raw, f.keys.season(GUILD, 1))
  const two = await boardOf(f.raw, f.keys.guild(GUILD).seasonCurrent)
  const early = sent.filter((s) => s.after < boundary)
  const late = sent.filter((s) => s.before >= boundary)
  t.ok(early.length > 10 && late.length > 10, `awards on both sides of the end (${early.length} before, ${late.length} after, ${sent.length} in all)`)
  t.same(sent.filter((s) => (s.userId in one) === (s.userId in two)).map((s) => s.userId), [], 'every award is in exactly one season')
  t.same(early.filter((s) => !(s.userId in one)).map((s) => s.userId), [], 'those answered before the end are in season 1')
  t.same(late.filter((s) => !(s.userId in two)).map((s) => s.userId), [], 'those sent after it are in season 2')
  t.equal(Object.keys(one).length + Object.keys(two).length, sent.length)
  t.equal(await currentSeason(f), 2, 'ended once: season 2 is current')
  t.match(await archived(f, 1), { ended_at: boundary })
  t.equal(await archived(f, 2), null)
})

t.test('a season ends by hand now, once however often it is asked, and the next takes the name given', async (t) => {
  const f = await fixture(t, at('2026-11-25T10:00:00Z'))
  const writer = f.writer()
  const other = f.writer()
  await writer.awardXp({ guildId: GUILD, userId: '1', xp: 10 })
  f.clock.set(at('2026-11-25T10:30:00Z'))
  // Two managers end it at once: one end, and both are answered the season after it.
  const [a, b] = await Promise.all([writer.endSeason(GUILD, { name: 'Winter cup' }), other.endSeason(GUILD, { name: 'Winter cup' })])
  t.same(a, b)
  t.match(a, { id: 2, name: 'Winter cup', endedAt: null })
  t.ok(Math.abs((a.startedAt?.getTime() ?? 0) - at('2026-11-25T10:30:00Z')) < 5000, 'the next began at Redis\'s time of the end')
  t.equal(await currentSeason(f), 2)
  t.match(await archived(f, 1), { name: 'Season 1' })
  t.ok(Math.abs(((await archived(f, 1))?.ended_at ?? 0) - at('2026-11-25T10:30:00Z')) < 5000, 'season 1 ended then')
  await writer.awardXp({ guildId: GUILD, userId: '2', xp: 20 })
  t.same(await boardOf(f.raw, f.keys.season(GUILD, 1)), { 1: 10 })
  t.same(await boardOf(f.raw, f.keys.guild(GUILD).seasonCurrent), { 2: 20 })
  // With no schedule ("none") the season after a manual end runs until the next manual end.
  f.clock.set(at('2027-06-01T00:00:00Z'))
  await writer.awardXp({ guildId: GUILD, userId: '2', xp: 1 })
  t.equal(await currentSeason(f), 2)
  t.equal(await f.raw.hget(f.keys.guild(GUILD).seasons, 'name:2'), 'Winter cup')
  await t.rejects(writer.endSeason(GUILD, { name: ' ' }), { code: 'invalid_parameter' }, 'a blank name is refused')
})

t.test('season_retention: the ended seasons past it are dropped (board and record), the latest kept', async (t) => {
  const f = await fixture(t, at('2026-11-25T10:00:00Z'))
  const writer = f.writer()
  await writer.configureGuild(GUILD, { seasonRetention: 2 })
  for (let season = 1; season <= 4; season++) {
    await writer.awardXp({ guildId: GUILD, userId: String(season), xp: season })
    await writer.endSeason(GUILD)
  }
  const k = f.keys.guild(GUILD)
  t.equal(await currentSeason(f), 5)
  t.equal(await f.raw.exists(f.keys.season(GUILD, 1), f.keys.season(GUILD, 2)), 0, 'seasons 1 and 2 are gone')
  t.same([await archived(f, 1), await archived(f, 2)], [null, null])
  t.same(await boardOf(f.raw, f.keys.season(GUILD, 3)), { 3: 3 }, 'season 3 is kept')
  t.same(await boardOf(f.raw, f.keys.season(GUILD, 4)), { 4: 4 }, 'season 4 is kept')
  t.equal(await f.raw.hget(k.seasons, 'oldest'), '3')
  // A lower retention takes effect at the next end.
  await writer.configureGuild(GUILD, { seasonRetention: 1 })
  await writer.endSeason(GUILD)
  t.same(await f.raw.exists(f.keys.season(GUILD, 3), f.keys.season(GUILD, 4)), 0, 'season 4 had no awards: no board')
  t.notOk(await archived(f, 4), 'season 4 dropped too: only season 5 is kept')
  t.ok(await archived(f, 5))
})

t.test('the calendar ticker ends a due season with no write, once across three instances, and records its scheduled end', async (t) => {
  const boundary = at('2026-12-01T05:00:00Z') // Tuesday 1 December, 00:00 in New York: a monthly season
  const f = await fixture(t, boundary - 20_000)
  const writer = f.writer()
  await writer.configureGuild(GUILD, { season: { every: 'month', timezone: 'America/New_York' } })
  await writer.awardXp({ guildId: GUILD, userId: '1', xp: 10 })
  const apps = await Promise.all([0, 1, 2].map(async () => await buildTestApp(t, f.url, { redisPrefix: 's', calendarTickMs: 50 })))
  t.equal(apps.length, 3)
  await sleep(300)
  t.equal(await currentSeason(f), 1, 'not due yet')
  f.clock.set(boundary + 100)
  for (let waited = 0; await currentSeason(f) === 1; waited += 50) {
    if (waited > 30_000) throw new Error('no instance ended the season')
    await sleep(50)
  }
  await sleep(500) // time for a second end, were there one
  t.equal(await currentSeason(f), 2, 'ended once')
  t.match(await archived(f, 1), { ended_at: boundary }, 'at its scheduled end, not when an instance got to it')
  t.same(await boardOf(f.raw, f.keys.season(GUILD, 1)), { 1: 10 })
})

t.test('a server nothing ran for through whole weeks: the season ends at its scheduled end and the next starts with the current week, no empty seasons between', async (t) => {
  const f = await fixture(t, at('2026-11-25T10:00:00Z'))
  const writer = f.writer()
  await writer.configureGuild(GUILD, { season: { every: 'week', timezone: 'Europe/Paris' } })
  await writer.awardXp({ guildId: GUILD, userId: '1', xp: 10 })
  f.clock.set(at('2026-12-17T12:00:00Z')) // three weeks on, a Thursday
  await writer.awardXp({ guildId: GUILD, userId: '2', xp: 20 })
  t.equal(await currentSeason(f), 2)
  t.match(await archived(f, 1), { ended_at: at('2026-11-29T23:00:00Z') }, 'season 1 ended at its Monday')
  t.equal(Number(await f.raw.hget(f.keys.guild(GUILD).seasons, 'current_started_at')), at('2026-12-13T23:00:00Z'), 'season 2 began on this week\'s Monday, 00:00 in Paris')
  t.same(await boardOf(f.raw, f.keys.guild(GUILD).seasonCurrent), { 2: 20 })
})

/** An app on the fixture's Redis (its ticker looking every 50 ms), listening, with a key of the server. */
async function api (t: Test, f: Fixture) {
  const ctx = await buildTestApp(t, f.url, { redisPrefix: 's', calendarTickMs: 50 })
  const { key } = await ctx.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await ctx.app.inject({ url: `/api/v1/servers/${GUILD}${path}`, headers: { 'x-api-key': key, ...headers } })
    return { status: res.statusCode, body: res.json(), etag: String(res.headers.etag) }
  }
  return { ...ctx, key, get }
}

t.test('season= reads: the board of XP gained in a season, its member records, around and bulk reads; level stays all-time', async (t) => {
  const boundary = at('2026-11-30T00:00:00Z')
  const f = await fixture(t, boundary - 3_600_000)
  const writer = f.writer()
  await writer.configureGuild(GUILD, { season: { every: 'week', timezone: 'UTC' } })
  await writer.setXp({ guildId: GUILD, userId: '2', xp: 5000, username: 'Bo' }) // all-time XP, not a season's
  await writer.awardXp({ guildId: GUILD, userId: '1', xp: 100, username: 'Ada' })
  await writer.awardXp({ guildId: GUILD, userId: '2', xp: 50 })
  f.clock.set(boundary + 1000)
  await writer.awardXp({ guildId: GUILD, userId: '2', xp: 10 })
  await writer.awardXp({ guildId: GUILD, userId: '3', xp: 5 })
  const { get } = await api(t, f)
  const level = (xp: number): number => levelForXp('mee6', xp)
  // An entry as the board lists it: level and its progress by all-time XP, `xp` the season's.
  const entry = (rank: number, userId: string, username: string, allTimeXp: number, xp: number): Record<string, unknown> => {
    const { xp: into, required } = levelProgress('mee6', allTimeXp)
    return { rank, user_id: userId, username, display_name: null, avatar_url: null, level: level(allTimeXp), xp, level_progress: { xp: into, required }, rank_change: null }
  }

  const current = await get('/leaderboard?season=current')
  t.same(current.body, {
    data: [
      entry(1, '2', 'Bo', 5060, 10),
      entry(2, '3', '3', 5, 5)
    ],
    total: 2,
    page: 1
  })
  t.same((await get('/leaderboard?season=2')).body, current.body, 'season 2 is the current one')
  t.same((await get('/leaderboard?season=1&limit=1&page=2')).body, {
    data: [entry(2, '2', 'Bo', 5060, 50)], total: 2, page: 2
  }, 'season 1, ended: the XP gained in it, paged like any board')
  t.match((await get('/members/2?season=1')).body, { user_id: '2', xp: 50, rank: 2, level: level(5060), rank_change: null, weekly_xp: 10 })
  t.match((await get('/members/2')).body, { xp: 5060, rank: 1 }, 'without season: all time')
  t.match((await get('/members/3?season=1')).body, { code: 'member_not_found' }, 'no XP in season 1: not on its board')
  t.same((await get('/members?ids=3,1,2&season=1')).body.missing, ['3'])
  t.same((await get('/members?ids=3,1,2&season=1')).body.data.map((m: { user_id: string, xp: number }) => [m.user_id, m.xp]), [['1', 100], ['2', 50]])
  t.same((await get('/members/2/around?season=1&radius=1')).body, {
    data: [
      entry(1, '1', 'Ada', 100, 100),
      entry(2, '2', 'Bo', 5060, 50)
    ],
    total: 2,
    rank: 2
  })

  for (const season of ['3', '99']) {
    const res = await get(`/leaderboard?season=${season}`)
    t.equal(res.status, 404, `season ${season}: not started`)
    t.equal(res.body.code, 'season_not_found')
    t.equal((await get(`/members/1?season=${season}`)).body.code, 'season_not_found')
    t.equal((await get(`/members/1/around?season=${season}`)).body.code, 'season_not_found')
    t.equal((await get(`/members?ids=1&season=${season}`)).body.code, 'season_not_found')
  }
  for (const bad of ['0', '-1', 'last', '1.5', '01', 'current&season=1']) {
    const res = await get(`/leaderboard?season=${bad}`)
    t.equal(res.status, 400, `season=${bad}`)
    t.equal(res.body.code, 'invalid_parameter')
  }
  for (const period of ['week', 'all']) {
    const res = await get(`/leaderboard?season=current&period=${period}`)
    t.equal(res.status, 400, `season with period=${period}`)
    t.match(res.body, { code: 'invalid_parameter', message: /^season and period cannot be given together/ })
  }

  t.same((await get('/seasons')).body, {
    data: [
      { id: 2, name: 'Season 2', started_at: new Date(boundary).toISOString(), ended_at: null },
      { id: 1, name: 'Season 1', started_at: (await get('/seasons')).body.data[1].started_at, ended_at: new Date(boundary).toISOString() }
    ],
    total: 2,
    page: 1
  })
  t.ok(Date.parse((await get('/seasons')).body.data[1].started_at) <= boundary - 3_600_000 + 5000, 'season 1 began with the first write')
  t.same((await get('/seasons?limit=1&page=2')).body.data.map((s: { id: number }) => s.id), [1])
})

t.test('season_retention: an ended season past it is season_not_found at once, the kept ones read', async (t) => {
  const f = await fixture(t, at('2026-11-25T10:00:00Z'))
  const writer = f.writer()
  for (let season = 1; season <= 3; season++) {
    await writer.awardXp({ guildId: GUILD, userId: String(season), xp: season })
    await writer.endSeason(GUILD)
  }
  const { get } = await api(t, f)
  for (const season of [1, 2, 3]) t.equal((await get(`/leaderboard?season=${season}`)).status, 200, `season ${season} kept (12 by default)`)
  await writer.configureGuild(GUILD, { seasonRetention: 1 })
  t.equal((await get('/leaderboard?season=2')).body.code, 'season_not_found', 'past the retention once it is lowered')
  t.same((await get('/leaderboard?season=3')).body.data.map((e: { user_id: string }) => e.user_id), ['3'])
  t.same((await get('/seasons')).body.data.map((s: { id: number }) => s.id), [4, 3])
})

t.test('the leaderboard\'s stream with season=current: the page at once, then its changes, then the next season\'s page when it ends', async (t) => {
  const f = await fixture(t, at('2026-11-25T10:00:00Z'))
  const writer = f.writer()
  await writer.awardXp({ guildId: GUILD, userId: '1', xp: 10 })
  const { app, key } = await api(t, f)
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const stream = await SseReader.open(t, address, `/api/v1/servers/${GUILD}/leaderboard/stream?season=current`, { 'x-api-key': key })
  t.equal(stream.status, 200)
  t.same(JSON.parse((await stream.event(0)).data).data.map((e: { xp: number }) => e.xp), [10])
  await writer.awardXp({ guildId: GUILD, userId: '2', xp: 20 })
  t.same(JSON.parse((await stream.event(1)).data).data.map((e: { xp: number }) => e.xp), [20, 10])
  await writer.endSeason(GUILD)
  t.same(JSON.parse((await stream.event(2)).data), { data: [], total: 0, page: 1 }, 'the season ended: its board is the new one\'s')
  const refused = await SseReader.open(t, address, `/api/v1/servers/${GUILD}/leaderboard/stream?season=9`, { 'x-api-key': key })
  t.equal(refused.status, 404)
  t.equal(JSON.parse(refused.body).code, 'season_not_found')
})

t.test('a season\'s end is the event season.ended, with its final top 10 as its board shows them, once', async (t) => {
  const boundary = at('2026-11-30T00:00:00Z')
  const f = await fixture(t, boundary - 60_000)
  const writer = f.writer()
  const store = new WebhookStore(f.raw, f.keys, { allowPrivate: true })
  await store.create(GUILD, { url: 'http://127.0.0.1:9/hook', events: ['season.ended'] })
  await writer.configureGuild(GUILD, { season: { every: 'week', timezone: 'UTC' } })
  for (let i = 1; i <= 12; i++) await writer.awardXp({ guildId: GUILD, userId: String(i), xp: 10 * i, ...(i === 12 ? { username: 'Ada' } : {}) })
  await writer.awardXp({ guildId: GUILD, userId: '5', xp: 65 }) // 115: above 11, tied with nobody
  f.clock.set(boundary + 1000)
  await Promise.all([f.writer().awardXp({ guildId: GUILD, userId: '1', xp: 1 }), f.writer().awardXp({ guildId: GUILD, userId: '2', xp: 1 })])
  const events = (await f.raw.xrange(f.keys.guild(GUILD).events, '-', '+')).map(([id, fields]) => queuedEvent(GUILD, id, fields)?.event)
  t.equal(events.length, 1, 'one end, one event')
  t.match(events[0], {
    type: 'season.ended',
    data: {
      season: { id: 1, name: 'Season 1', ended_at: new Date(boundary).toISOString() },
      top: [
        { rank: 1, user_id: '12', username: 'Ada', xp: 120 },
        { rank: 2, user_id: '5', username: null, xp: 115 },
        { rank: 3, user_id: '11', xp: 110 },
        { rank: 4, user_id: '10', xp: 100 }
      ]
    }
  })
  t.same((events[0]?.data as { top: Array<{ user_id: string }> }).top.map((e) => e.user_id), ['12', '5', '11', '10', '9', '8', '7', '6', '4', '3'])
})

t.test('POST /admin/v1/servers/{g}/seasons/end: ends the season now and answers the next; with Idempotency-Key, once', async (t) => {
  const f = await fixture(t, at('2026-11-25T10:00:00Z'))
  const ctx = await buildTestAdmin(t, f.url, { redisPrefix: 's' })
  const token = await ctx.token('*', ['write'])
  const post = async (body: string, headers: Record<string, string> = {}) => await ctx.admin.inject({
    method: 'POST',
    url: `/admin/v1/servers/${GUILD}/seasons/end`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    payload: body
  })
  await ctx.writer.awardXp({ guildId: GUILD, userId: '1', xp: 10 })
  const redisMs = async (): Promise<number> => { const [s, us] = await f.raw.time(); return Number(s) * 1000 + Math.floor(Number(us) / 1000) }
  const before = await redisMs()
  const first = await post(JSON.stringify({ name: 'Spring cup' }), { 'idempotency-key': 'end-1' })
  const after = await redisMs()
  t.equal(first.statusCode, 200)
  t.match(first.json(), { id: 2, name: 'Spring cup', ended_at: null })
  const began = Date.parse(first.json().started_at)
  t.ok(before - 1000 < began && began <= after, `began now, by Redis's clock: ${first.json().started_at} within ${new Date(before).toISOString()} to ${new Date(after).toISOString()}`)
  const again = await post(JSON.stringify({ name: 'Spring cup' }), { 'idempotency-key': 'end-1' })
  t.same(again.json(), first.json(), 'a retry with its key is answered the same')
  t.equal(await currentSeason(f), 2, 'and ends nothing more')
  const bare = await post('{}')
  t.equal(bare.statusCode, 200, 'no name: the default')
  t.match(bare.json(), { id: 3, name: 'Season 3' })
  for (const [body, what] of [[JSON.stringify({ name: 'a\u0007b' }), 'a control character'], [JSON.stringify({ name: '' }), 'an empty name'],
    [JSON.stringify({ name: 'x'.repeat(101) }), '101 characters'], [JSON.stringify({ title: 'x' }), 'a field it does not know'], [JSON.stringify({ name: 5 }), 'a number']] as const) {
    const res = await post(body)
    t.equal(res.statusCode, 400, what)
    t.equal(res.json().code, 'invalid_parameter', what)
  }
  t.equal(await currentSeason(f), 3, 'the refused ones ended nothing')
  const readOnly = await ctx.token('*', ['keys'])
  const refused = await ctx.admin.inject({ method: 'POST', url: `/admin/v1/servers/${GUILD}/seasons/end`, headers: { authorization: `Bearer ${readOnly}` } })
  t.equal(refused.statusCode, 403, 'a token without the write scope')
})
