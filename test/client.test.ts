// The TypeScript client against a real running service (the app listening on a port, real
// Redis): typed results equal the API's answers, revalidation with ETags (304s are free),
// rate-limit state, retry-after on 429, the contract's errors as LeaderboardApiError, aborts.
import t, { type Test } from 'tap'
import { createServer } from 'node:net'
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { readdirSync, readFileSync } from 'node:fs'
import { RedisServer } from './helpers/redis-server.js'
import { inFittingWindow } from './helpers/fitting-window.js'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { LeaderboardApiError, LeaderboardClient, type LeaderboardClientOptions, type RetryInfo } from '../src/client/index.js'
import type { Config } from '../src/config.js'

// The subtests run side by side: each app works under a key prefix of its own (its own keys and
// quotas) on the shared server, proxies and stub servers are on ports of their own, and nothing
// reads the server as a whole.
t.jobs = 6

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const GUILD = '1300000000000000001'
const OTHER_GUILD = '1300000000000000002'

interface Sent { url: string, ifNoneMatch: string | undefined, status: number, answeredAt: number }

interface Fixture extends TestApp {
  baseUrl: string
  key: string
  /** Every request the clients made through `client()`, with its answer's status. */
  sent: Sent[]
  client: (options?: Partial<LeaderboardClientOptions>) => LeaderboardClient
  /** The same request straight to the API, for comparison. */
  direct: (path: string) => Promise<{ status: number, body: unknown }>
}

async function serve (t: Test, overrides: Partial<Config> = {}): Promise<Fixture> {
  const fixture = await buildTestApp(t, server.url, overrides)
  const address = await fixture.app.listen({ port: 0, host: '127.0.0.1' })
  const baseUrl = `${address}/api/v1`
  const { key } = await fixture.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  for (let i = 1; i <= 12; i++) {
    await fixture.writer.awardXp({ guildId: GUILD, userId: String(20 + i), xp: 150 * i, username: `player ${i}` })
  }
  const sent: Sent[] = []
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    sent.push({ url: String(input), ifNoneMatch: (init?.headers as Record<string, string>)['if-none-match'], status: response.status, answeredAt: performance.now() })
    return response
  }
  return {
    ...fixture,
    baseUrl,
    key,
    sent,
    client: (options = {}) => new LeaderboardClient({ baseUrl, apiKey: key, fetch: recording, ...options }),
    direct: async (path) => {
      const response = await fetch(`${baseUrl}/${path}`, { headers: { 'x-api-key': key } })
      return { status: response.status, body: await response.json() }
    }
  }
}

t.test('each method resolves to the body the API answers, typed', async (t) => {
  const { client, direct } = await serve(t)
  const c = client()
  const calls: Array<[string, () => Promise<{ data: unknown, notModified: boolean }>]> = [
    [`servers/${GUILD}/leaderboard`, async () => await c.leaderboard(GUILD)],
    [`servers/${GUILD}/leaderboard?limit=3&page=2`, async () => await c.leaderboard(GUILD, { limit: 3, page: 2 })],
    [`servers/${GUILD}/leaderboard?period=week`, async () => await c.leaderboard(GUILD, { period: 'week' })],
    [`servers/${GUILD}/members/25`, async () => await c.member(GUILD, '25')],
    [`servers/${GUILD}/members/25/around?radius=2`, async () => await c.around(GUILD, '25', { radius: 2 })],
    [`servers/${GUILD}/members?ids=25,99,21`, async () => await c.members(GUILD, ['25', '99', '21'])],
    [`servers/${GUILD}/stats`, async () => await c.stats(GUILD)]
  ]
  for (const [path, call] of calls) {
    const result = await call()
    const expected = await direct(path)
    t.equal(expected.status, 200, path)
    t.same(result.data, expected.body, path)
    t.equal(result.notModified, false)
  }
  const page = await c.leaderboard(GUILD, { limit: 3, page: 2 })
  t.same(page.data.data.map((e) => e.rank), [4, 5, 6], 'the typed page: entries, ranks')
  const list = await c.members(GUILD, ['25', '99'])
  t.same(list.data.missing, ['99'])
  t.equal((await c.around(GUILD, '25', { radius: 2 })).data.rank, 8)
})

