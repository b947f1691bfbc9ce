// CORS for pages on the origins CORS_ORIGINS lists: preflights answered without a key and without
// counting, the API's answers (200, 304, 401, 429, 503) readable by the page with their headers, and
// nothing at all for other origins or when CORS_ORIGINS is unset.
import t, { type Test } from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp, type TestApp } from './helpers/app.js'
import type { Config } from '../src/config.js'
import { CORS_EXPOSED_HEADERS } from '../src/plugins/cors.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const GUILD = '1400000000000000001'
const API = `/api/v1/servers/${GUILD}`
const DASHBOARD = 'https://dash.example.com'
const ELSEWHERE = 'https://evil.example.net'

async function withKey (t: Test, overrides: Partial<Config> = {}): Promise<TestApp & { key: string }> {
  const ctx = await buildTestApp(t, server.url, { corsOrigins: [DASHBOARD], ...overrides })
  const { key } = await ctx.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  await ctx.writer.awardXp({ guildId: GUILD, userId: '11', xp: 100, username: 'Ada' })
  return { ...ctx, key }
}

function preflight (origin: string, url = `${API}/leaderboard`) {
  return {
    method: 'OPTIONS' as const,
    url,
    headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key,if-none-match' }
  }
}

const corsHeaders = (headers: Record<string, unknown>) => Object.keys(headers).filter((name) => name.startsWith('access-control-'))

function list (value: unknown): string[] {
  return String(value ?? '').split(',').map((item) => item.trim().toLowerCase()).filter((item) => item !== '')
}

t.test('a preflight from an allowed origin is answered with what the API takes', async (t) => {
  const { app } = await withKey(t)
  const res = await app.inject(preflight(DASHBOARD))
  t.equal(res.statusCode, 204)
  t.equal(res.body, '')
  t.equal(res.headers['access-control-allow-origin'], DASHBOARD)
  t.same(list(res.headers['access-control-allow-methods']), ['get'])
  t.same(list(res.headers['access-control-allow-headers']), ['x-api-key', 'if-none-match', 'x-request-id', 'last-event-id'])
  t.equal(res.headers['access-control-max-age'], '3600')
  t.ok(list(res.headers.vary).includes('origin'), 'varies by Origin')
  t.equal(res.headers['access-control-allow-credentials'], undefined, 'no credentials: the key is a header, not a cookie')
})

t.test('a preflight needs no key and counts neither against the key nor as a failed authentication', async (t) => {
  const { app, key } = await withKey(t, { authFailureLimit: 1 })
  const before = await app.inject({ url: `${API}/stats`, headers: { 'x-api-key': key, origin: DASHBOARD } })
  for (let i = 0; i < 5; i++) {
    const res = await app.inject(preflight(DASHBOARD, `${API}/stats`))
    t.equal(res.statusCode, 204, `preflight ${i + 1}`)
    t.equal(res.headers['x-ratelimit-remaining'], undefined, 'not counted')
  }
  const after = await app.inject({ url: `${API}/stats`, headers: { 'x-api-key': key, origin: DASHBOARD } })
  t.equal(Number(after.headers['x-ratelimit-remaining']), Number(before.headers['x-ratelimit-remaining']) - 1, 'only the GETs counted')
  const keyless = await app.inject({ url: `${API}/stats`, headers: { origin: DASHBOARD } })
  t.equal(keyless.statusCode, 401, 'the first failed authentication of this address (one more would be 429)')
})

t.test('another origin gets no CORS header, on a preflight or a request', async (t) => {
  const { app, key } = await withKey(t)
  const refused = await app.inject(preflight(ELSEWHERE))
  t.same(corsHeaders(refused.headers), [])
  t.equal(refused.statusCode, 404, 'no preflight answer: the browser will not send the request')
  t.match(refused.json(), { code: 'not_found' }, 'in the error shape')
  const read = await app.inject({ url: `${API}/leaderboard`, headers: { 'x-api-key': key, origin: ELSEWHERE } })
  t.equal(read.statusCode, 200, 'the API still answers (CORS binds browsers, not clients)')
  t.same(corsHeaders(read.headers), [])
  t.ok(list(read.headers.vary).includes('origin'), 'and says the answer varies by Origin, for caches')
})

t.test('by default (no CORS_ORIGINS) there is no CORS at all', async (t) => {
  const { app, key } = await withKey(t, { corsOrigins: [] })
  t.same(app.config.corsOrigins, [])
  const read = await app.inject({ url: `${API}/leaderboard`, headers: { 'x-api-key': key, origin: DASHBOARD } })
  t.equal(read.statusCode, 200)
  t.same(corsHeaders(read.headers), [])
  t.equal(read.headers.vary, 'accept-encoding', 'no Vary: Origin either')
  const options = await app.inject(preflight(DASHBOARD))
  t.equal(options.statusCode, 404)
  t.same(corsHeaders(options.headers), [])
})

t.test('an allowed page can read the answers and their headers: 200, 304, 401 and 429', async (t) => {
  const { app, apiKeys } = await withKey(t)
  const { key } = await apiKeys.create({ guildId: GUILD, plan: 'free' })
  const get = async (headers: Record<string, string>) => await app.inject({ url: `${API}/leaderboard`, headers: { origin: DASHBOARD, ...headers } })
  const ok = await get({ 'x-api-key': key })
  const notModified = await get({ 'x-api-key': key, 'if-none-match': String(ok.headers.etag) })
  const unauthorized = await get({})
  let limited = ok
  for (let i = 0; i < 100 && limited.statusCode !== 429; i++) limited = await get({ 'x-api-key': key })
  for (const [status, res] of [[200, ok], [304, notModified], [401, unauthorized], [429, limited]] as const) {
    t.equal(res.statusCode, status)
    t.equal(res.headers['access-control-allow-origin'], DASHBOARD, `${status}: allow-origin`)
    t.same(list(res.headers['access-control-expose-headers']), CORS_EXPOSED_HEADERS, `${status}: expose-headers`)
    t.ok(list(res.headers.vary).includes('origin'), `${status}: vary`)
  }
  t.same(CORS_EXPOSED_HEADERS, ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'etag', 'retry-after', 'x-request-id'])
  t.same(list(ok.headers.vary), ['origin', 'accept-encoding'], 'Vary keeps both')
  t.ok(limited.headers['retry-after'] !== undefined, 'the 429 has the retry-after the page may now read')
})

t.test('a 503 (Redis away) is readable by the page too', async (t) => {
  const own = await RedisServer.start()
  t.teardown(async () => { await own.close() })
  const { app, apiKeys } = await buildTestApp(t, own.url, { corsOrigins: [DASHBOARD] })
  const { key } = await apiKeys.create({ guildId: GUILD, plan: 'professional' })
  await own.stop()
  const res = await app.inject({ url: `${API}/stats`, headers: { 'x-api-key': key, origin: DASHBOARD } })
  t.equal(res.statusCode, 503)
  t.equal(res.headers['access-control-allow-origin'], DASHBOARD)
  t.ok(list(res.headers['access-control-expose-headers']).includes('retry-after'))
})

t.test('CORS_ORIGINS=* allows any origin', async (t) => {
  const { app, key } = await withKey(t, { corsOrigins: ['*'] })
  const res = await app.inject({ url: `${API}/stats`, headers: { 'x-api-key': key, origin: ELSEWHERE } })
  t.equal(res.headers['access-control-allow-origin'], '*')
  t.equal((await app.inject(preflight(ELSEWHERE))).statusCode, 204)
})
