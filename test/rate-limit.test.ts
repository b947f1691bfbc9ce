// Rate limits over HTTP, row by row of CONTRACT.md "Rate limits": the plan's limit per key over a
// short sliding window, the x-ratelimit-* headers on every authenticated response, the 429 and
// its retry-after, a count shared by instances, the failed-authentication limit per client
// address, and 503 (never unlimited) while Redis is down.
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { performance } from 'node:perf_hooks'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp, oneAtATime, type TestApp } from './helpers/app.js'
import { inFittingWindow, timed } from './helpers/fitting-window.js'
import { BUCKETS } from '../src/rate-limit/sliding-window.js'
import type { Config } from '../src/config.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

// The tests run side by side: each app counts under a key prefix of its own (the two that share
// one name it themselves, apart from every other), and the one that stops Redis stops its own.
// Apps are built one at a time (oneAtATime).
t.jobs = 8

const GUILD = '1200000000000000001'
const OTHER_GUILD = '1200000000000000002'
const LIMITS = { free: 5, starter: 8, professional: 12 }
/**
 * The window of the tests that count past a limit and wait for the count to fall: the first one
 * tried (inFittingWindow lengthens it on a machine too slow for it). The tests that never wait for
 * a count to fall count in the default window of an hour, whatever the machine's speed.
 */
const WINDOW_MS = 2000
const HOUR_MS = 3_600_000
/** The longest the counted slices cover: the window plus one slice (see sliding-window-1.lua). */
const coverageOf = (windowMs: number): number => (BUCKETS + 1) * Math.ceil(windowMs / BUCKETS)
const STATS = `/api/v1/servers/${GUILD}/stats`

interface Answer {
  status: number
  headers: Record<string, string | undefined>
  body: Record<string, unknown>
}

async function setup (t: Test, overrides: Partial<Config> = {}): Promise<TestApp> {
  return await buildTestApp(t, server.url, { planLimits: LIMITS, rateLimitWindowMs: HOUR_MS, ...overrides })
}

async function get (app: TestApp['app'], url: string, key?: string, remoteAddress?: string): Promise<Answer> {
  const res = await app.inject({ url, headers: key === undefined ? {} : { 'x-api-key': key }, ...(remoteAddress === undefined ? {} : { remoteAddress }) })
  const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, v === undefined ? undefined : String(v)]))
  return { status: res.statusCode, headers, body: res.json() }
}

/** The app listening on a free port, closed in teardown (buildTestApp's own teardown). */
async function listen (app: TestApp['app']): Promise<string> {
  return await app.listen({ port: 0, host: '127.0.0.1' })
}

async function fetchJson (url: string, key: string): Promise<Answer> {
  const res = await fetch(url, { headers: { 'x-api-key': key } })
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.json() as Record<string, unknown> }
}

/** The statuses of `n` requests in a row. */
async function statusesOf (app: TestApp['app'], key: string, n: number): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < n; i++) statuses.push((await get(app, STATS, key)).status)
  return statuses
}

function isRateLimitedBody (t: Test, body: Record<string, unknown>, what: string): void {
  t.same(Object.keys(body).sort(), ['code', 'error', 'message', 'statusCode'], `${what}: the contract's error keys, no more`)
  t.match(body, { statusCode: 429, error: 'Too Many Requests', code: 'rate_limited', message: String }, `${what}: 429 rate_limited`)
}

/** retry-after as the contract wants it: whole seconds, at least 1, at most the window plus one slice. */
function retryAfterOf (t: Test, res: Answer, maxMs: number, what: string): number {
  const header = res.headers['retry-after'] ?? ''
  t.match(header, /^\d+$/, `${what}: retry-after in whole seconds (${header})`)
  const seconds = Number(header)
  t.ok(seconds >= 1 && seconds <= Math.ceil(maxMs / 1000), `${what}: retry-after ${seconds} s is within 1..${Math.ceil(maxMs / 1000)}`)
  return seconds
}