t.test('the same URL again sends If-None-Match and resolves notModified with the same data; no quota spent', async (t) => {
  const { client, sent } = await serve(t)
  const c = client()
  const first = await c.leaderboard(GUILD, { limit: 5 })
  const again = await c.leaderboard(GUILD, { limit: 5 })
  t.equal(sent[0]?.ifNoneMatch, undefined, 'the first call has no tag to send')
  t.match(sent[1], { ifNoneMatch: /^"[^"]+"$/, status: 304 })
  t.equal(again.notModified, true)
  t.same(again.data, first.data)
  t.equal(again.rateLimit?.remaining, first.rateLimit?.remaining, 'a 304 is free')
  const other = await c.leaderboard(GUILD, { limit: 6 })
  t.equal(other.notModified, false, 'another URL is another resource')
  t.equal(other.rateLimit?.remaining, (first.rateLimit?.remaining ?? 0) - 1, 'a 200 is counted')
})

t.test('after a write the next call resolves the new data', async (t) => {
  const { client, writer } = await serve(t)
  const c = client()
  const before = await c.member(GUILD, '21')
  await writer.awardXp({ guildId: GUILD, userId: '21', xp: 5000 })
  const after = await c.member(GUILD, '21')
  t.equal(after.notModified, false)
  t.equal(after.data.xp, before.data.xp + 5000)
  t.equal((await c.member(GUILD, '21')).notModified, true, 'and that answer is the one revalidated next')
})

t.test('rate-limit state: on each result and as client.rateLimit, the last seen', async (t) => {
  const { client } = await serve(t, { planLimits: { free: 100, starter: 1000, professional: 50 } })
  const c = client()
  t.equal(c.rateLimit, undefined, 'nothing seen yet')
  const first = await c.stats(GUILD)
  t.same(first.rateLimit, { limit: 50, remaining: 49, resetSeconds: first.rateLimit?.resetSeconds })
  t.ok((first.rateLimit?.resetSeconds ?? -1) > 0)
  const second = await c.leaderboard(GUILD)
  t.equal(second.rateLimit?.remaining, 48)
  t.same(c.rateLimit, second.rateLimit)
})

t.test('the remembered URLs are bounded: the least recently used is forgotten', async (t) => {
  const { client, sent } = await serve(t)
  const c = client({ cacheEntries: 1 })
  await c.stats(GUILD)
  await c.member(GUILD, '22')
  t.equal((await c.stats(GUILD)).notModified, false, 'stats was forgotten')
  t.equal(sent[2]?.ifNoneMatch, undefined)
  t.equal((await c.stats(GUILD)).notModified, true)
})

/**
 * A plan of 2 requests per window: an hour, or `windowMs` for a test that waits for a refusal's
 * reset (the first tried, lengthened by inFittingWindow on a machine too slow for it).
 */
const tinyPlan = (windowMs = 3_600_000): Partial<Config> => ({ planLimits: { free: 100, starter: 1000, professional: 2 }, rateLimitWindowMs: windowMs })

/** Spends the key's 2 requests on URLs the client will not revalidate. */
async function spend (c: LeaderboardClient): Promise<void> {
  await c.member(GUILD, '21')
  await c.member(GUILD, '22')
}

t.test('a 429 with retry-after is waited out and retried', async (t) => {
  const { seen: { result, statuses } } = await inFittingWindow(1000, async (windowMs) => {
    const { client, sent } = await serve(t, tinyPlan(windowMs))
    // Its wait for a retry-after as long as the window (10 s by default).
    const c = client({ maxRetryWaitMs: 2 * windowMs })
    const began = performance.now()
    await spend(c)
    const result = await c.stats(GUILD)
    // The two spent and the refused one fall in one window.
    return { workMs: (sent[2]?.answeredAt ?? Infinity) - began, seen: { result, statuses: sent.map((s) => s.status) } }
  })
  t.equal(result.notModified, false)
  t.match(result.data, { total_members: 12 })
  t.same(statuses, [200, 200, 429, 200], 'refused once, then admitted')
})

t.test('with maxRetries 0, or a retry-after longer than maxRetryWaitMs, a 429 throws rate_limited', async (t) => {
  for (const options of [{ maxRetries: 0 }, { maxRetryWaitMs: 500 }]) {
    const { client, sent } = await serve(t, tinyPlan())
    const c = client(options)
    await spend(c)
    const error = await c.stats(GUILD).catch((err: unknown) => err)
    t.ok(error instanceof LeaderboardApiError, JSON.stringify(options))
    t.match(error, { statusCode: 429, code: 'rate_limited', message: /rate limit of 2 requests/ })
    t.ok(((error as LeaderboardApiError).retryAfterSeconds ?? 0) >= 1, 'retryAfterSeconds')
    t.equal(sent.length, 3, 'no retry')
    t.equal(c.rateLimit?.remaining, 0)
  }
})

t.test('the contract\'s errors throw LeaderboardApiError with their status and code', async (t) => {
  const { client, baseUrl } = await serve(t)
  const c = client()
  const cases: Array<[string, () => Promise<unknown>, number, string]> = [
    ['no key', async () => await client({ apiKey: '' }).stats(GUILD), 401, 'missing_api_key'],
    ['unknown key', async () => await client({ apiKey: 'lb_nope' }).stats(GUILD), 401, 'invalid_api_key'],
    ['another server', async () => await c.stats(OTHER_GUILD), 403, 'forbidden'],
    ['a non-member', async () => await c.member(GUILD, '999'), 404, 'member_not_found'],
    ['a non-member around', async () => await c.around(GUILD, '999'), 404, 'member_not_found'],
    ['a bad limit', async () => await c.leaderboard(GUILD, { limit: 101 }), 400, 'invalid_parameter'],
    ['a bad id', async () => await c.member(GUILD, '0x1'), 400, 'invalid_parameter'],
    ['a wrong base URL', async () => await client({ baseUrl: `${baseUrl}/nope` }).stats(GUILD), 404, 'not_found']
  ]
  for (const [what, call, statusCode, code] of cases) {
    const error = await call().then(() => null, (err: unknown) => err)
    t.ok(error instanceof LeaderboardApiError, what)
    t.match(error, { statusCode, code, message: /./, name: 'LeaderboardApiError' }, what)
  }
})

t.test('a signal aborts the request, and a retry wait, with its reason', async (t) => {
  const { seen: { early, late, statuses } } = await inFittingWindow(1000, async (windowMs) => {
    const { client, sent } = await serve(t, tinyPlan(windowMs))
    const c = client({ maxRetryWaitMs: 2 * windowMs })
    const early = await c.stats(GUILD, { signal: AbortSignal.abort(new Error('already gone')) }).then(() => null, (err: unknown) => err)
    const began = performance.now()
    await spend(c)
    const controller = new AbortController()
    const waiting = c.stats(GUILD, { signal: controller.signal })
    while (sent.length < 3) await new Promise((resolve) => setTimeout(resolve, 10))
    controller.abort(new Error('the dashboard closed'))
    const late = await waiting.then(() => null, (err: unknown) => err)
    // The two spent and the refused one fall in one window.
    return { workMs: (sent[2]?.answeredAt ?? Infinity) - began, seen: { early, late, statuses: sent.map((s) => s.status) } }
  })
  t.match(early, { message: 'already gone' }, 'an aborted signal rejects at once, with its reason')
  t.match(late, { message: 'the dashboard closed' }, 'an abort in the retry wait rejects with its reason')
  t.same(statuses, [200, 200, 429], 'aborted in the wait: no retry sent')
})

/**
 * A proxy in front of the service that fails the first requests as proxies and networks do (in
 * `failures`' order: a dropped connection, or a status with an HTML page), then forwards.
 */
async function flakyProxy (t: Test, target: string, failures: Array<'drop' | number>) {
  const seen: Array<{ requestId: string | undefined }> = []
  const proxy = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push({ requestId: req.headers['x-request-id'] as string | undefined })
    const failure = failures.shift()
    if (failure === 'drop') { req.socket.destroy(); return }
    if (failure !== undefined) { res.writeHead(failure, { 'content-type': 'text/html' }).end(`<h1>${failure}</h1>`); return }
    fetch(`${target}${req.url ?? ''}`, { headers: req.headers as Record<string, string> }).then(async (answer) => {
      res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(Buffer.from(await answer.arrayBuffer()))
    }, () => { res.writeHead(500).end() })
  })
  await new Promise<void>((resolve) => { proxy.listen(0, '127.0.0.1', resolve) })
  t.teardown(() => { proxy.closeAllConnections(); proxy.close() })
  const { port } = proxy.address() as { port: number }
  return { baseUrl: `http://127.0.0.1:${port}/api/v1`, seen }
}

