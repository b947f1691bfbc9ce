// The public read API over HTTP, row by row of CONTRACT.md: ordering, paging, parameters,
// errors, authentication and scope, empty servers, daily streaks, curves and multipliers.
import t, { type Test } from 'tap'
import { pino } from 'pino'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp, oneAtATime, type TestApp } from './helpers/app.js'
import { inFittingWindow } from './helpers/fitting-window.js'
import { buildApp } from '../src/app.js'
import { levelForXp } from '../src/levels/curves.js'
import { loggerOptions, type RequestLine, writeRequestLine } from '../src/logger.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

// The tests run side by side: each app reads and writes under a key prefix of its own, keeps its
// log lines in a stream of its own, and the one that stops Redis stops its own. Apps are built
// one at a time (oneAtATime).
t.jobs = 8

const GUILD = '1100000000000000001'
const ERROR_KEYS = ['code', 'error', 'message', 'statusCode']

async function get (app: TestApp['app'], url: string, key?: string) {
  const res = await app.inject({ url, headers: key === undefined ? {} : { 'x-api-key': key } })
  return { status: res.statusCode, headers: res.headers, body: res.json() }
}

async function withKey (t: Test, overrides = {}) {
  const ctx = await buildTestApp(t, server.url, overrides)
  const { key } = await ctx.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  return { ...ctx, key }
}

t.test('members are ordered by xp descending, ties by user_id ascending as numbers', async (t) => {
  const { app, writer, key } = await withKey(t)
  await writer.setXp({ guildId: GUILD, userId: '100', xp: 500 })
  await writer.setXp({ guildId: GUILD, userId: '99', xp: 500 })
  await writer.setXp({ guildId: GUILD, userId: '12345678901234567890', xp: 500 })
  await writer.setXp({ guildId: GUILD, userId: '7', xp: 900 })
  await writer.setXp({ guildId: GUILD, userId: '8', xp: 0 })
  const { status, body } = await get(app, `/api/v1/servers/${GUILD}/leaderboard`, key)
  t.equal(status, 200)
  t.same(body.data.map((e: { user_id: string }) => e.user_id), ['7', '99', '100', '12345678901234567890', '8'])
  t.same(body.data.map((e: { rank: number }) => e.rank), [1, 2, 3, 4, 5], 'no two members share a rank')
  t.equal(body.total, 5, 'a member with 0 XP is ranked')
  for (const entry of body.data) {
    const member = await get(app, `/api/v1/servers/${GUILD}/members/${entry.user_id}`, key)
    t.equal(member.body.rank, entry.rank, `member ${entry.user_id} has the same rank in both views`)
  }
})

t.test('entries carry username, profile, level and xp; a member never named shows its id and null profile', async (t) => {
  const { app, writer, key } = await withKey(t)
  await writer.awardXp({ guildId: GUILD, userId: '1', xp: 155, username: 'Ada', displayName: 'Ada L.', avatarUrl: 'https://cdn.example/a.png' })
  await writer.awardXp({ guildId: GUILD, userId: '2', xp: 99 })
  const { body } = await get(app, `/api/v1/servers/${GUILD}/leaderboard`, key)
  t.same(body, {
    data: [
      { rank: 1, user_id: '1', username: 'Ada', display_name: 'Ada L.', avatar_url: 'https://cdn.example/a.png', level: 1, xp: 155, level_progress: { xp: 55, required: 155 }, rank_change: null },
      { rank: 2, user_id: '2', username: '2', display_name: null, avatar_url: null, level: 0, xp: 99, level_progress: { xp: 99, required: 100 }, rank_change: null }
    ],
    total: 2,
    page: 1
  })
})