t.test('each plan has its own limit per window: free 5, starter 8, professional 12, then 429', async (t) => {
  const { app, apiKeys } = await setup(t)
  for (const plan of ['free', 'starter', 'professional'] as const) {
    const { key } = await apiKeys.create({ guildId: GUILD, plan })
    const statuses: number[] = []
    const limits = new Set<string | undefined>()
    for (let i = 0; i < LIMITS[plan] + 2; i++) {
      const res = await get(app, STATS, key)
      statuses.push(res.status)
      limits.add(res.headers['x-ratelimit-limit'])
    }
    t.same(statuses, [...Array<number>(LIMITS[plan]).fill(200), 429, 429], `${plan}: ${LIMITS[plan]} admitted, then refused`)
    t.same([...limits], [String(LIMITS[plan])], `${plan}: x-ratelimit-limit is ${LIMITS[plan]} on every response`)
  }
})

t.test('x-ratelimit-* headers on 200, 400 (limit=0), 403 (other guild) and 404 (unknown member), each one counted', async (t) => {
  const { app, apiKeys } = await setup(t)
  const { key } = await apiKeys.create({ guildId: GUILD, plan: 'starter' })
  const requests = [
    { url: `/api/v1/servers/${GUILD}/leaderboard`, status: 200, code: undefined },
    { url: `/api/v1/servers/${GUILD}/leaderboard?limit=0`, status: 400, code: 'invalid_parameter' },
    { url: `/api/v1/servers/${OTHER_GUILD}/stats`, status: 403, code: 'forbidden' },
    { url: `/api/v1/servers/${GUILD}/members/42`, status: 404, code: 'member_not_found' },
    { url: STATS, status: 200, code: undefined }
  ]
  for (const [i, { url, status, code }] of requests.entries()) {
    const res = await get(app, url, key)
    t.equal(res.status, status, `${url}: ${status}`)
    t.equal(res.body.code, code, `${url}: code ${String(code)}`)
    t.equal(res.headers['x-ratelimit-limit'], '8', `${url}: x-ratelimit-limit`)
    t.equal(res.headers['x-ratelimit-remaining'], String(8 - i - 1), `${url}: x-ratelimit-remaining counts down`)
    const reset = res.headers['x-ratelimit-reset'] ?? ''
    t.ok(/^\d+$/.test(reset) && Number(reset) >= 1 && Number(reset) <= Math.ceil(coverageOf(HOUR_MS) / 1000),
      `${url}: x-ratelimit-reset ${reset} is whole seconds until the count falls`)
  }
})

t.test('a refusal is 429 rate_limited with retry-after; waiting retry-after seconds and retrying is admitted (real server, fetch)', async (t) => {
  const { windowMs, seen: { url, key, admitted, refusal } } = await inFittingWindow(WINDOW_MS, async (windowMs) => {
    const { app, apiKeys } = await setup(t, { rateLimitWindowMs: windowMs })
    const { key } = await apiKeys.create({ guildId: GUILD, plan: 'free' })
    const url = `${await listen(app)}${STATS}`
    const clock = { ms: 0 }
    const admitted = await timed(clock, async () => await Promise.all(Array.from({ length: LIMITS.free }, async () => (await fetchJson(url, key)).status)))
    const refusal = await timed(clock, async () => await fetchJson(url, key))
    return { workMs: clock.ms, seen: { url, key, admitted, refusal } }
  })
  t.same(admitted, Array<number>(LIMITS.free).fill(200), `${LIMITS.free} admitted`)
  t.equal(refusal.status, 429)
  isRateLimitedBody(t, refusal.body, 'refusal')
  t.match(refusal.headers['content-type'], /^application\/json/)
  t.equal(refusal.headers['x-ratelimit-limit'], String(LIMITS.free), 'the refusal carries x-ratelimit-limit')
  t.equal(refusal.headers['x-ratelimit-remaining'], '0', 'and x-ratelimit-remaining 0')
  const retryAfter = retryAfterOf(t, refusal, coverageOf(windowMs), 'refusal')
  t.equal(refusal.headers['x-ratelimit-reset'], String(retryAfter), 'x-ratelimit-reset agrees with retry-after on a refusal')

  await sleep(retryAfter * 1000)
  const retried = await fetchJson(url, key)
  t.equal(retried.status, 200, `admitted after waiting retry-after ${retryAfter} s`)
})