t.test('a dropped connection, a 502, 503 or 504 is retried after a jittered backoff, each retry told to onRetry; one request id throughout', async (t) => {
  const { key, baseUrl } = await serve(t)
  const proxy = await flakyProxy(t, baseUrl.replace(/\/api\/v1$/, ''), ['drop', 502, 503, 504])
  const retries: RetryInfo[] = []
  const c = new LeaderboardClient({ baseUrl: proxy.baseUrl, apiKey: key, maxRetries: 4, retryBaseMs: 20, onRetry: (retry) => { retries.push(retry) } })
  const result = await c.stats(GUILD)
  t.match(result.data, { total_members: 12 }, 'the fifth attempt reached the service')
  t.same(retries.map((r) => [r.attempt, r.status]), [[1, undefined], [2, 502], [3, 503], [4, 504]])
  t.ok(retries[0]?.error instanceof Error, 'the dropped connection\'s error is passed on')
  for (const retry of retries) {
    const cap = 20 * 2 ** (retry.attempt - 1)
    t.ok(retry.delayMs >= 0 && retry.delayMs < cap, `retry ${retry.attempt} waited ${retry.delayMs} ms, below ${cap}`)
  }
  const ids = new Set(proxy.seen.map((s) => s.requestId))
  t.equal(ids.size, 1, 'every attempt sent the same x-request-id')
  t.same([...ids], [retries[0]?.requestId])
})