t.test('paging: ranks (page-1)*limit+1 .. page*limit, defaults, the end, every member once', async (t) => {
  const { app, writer, key } = await withKey(t)
  const members = 237
  await Promise.all(Array.from({ length: members }, async (_, i) =>
    await writer.setXp({ guildId: GUILD, userId: String(1000 + i), xp: (i * 37) % 50 })))
  const url = `/api/v1/servers/${GUILD}/leaderboard`

  const first = await get(app, url, key)
  t.equal(first.body.data.length, 10, 'limit defaults to 10')
  t.equal(first.body.page, 1, 'page defaults to 1')
  t.equal(first.body.total, members)

  const third = await get(app, `${url}?limit=7&page=3`, key)
  t.same(third.body.data.map((e: { rank: number }) => e.rank), [15, 16, 17, 18, 19, 20, 21])

  const full = await get(app, `${url}?limit=100`, key)
  t.equal(full.body.data.length, 100, 'limit=100 is allowed')

  const last = await get(app, `${url}?limit=100&page=3`, key)
  t.equal(last.body.data.length, members - 200, 'the last page is partial')

  const past = await get(app, `${url}?limit=100&page=4`, key)
  t.same(past.body, { data: [], total: members, page: 4 }, 'a page past the end is empty with the real total')
  const farPast = await get(app, `${url}?page=1000000000`, key)
  t.same(farPast.body, { data: [], total: members, page: 1000000000 })

  const seen: string[] = []
  for (let page = 1; page <= 24; page++) {
    const { body } = await get(app, `${url}?limit=10&page=${page}`, key)
    seen.push(...body.data.map((e: { user_id: string }) => e.user_id))
  }
  t.equal(seen.length, members)
  t.equal(new Set(seen).size, members, 'paging returns every member exactly once')
})

t.test('invalid limit and page are 400 invalid_parameter naming the parameter and its bounds', async (t) => {
  const { app, key } = await withKey(t)
  const cases: Array<[string, string]> = [
    ['limit=0', 'limit must be an integer from 1 to 100'],
    ['limit=101', 'limit must be an integer from 1 to 100'],
    ['limit=1.5', 'limit must be an integer from 1 to 100'],
    ['limit=abc', 'limit must be an integer from 1 to 100'],
    ['limit=1e1', 'limit must be an integer from 1 to 100'],
    ['limit=0x10', 'limit must be an integer from 1 to 100'],
    ['limit=-5', 'limit must be an integer from 1 to 100'],
    ['limit=', 'limit must be an integer from 1 to 100'],
    ['limit=5&limit=6', 'limit must be an integer from 1 to 100'],
    ['page=0', 'page must be an integer from 1 to 1000000000'],
    ['page=-1', 'page must be an integer from 1 to 1000000000'],
    ['page=abc', 'page must be an integer from 1 to 1000000000'],
    ['page=1000000001', 'page must be an integer from 1 to 1000000000'],
    ['page=99999999999999999999999999', 'page must be an integer from 1 to 1000000000'],
    ['page=1&page=2', 'page must be an integer from 1 to 1000000000']
  ]
  for (const [query, message] of cases) {
    const { status, body } = await get(app, `/api/v1/servers/${GUILD}/leaderboard?${query}`, key)
    t.equal(status, 400, query)
    t.same(body, { statusCode: 400, error: 'Bad Request', code: 'invalid_parameter', message }, query)
  }
})

t.test('a malformed user_id or guild_id is 400, counted, before the server check (no key is built from it)', async (t) => {
  const { app, key } = await withKey(t)
  for (const userId of ['0', '007', 'abc', '123456789012345678901', '-1', '1.5']) {
    const { status, body } = await get(app, `/api/v1/servers/${GUILD}/members/${userId}`, key)
    t.equal(status, 400, userId)
    t.equal(body.code, 'invalid_parameter')
    t.match(body.message, /^user_id must be a decimal id of 1 to 20 digits/)
  }
  for (const guildId of ['0', 'abc', `0${GUILD}`]) {
    const { status, body, headers } = await get(app, `/api/v1/servers/${guildId}/stats`, key)
    t.equal(status, 400, guildId)
    t.equal(body.code, 'invalid_parameter')
    t.match(body.message, /^guild_id must be a decimal id of 1 to 20 digits/)
    t.ok(headers['x-ratelimit-remaining'] !== undefined, 'counted, with the quota headers')
  }
})