t.test('refused requests are not counted: hammering while refused does not delay the full limit coming back', async (t) => {
  const untilRefused = [...Array<number>(LIMITS.free).fill(200), 429]
  const { seen } = await inFittingWindow(WINDOW_MS, async (windowMs) => {
    const { app, apiKeys } = await setup(t, { rateLimitWindowMs: windowMs })
    const { key } = await apiKeys.create({ guildId: GUILD, plan: 'free' })
    // No app is built before the hammering ends (oneAtATime): it must end before the admitted
    // requests leave the window, half a window after it begins.
    const { first, hammered, lastAdmitted, workMs } = await oneAtATime(async () => {
      const began = performance.now()
      const first = await statusesOf(app, key, untilRefused.length)
      const lastAdmitted = performance.now()
      // Refusals half a window later: were they counted, they would still be in the window when
      // the admitted requests have left it.
      await sleep(windowMs / 2)
      const hammered = await statusesOf(app, key, 15)
      // All of it must come before the first admitted request leaves the window: what it took
      // past the half window slept (late timers included) is work.
      return { first, hammered, lastAdmitted, workMs: performance.now() - began - windowMs / 2 }
    })
    await sleep(lastAdmitted + coverageOf(windowMs) + 100 - performance.now())
    const clock = { ms: workMs }
    const again = await timed(clock, async () => await statusesOf(app, key, untilRefused.length))
    return { workMs: clock.ms, seen: { first, hammered, again } }
  })
  t.same(seen.first, untilRefused, `${LIMITS.free} admitted, then refused`)
  t.same(seen.hammered, Array<number>(15).fill(429), '15 requests while at the limit are all refused')
  t.same(seen.again, untilRefused, `the full limit of ${LIMITS.free} is admitted again`)
})

t.test('two instances on one Redis with the same prefix share one count per key (real servers, fetch)', async (t) => {
  const redisPrefix = `t${process.pid}-shared`
  const one = await setup(t, { redisPrefix })
  const two = await setup(t, { redisPrefix })
  const { key } = await one.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const urls = [`${await listen(one.app)}${STATS}`, `${await listen(two.app)}${STATS}`]
  const answers: Answer[] = []
  for (let i = 0; i < LIMITS.professional + 2; i++) answers.push(await fetchJson(urls[i % 2] ?? '', key))
  t.same(answers.map((a) => a.status), [...Array<number>(LIMITS.professional).fill(200), 429, 429],
    `alternating between the two instances, ${LIMITS.professional} admitted in all, then both refuse`)
  t.same(answers.slice(0, LIMITS.professional).map((a) => a.headers['x-ratelimit-remaining']),
    Array.from({ length: LIMITS.professional }, (_, i) => String(LIMITS.professional - 1 - i)),
    'x-ratelimit-remaining counts down across both instances')

  const burstKey = (await one.apiKeys.create({ guildId: GUILD, plan: 'starter' })).key
  const burst = await Promise.all(Array.from({ length: 30 }, async (_, i) => await fetchJson(urls[i % 2] ?? '', burstKey)))
  t.equal(burst.filter((a) => a.status === 200).length, LIMITS.starter,
    `30 concurrent requests over both instances: exactly ${LIMITS.starter} admitted`)
  t.equal(burst.filter((a) => a.status === 429).length, 30 - LIMITS.starter, 'the rest refused with 429')
})