t.test('past maxRetries the last answer throws: a proxy\'s 502 page is http_502, carrying the request id the call sent', async (t) => {
  const { key, baseUrl } = await serve(t)
  const proxy = await flakyProxy(t, baseUrl.replace(/\/api\/v1$/, ''), [502, 502, 502])
  const retries: RetryInfo[] = []
  const c = new LeaderboardClient({ baseUrl: proxy.baseUrl, apiKey: key, retryBaseMs: 1, onRetry: (retry) => { retries.push(retry) } })
  const error = await c.stats(GUILD).catch((err: unknown) => err)
  t.ok(error instanceof LeaderboardApiError)
  t.match(error, { statusCode: 502, code: 'http_502', requestId: proxy.seen[0]?.requestId })
  t.equal(retries.length, 2, 'the default maxRetries: two retries, three attempts')
  t.equal(proxy.seen.length, 3)
})

t.test('an error answer of the service carries the request id the service logged it under; a 4xx is never retried', async (t) => {
  const { client, sent } = await serve(t)
  const retries: RetryInfo[] = []
  const error = await client({ onRetry: (retry) => { retries.push(retry) } }).member(GUILD, '999').catch((err: unknown) => err) as LeaderboardApiError
  t.equal(error.code, 'member_not_found')
  t.match(error.requestId, /^[0-9a-f-]{36}$/, 'a UUID')
  t.same(retries, [])
  t.equal(sent.length, 1)
})

t.test('an attempt longer than timeoutMs rejects with the TimeoutError fetch gives, after its retries', async (t) => {
  const silent = createServer(() => {}) // accepts and never answers
  await new Promise<void>((resolve) => { silent.listen(0, '127.0.0.1', resolve) })
  t.teardown(() => { silent.close() })
  const { port } = silent.address() as { port: number }
  silent.on('connection', (socket) => { t.teardown(() => { socket.destroy() }) })
  const retries: RetryInfo[] = []
  const c = new LeaderboardClient({ baseUrl: `http://127.0.0.1:${port}/api/v1`, apiKey: 'k', timeoutMs: 200, retryBaseMs: 1, onRetry: (retry) => { retries.push(retry) } })
  await t.rejects(c.stats(GUILD), { name: 'TimeoutError' })
  t.same(retries.map((r) => (r.error as Error).name), ['TimeoutError', 'TimeoutError'], 'each timed-out attempt was retried, twice by default')
})

t.test('the client has no runtime import outside src/client (types only), so a bundle carries none of the server', async (t) => {
  const dir = new URL('../src/client/', import.meta.url)
  const imports = readdirSync(dir).flatMap((file) =>
    [...readFileSync(new URL(file, dir), 'utf8').matchAll(/^(?:import|export) (?!type )[^\n]* from '([^']+)'/gm)].map((m) => `${file}: ${m[1]}`))
  t.ok(imports.length >= 3, imports.join('; '))
  t.same(imports.filter((line) => !/: \.\/[a-z-]+\.js$/.test(line)), [])
})