t.test('authentication: missing, empty, unknown, revoked and expired keys; scope', async (t) => {
  const { app, apiKeys, key } = await withKey(t, { apiKeyCacheTtlMs: 0 })
  const url = `/api/v1/servers/${GUILD}/stats`
  const missing = await get(app, url)
  t.same(missing.body, { statusCode: 401, error: 'Unauthorized', code: 'missing_api_key', message: 'the x-api-key header is required' })
  t.equal((await get(app, url, '')).body.code, 'missing_api_key', 'an empty header counts as missing')
  t.equal((await get(app, url, '   ')).body.code, 'missing_api_key')
  t.equal((await get(app, url, 'nonsense')).status, 401)
  t.equal((await get(app, url, 'nonsense')).body.code, 'invalid_api_key')
  t.equal((await get(app, url, `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).body.code, 'invalid_api_key', 'a wrong secret with a real id')

  t.equal((await get(app, url, key)).status, 200)
  const other = await get(app, '/api/v1/servers/42/stats', key)
  t.same(other.body, { statusCode: 403, error: 'Forbidden', code: 'forbidden', message: 'this API key does not belong to server 42' },
    'a valid key on another server is 403 whether or not that server exists')

  const created = await apiKeys.create({ guildId: GUILD, plan: 'free' })
  t.equal((await get(app, url, created.key)).status, 200)
  await apiKeys.revoke(created.id)
  t.equal((await get(app, url, created.key)).body.code, 'invalid_api_key', 'a revoked key is refused')

  // A key that lives a second, or longer on a machine whose first request took over a quarter of
  // its life (inFittingWindow): used within its life, then after it.
  const { seen: shortLived } = await inFittingWindow(1000, async (lifeMs) => {
    const began = performance.now()
    const { key } = await apiKeys.create({ guildId: GUILD, plan: 'free', expiresInSeconds: lifeMs / 1000 })
    const within = (await get(app, url, key)).status
    const workMs = performance.now() - began
    await sleep(lifeMs + 100 - workMs)
    return { workMs, seen: { within, after: (await get(app, url, key)).body.code } }
  })
  t.equal(shortLived.within, 200, 'a key within its life is admitted')
  t.equal(shortLived.after, 'invalid_api_key', 'an expired key is refused')
})

t.test('a revoked key is refused within 5 s on an instance that cached it', async (t) => {
  const { app, apiKeys } = await withKey(t, { apiKeyCacheTtlMs: 3000 })
  const created = await apiKeys.create({ guildId: GUILD, plan: 'free' })
  const url = `/api/v1/servers/${GUILD}/stats`
  t.equal((await get(app, url, created.key)).status, 200, 'the key is now cached')
  await apiKeys.revoke(created.id)
  // Every request sent once the cached lookup has expired is refused: the last one admitted was
  // sent within the cache's lifetime of the revocation, however slowly the requests came back.
  const start = Date.now()
  let lastAdmittedSentAfter = 0
  let status = 200
  while (status === 200) {
    const sentAfter = Date.now() - start
    status = (await get(app, url, created.key)).status
    if (status === 200) lastAdmittedSentAfter = sentAfter
    if (status === 200) await sleep(100)
  }
  t.equal(status, 401)
  t.ok(lastAdmittedSentAfter < 3000, `the last request admitted was sent ${lastAdmittedSentAfter} ms after the revocation, within API_KEY_CACHE_TTL_MS (3 s; 5 s at most)`)
})

t.test('a cached key still expires on time', async (t) => {
  const { app, apiKeys } = await withKey(t, { apiKeyCacheTtlMs: 5000 })
  const created = await apiKeys.create({ guildId: GUILD, plan: 'free', expiresInSeconds: 1 })
  const url = `/api/v1/servers/${GUILD}/stats`
  t.equal((await get(app, url, created.key)).status, 200)
  await sleep(1100)
  t.equal((await get(app, url, created.key)).body.code, 'invalid_api_key')
})

t.test('unknown member is 404 member_not_found; unknown route is 404 not_found; a malformed URL is 400', async (t) => {
  const { app, key } = await withKey(t)
  const member = await get(app, `/api/v1/servers/${GUILD}/members/5`, key)
  t.same(member.body, { statusCode: 404, error: 'Not Found', code: 'member_not_found', message: `user 5 is not a member of server ${GUILD}` })
  const route = await get(app, '/api/v1/servers', key)
  t.equal(route.status, 404)
  t.same(Object.keys(route.body).sort(), ERROR_KEYS)
  t.equal(route.body.code, 'not_found')
  const badUrl = await get(app, '/api/v1/servers/%ZZ/stats', key)
  t.equal(badUrl.status, 400, 'a malformed URL')
  t.same(Object.keys(badUrl.body).sort(), ERROR_KEYS)
  t.equal(badUrl.body.code, 'invalid_parameter')
  t.equal((await app.inject({ method: 'POST', url: `/api/v1/servers/${GUILD}/stats`, headers: { 'x-api-key': key } })).json().code, 'not_found',
    'the API changes nothing: no other method is routed')
})

t.test('a server with no data: empty leaderboard, zero stats with default or configured settings', async (t) => {
  const { app, writer, key } = await withKey(t)
  const board = await get(app, `/api/v1/servers/${GUILD}/leaderboard`, key)
  t.same(board.body, { data: [], total: 0, page: 1 })
  const stats = await get(app, `/api/v1/servers/${GUILD}/stats`, key)
  t.same(stats.body, { total_members: 0, total_xp: 0, average_level: 0, xp_curve: 'mee6', xp_multiplier: 1, name: null, icon_url: null })
  await writer.configureGuild(GUILD, { curve: 'flat', multiplier: '2.5', name: 'Café Guild', iconUrl: 'https://cdn.example/icon.png' })
  const configured = await get(app, `/api/v1/servers/${GUILD}/stats`, key)
  t.same(configured.body, { total_members: 0, total_xp: 0, average_level: 0, xp_curve: 'flat', xp_multiplier: 2.5, name: 'Café Guild', icon_url: 'https://cdn.example/icon.png' })
})

t.test('stats: members with xp > 0, total xp, average level rounded half up', async (t) => {
  const { app, writer, key } = await withKey(t)
  await writer.configureGuild(GUILD, { curve: 'flat' })
  // flat levels 1, 2 and 0 (0 XP, not counted): mean of 1 and 2 is 1.5 -> 2
  await writer.setXp({ guildId: GUILD, userId: '1', xp: 1500 })
  await writer.setXp({ guildId: GUILD, userId: '2', xp: 2999 })
  await writer.setXp({ guildId: GUILD, userId: '3', xp: 0 })
  const { body } = await get(app, `/api/v1/servers/${GUILD}/stats`, key)
  t.same(body, { total_members: 2, total_xp: 4499, average_level: 2, xp_curve: 'flat', xp_multiplier: 1, name: null, icon_url: null })
  await writer.setXp({ guildId: GUILD, userId: '4', xp: 1000 })
  // levels 1, 2, 1: mean 1.33 -> 1
  t.equal((await get(app, `/api/v1/servers/${GUILD}/stats`, key)).body.average_level, 1)
})

t.test('a curve switch shows at once in levels and averages; the multiplier scales awards', async (t) => {
  const { app, writer, key } = await withKey(t)
  const xps = [0, 74, 75, 100, 249, 250, 1000, 5000, 123456]
  await Promise.all(xps.map(async (xp, i) => await writer.setXp({ guildId: GUILD, userId: String(i + 1), xp })))
  for (const curve of ['mee6', 'linear', 'flat'] as const) {
    await writer.configureGuild(GUILD, { curve })
    const board = await get(app, `/api/v1/servers/${GUILD}/leaderboard?limit=100`, key)
    for (const entry of board.body.data) t.equal(entry.level, levelForXp(curve, entry.xp), `${curve}: level of ${entry.xp} XP`)
    const positive = xps.filter((xp) => xp > 0).map((xp) => levelForXp(curve, xp))
    const expected = Math.floor(positive.reduce((a, b) => a + b, 0) / positive.length + 0.5)
    const stats = await get(app, `/api/v1/servers/${GUILD}/stats`, key)
    t.equal(stats.body.average_level, expected, `${curve}: average level`)
    t.equal(stats.body.xp_curve, curve)
  }
  await writer.configureGuild(GUILD, { multiplier: 0.29 })
  await writer.awardXp({ guildId: GUILD, userId: '99', xp: 100 })
  const member = await get(app, `/api/v1/servers/${GUILD}/members/99`, key)
  t.equal(member.body.xp, 29, '100 XP at 0.29 adds exactly 29')
  t.equal((await get(app, `/api/v1/servers/${GUILD}/stats`, key)).body.xp_multiplier, 0.29)
})

t.test('daily streak as it stands now, and last_daily_claim in ISO 8601 UTC with ms', async (t) => {
  const { app, writer, key } = await withKey(t)
  const now = Date.now()
  const day = 86_400_000
  const startOfToday = now - (now % day)
  // 1: claims today after yesterday -> 2; 2: last claim yesterday -> its streak; 3: two days ago -> 0
  await writer.claimDaily({ guildId: GUILD, userId: '1', at: new Date(startOfToday - day + 1000) })
  await writer.claimDaily({ guildId: GUILD, userId: '1', at: new Date(startOfToday + 5) })
  await writer.claimDaily({ guildId: GUILD, userId: '2', at: new Date(startOfToday - 2 * day + 10) })
  await writer.claimDaily({ guildId: GUILD, userId: '2', at: new Date(startOfToday - day + 10) })
  await writer.claimDaily({ guildId: GUILD, userId: '3', at: new Date(startOfToday - 3 * day) })
  await writer.claimDaily({ guildId: GUILD, userId: '3', at: new Date(startOfToday - 2 * day) })
  await writer.setXp({ guildId: GUILD, userId: '4', xp: 10 })

  const member = async (id: string) => (await get(app, `/api/v1/servers/${GUILD}/members/${id}`, key)).body
  t.match(await member('1'), { daily_streak: 2, last_daily_claim: new Date(startOfToday + 5).toISOString(), xp: 0, level: 0 })
  t.match(await member('2'), { daily_streak: 2, last_daily_claim: new Date(startOfToday - day + 10).toISOString() })
  t.match(await member('3'), { daily_streak: 0, last_daily_claim: new Date(startOfToday - 2 * day).toISOString() }, 'a broken streak reads 0')
  t.match(await member('4'), { daily_streak: 0, last_daily_claim: null }, 'never claimed')
  t.match((await member('1')).last_daily_claim, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
})

t.test('an unexpected failure is 500 internal_error and leaks nothing', async (t) => {
  const { app, redis, keys, key } = await withKey(t)
  await redis.set(keys.guild(GUILD).board, 'not a sorted set')
  const { status, body } = await get(app, `/api/v1/servers/${GUILD}/leaderboard`, key)
  t.equal(status, 500)
  t.same(body, { statusCode: 500, error: 'Internal Server Error', code: 'internal_error', message: 'an unexpected error occurred' })
})

t.test('health: /healthz needs nothing, /readyz answers for Redis', async (t) => {
  const { app } = await withKey(t)
  t.same((await get(app, '/healthz')).body, { status: 'ok' })
  t.same((await get(app, '/readyz')).body, { status: 'ok' })
})

t.test('readyz is 503 while Redis is unreachable and 200 again after', async (t) => {
  const own = await RedisServer.start()
  t.teardown(async () => { await own.close() })
  const { app } = await buildTestApp(t, own.url)
  await own.stop()
  // No app is built meanwhile (oneAtATime): a build would count in the time of the answer.
  await oneAtATime(async () => {
    const started = Date.now()
    const down = await get(app, '/readyz')
    t.equal(down.status, 503)
    t.equal(down.body.code, 'service_unavailable')
    t.ok(Date.now() - started < 1000, 'answered within 1 s')
  })
  t.equal((await get(app, '/healthz')).status, 200, 'liveness does not depend on Redis')
  await own.startProcess()
  let status = 0
  for (let i = 0; i < 50 && status !== 200; i++) {
    status = (await get(app, '/readyz')).status
    if (status !== 200) await sleep(100)
  }
  t.equal(status, 200, 'recovers by itself')
})

/** An app (beside the test app's data) whose log lines are kept, at `level`, with a starter key. */
async function appWithLogLines (t: Test, level: string) {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })
  const ctx = await buildTestApp(t, server.url)
  const app = buildApp(ctx.config, { logger: { ...(loggerOptions(level) as object), stream } })
  t.teardown(async () => { await app.close() })
  await oneAtATime(async () => { await app.ready() })
  const created = await ctx.apiKeys.create({ guildId: GUILD, plan: 'starter' })
  return { ctx, app, lines, created }
}

t.test('over a real socket: JSON, request id, and logs that carry the key id but never the key', async (t) => {
  const { ctx, app, lines, created } = await appWithLogLines(t, 'info')
  await ctx.writer.awardXp({ guildId: GUILD, userId: '1', xp: 10, username: 'Lin' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/servers/${GUILD}/leaderboard`, {
    headers: { 'x-api-key': created.key, 'x-request-id': 'req-abc-123' }
  })
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^application\/json/)
  t.equal(res.headers.get('x-request-id'), 'req-abc-123')
  t.match(await res.json(), { data: [{ user_id: '1', username: 'Lin', xp: 10 }], total: 1 })
  await fetch(`http://127.0.0.1:${port}/api/v1/servers/${GUILD}/members/77`, { headers: { 'x-api-key': created.key } })
  const log = lines.join('')
  t.notOk(log.includes(created.key), 'the key never appears in the logs')
  const secret = created.key.slice(21) // after `lbk_<16 hex>_`; it may itself contain `_`
  t.equal(secret.length, 32)
  t.notOk(log.includes(secret), 'nor its secret part')
  const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  const first = parsed.filter((l) => l.reqId === 'req-abc-123')
  t.equal(first.length, 1, 'one line per request')
  t.match(first[0], {
    msg: 'request', method: 'GET', url: `/api/v1/servers/${GUILD}/leaderboard`, route: '/api/v1/servers/:guild_id/leaderboard', statusCode: 200, ip: '127.0.0.1', guild: GUILD, keyId: created.id, ms: Number
  }, 'the line names the path, route, status, duration, client address, server, key id and request id')
  t.equal(first[0]?.code, undefined, 'no error code on a 200')
  t.match(parsed.filter((l) => l.msg === 'request').at(-1), { url: `/api/v1/servers/${GUILD}/members/77`, route: '/api/v1/servers/:guild_id/members/:user_id', statusCode: 404, code: 'member_not_found', keyId: created.id })

  // What an operator needs to tell failures apart: the error code, the whole path with its
  // query (an unknown route has no pattern), and a key sent in the URL by mistake masked.
  await fetch(`http://127.0.0.1:${port}/api/v1/servers/${GUILD}/stats`, { headers: { 'x-request-id': 'no-key' } })
  await fetch(`http://127.0.0.1:${port}/api/v1/servers/${GUILD}/stats`, { headers: { 'x-request-id': 'bad-key', 'x-api-key': 'lbk_0000000000000000_nope' } })
  await fetch(`http://127.0.0.1:${port}/api/v2/nowhere?limit=5&api_key=${created.key}`, { headers: { 'x-request-id': 'no-route' } })
  await fetch(`http://127.0.0.1:${port}/api/v1/servers/${GUILD}/leaderboard?limit=5000`, { headers: { 'x-request-id': 'bad-limit', 'x-api-key': created.key } })
  await sleep(50)
  const byId = (id: string) => lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((l) => l.reqId === id && l.msg === 'request')
  t.match(byId('no-key'), { statusCode: 401, code: 'missing_api_key', url: `/api/v1/servers/${GUILD}/stats` })
  t.match(byId('bad-key'), { statusCode: 401, code: 'invalid_api_key' })
  t.match(byId('no-route'), { statusCode: 404, code: 'not_found', url: '/api/v2/nowhere?limit=5&api_key=[redacted]' })
  t.equal(byId('no-route')?.route, undefined)
  t.match(byId('bad-limit'), { statusCode: 400, code: 'invalid_parameter', url: `/api/v1/servers/${GUILD}/leaderboard?limit=5000` })
  t.notOk(lines.join('').includes(created.key), 'the key sent in a URL is not logged either')

  // A request that logs through its own logger (made only then) is still tied to its id.
  await ctx.redis.set(ctx.keys.guild(GUILD).board, 'not a sorted set')
  const failed = await fetch(`http://127.0.0.1:${port}/api/v1/servers/${GUILD}/members/1`, {
    headers: { 'x-api-key': created.key, 'x-request-id': 'req-err-9' }
  })
  t.equal(failed.status, 500)
  const errorLines = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((l) => l.reqId === 'req-err-9')
  t.match(errorLines, [{ msg: 'unexpected error', level: 50 }, { msg: 'request', statusCode: 500 }])
})

t.test("a request's line, written as one string, is the line pino writes for the same fields", async (t) => {
  /** A pino logger writing into a string. */
  const capture = (): { logger: pino.Logger, text: () => string } => {
    let text = ''
    const stream = new Writable({ write (chunk, _enc, done) { text += String(chunk); done() } })
    // The app's own logger options (its redaction among them), on a stream of the test's.
    const { stream: _appStream, ...options } = loggerOptions('info') as pino.LoggerOptions & { stream?: unknown }
    return { logger: pino(options, stream), text: () => text }
  }
  const [pinos, ours] = [capture(), capture()]
  const cases: RequestLine[] = [
    { reqId: 'req-1', method: 'GET', url: `/api/v1/servers/${GUILD}/stats`, route: '/api/v1/servers/:guild_id/stats', statusCode: 200, code: undefined, ms: 1.25, ip: '127.0.0.1', guild: GUILD, keyId: 'abc', tokenId: undefined },
    // A write over the write API: a token's id, no key.
    { reqId: 'req-3', method: 'POST', url: `/admin/v1/servers/${GUILD}/awards`, route: '/admin/v1/servers/:guild_id/awards', statusCode: 200, code: undefined, ms: 2.5, ip: '127.0.0.1', guild: GUILD, keyId: undefined, tokenId: '0123456789abcdef' },
    // Before routing or authentication: no route, a raw (decoded) guild id, no key.
    { reqId: 'r"2\\', method: 'GET', url: '/x?q="\\\u2028', route: undefined, statusCode: 401, code: 'missing_api_key', ms: 0, ip: '::1', guild: 'a"b\\c\u2028é\n', keyId: undefined, tokenId: undefined }
  ]
  for (const line of cases) {
    pinos.logger.info(line, 'request')
    writeRequestLine(ours.logger, line)
  }
  t.equal(ours.text(), '', 'written at the end of the turn')
  await sleep(10)
  const [expectedLines, writtenLines] = [pinos.text().split('\n'), ours.text().split('\n')]
  t.equal(writtenLines.length, 4, 'three lines, each ending in a newline')
  t.equal(writtenLines.at(-1), '')
  for (let i = 0; i < cases.length; i++) {
    const [expected, written] = [expectedLines[i] ?? '', writtenLines[i] ?? '']
    const [a, b] = [JSON.parse(expected) as Record<string, unknown>, JSON.parse(written) as Record<string, unknown>]
    t.ok(typeof b.time === 'number' && Math.abs(Number(b.time) - Number(a.time)) < 1000, 'the time, in Unix ms')
    t.same(Object.keys(b), Object.keys(a), 'the same fields in the same order')
    t.same({ ...b, time: 0 }, { ...a, time: 0 }, 'the same values')
  }
})

t.test('at LOG_LEVEL=warn requests write no line of their own; an unexpected error still writes its line', async (t) => {
  const { ctx, app, lines, created } = await appWithLogLines(t, 'warn')
  await ctx.writer.awardXp({ guildId: GUILD, userId: '1', xp: 10 })
  const ok = await app.inject({ url: `/api/v1/servers/${GUILD}/stats`, headers: { 'x-api-key': created.key, 'x-request-id': 'quiet-1' } })
  t.equal(ok.statusCode, 200)
  await ctx.redis.set(ctx.keys.guild(GUILD).board, 'not a sorted set')
  const failed = await app.inject({ url: `/api/v1/servers/${GUILD}/members/1`, headers: { 'x-api-key': created.key, 'x-request-id': 'loud-1' } })
  t.equal(failed.statusCode, 500)
  await sleep(100) // a request's line is written when its response has finished, which may follow inject's answer
  const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  t.same(parsed.filter((l) => l.reqId === 'quiet-1'), [], 'no line for the 200')
  t.same(parsed.filter((l) => l.msg === 'request'), [], 'no request line at all')
  t.match(parsed, [{ reqId: 'loud-1', msg: 'unexpected error', level: 50 }], 'the 500 is logged, with its request id')
})