t.test('a plan change reaches an instance that refused the key: admitted again within the key cache\'s lifetime, not at the refusal\'s reset', async (t) => {
  const redisPrefix = `t${process.pid}-plan-change`
  const window = { rateLimitWindowMs: 60 * 60_000, apiKeyCacheTtlMs: 300 } // a refusal would last for most of an hour
  const one = await setup(t, { redisPrefix, ...window })
  const two = await setup(t, { redisPrefix, ...window })
  const { id, key } = await one.apiKeys.create({ guildId: GUILD, plan: 'free' })
  for (let i = 0; i < LIMITS.free; i++) t.equal((await get(one.app, STATS, key)).status, 200)
  const refused = await get(one.app, STATS, key)
  t.equal(refused.status, 429, 'the free plan\'s limit reached on one instance')
  t.ok(Number(refused.headers['retry-after']) > 60, `retry-after ${refused.headers['retry-after']} s`)
  await one.apiKeys.setPlan(id, 'starter')
  await sleep(400) // past API_KEY_CACHE_TTL_MS: both instances look the key up again
  for (const [name, app] of [['the instance that refused it', one], ['the other', two]] as const) {
    const answer = await get(app.app, STATS, key)
    t.equal(answer.status, 200, `${name} admits it under the starter plan`)
    t.equal(answer.headers['x-ratelimit-limit'], String(LIMITS.starter), `${name}: the starter plan's limit`)
  }
})

// What auth.ts does, pinned here: failures (missing or invalid key) are counted per client
// address in Redis; the one past authFailureLimit is 429 and blocks the address on that
// instance until it may try again. While blocked, a missing key or an invalid one is 429, and so
// is a valid key this instance has not cached (it is not even looked up); a valid key already
// cached as valid still passes. After retry-after, the address is served again.
t.test('failed authentications are limited per client address: the 4th failure (missing keys count) is 429 with retry-after', async (t) => {
  const address = '10.1.2.3'
  const { windowMs, seen } = await inFittingWindow(WINDOW_MS, async (windowMs) => {
    // The failures, and the requests while blocked, must all come within the failures' window.
    const { app, apiKeys } = await setup(t, { authFailureLimit: 3, authFailureWindowMs: windowMs, apiKeyCacheTtlMs: 5000 })
    const cached = (await apiKeys.create({ guildId: GUILD, plan: 'professional' })).key
    const uncached = (await apiKeys.create({ guildId: GUILD, plan: 'professional' })).key
    const bad = `${cached.slice(0, -4)}AAAA`
    const first = await get(app, STATS, cached, address)
    const clock = { ms: 0 }
    const seen = await timed(clock, async () => ({
      app,
      bad,
      uncached,
      first,
      failures: [await get(app, STATS, undefined, address), await get(app, STATS, bad, address), await get(app, STATS, '', address)],
      fourth: await get(app, STATS, bad, address),
      missing: await get(app, STATS, undefined, address),
      cachedWhileBlocked: await get(app, STATS, cached, address),
      uncachedWhileBlocked: await get(app, STATS, uncached, address),
      elsewhere: await get(app, STATS, bad, '10.9.9.9')
    }))
    return { workMs: clock.ms, seen }
  })
  const { app, bad, uncached, first, failures, fourth, missing, cachedWhileBlocked, uncachedWhileBlocked, elsewhere } = seen
  t.equal(first.status, 200, 'a valid key first: now cached by this instance')
  t.same(failures.map((f) => [f.status, f.body.code]),
    [[401, 'missing_api_key'], [401, 'invalid_api_key'], [401, 'missing_api_key']], 'three failures: 401 each')

  t.equal(fourth.status, 429, 'the 4th failure from the address is refused: missing keys were counted')
  isRateLimitedBody(t, fourth.body, '4th failure')
  const retryAfter = retryAfterOf(t, fourth, coverageOf(windowMs), '4th failure')

  t.equal(missing.status, 429, 'while blocked, a missing key is 429 too')
  isRateLimitedBody(t, missing.body, 'missing key while blocked')
  retryAfterOf(t, missing, coverageOf(windowMs), 'missing key while blocked')
  t.equal(cachedWhileBlocked.status, 200, 'while blocked, a key already cached as valid still passes')
  t.equal(uncachedWhileBlocked.status, 429, 'while blocked, a valid key not yet cached is refused (not looked up)')
  t.same([elsewhere.status, elsewhere.body.code], [401, 'invalid_api_key'], 'another address is not affected')

  await sleep(retryAfter * 1000)
  t.same((await get(app, STATS, bad, address)).status, 401, `after retry-after ${retryAfter} s, a bad key is 401 again`)
  t.same((await get(app, STATS, uncached, address)).status, 200, 'and a valid key passes')
})

t.test('Redis down: 503 service_unavailable within 1 s, never unlimited, and recovery without restart', async (t) => {
  const own = await RedisServer.start()
  t.teardown(async () => { await own.close() })
  // One instance that looks every key up (auth needs Redis) and one that has the key cached
  // (auth passes locally, so only the rate limit needs Redis: it must not let the request through).
  const lookup = await buildTestApp(t, own.url, { planLimits: LIMITS, rateLimitWindowMs: HOUR_MS, apiKeyCacheTtlMs: 0 })
  const caching = await buildTestApp(t, own.url, { planLimits: LIMITS, rateLimitWindowMs: HOUR_MS, apiKeyCacheTtlMs: 5000, redisPrefix: lookup.config.redisPrefix })
  // The tests' own connections (buildTestApp's) reconnect quietly during the outage.
  for (const { redis } of [lookup, caching]) redis.on('error', () => {})
  const { key } = await lookup.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  t.equal((await get(lookup.app, STATS, key)).status, 200)
  t.equal((await get(caching.app, STATS, key)).status, 200, 'the caching instance has now cached the key')

  await own.stop({ save: true }) // keep the key for after the restart
  // The last two need no Redis but the rate limit's (403 and 400 come after it): 503 there shows
  // the limit fails closed instead of letting the request through uncounted.
  const probes = [
    { name: 'no key cache', app: lookup.app, url: STATS },
    { name: 'key cached', app: caching.app, url: STATS },
    { name: 'key cached, other guild', app: caching.app, url: `/api/v1/servers/${OTHER_GUILD}/stats` },
    { name: 'key cached, limit=0', app: caching.app, url: `/api/v1/servers/${GUILD}/leaderboard?limit=0` }
  ]
  // No app is built meanwhile (oneAtATime): a build would count in the time of an answer.
  await oneAtATime(async () => {
    for (const when of ['at once', 'after 300 ms']) {
      if (when !== 'at once') await sleep(300)
      for (const { name, app, url } of probes) {
        const started = performance.now()
        const res = await get(app, url, key)
        const elapsed = performance.now() - started
        t.equal(res.status, 503, `${name}, ${when}: 503`)
        t.same(res.body, { statusCode: 503, error: 'Service Unavailable', code: 'service_unavailable', message: String(res.body.message) },
          `${name}, ${when}: the contract's error shape`)
        t.ok(elapsed < 1000, `${name}, ${when}: answered in ${Math.round(elapsed)} ms (< 1 s)`)
      }
    }
  })

  await own.startProcess()
  for (const [name, { app }] of [['no key cache', lookup], ['key cached', caching]] as const) {
    const deadline = performance.now() + 5000
    let res = await get(app, STATS, key)
    while (res.status !== 200 && performance.now() < deadline) {
      await sleep(100)
      res = await get(app, STATS, key)
    }
    t.equal(res.status, 200, `${name}: serving again once Redis is back, without a restart`)
    t.ok(res.headers['x-ratelimit-remaining'] !== undefined, `${name}: and rate-limited again`)
  }
})
