// Live updates (server-sent events) against a real Redis: the first event at once with the
// endpoint's ETag and exact body, a change as the next event, coalescing, Last-Event-ID,
// keep-alive comments, the endpoints' errors, quota and the cap of streams per key, the end of a
// revoked key's streams, and each stream's log line.
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { Writable } from 'node:stream'
import { Redis } from 'ioredis'
import { commandCalls, RedisServer, scriptCalls, scriptSha } from './helpers/redis-server.js'
import { buildTestApp, oneAtATime, type TestApp } from './helpers/app.js'
import { SseReader } from './helpers/sse.js'
import type { Config } from '../src/config.js'
import { buildApp } from '../src/app.js'
import { loggerOptions } from '../src/logger.js'
import type { ClientAddress } from '../src/client-address.js'

// The subtests run side by side: each app works under a key prefix of its own, and the two that
// count Redis-wide commands (INFO commandstats) have a redis-server of their own.
t.jobs = 8

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

/** A redis-server for one subtest alone: for counts of the whole server's commands. */
async function ownServer (t: Test): Promise<RedisServer> {
  const own = await RedisServer.start()
  t.teardown(async () => { await own.close() })
  return own
}

const GUILD = '1900000000000000001'
const OTHER_GUILD = '1900000000000000002'
const BOARD = `/api/v1/servers/${GUILD}/leaderboard`
const MEMBER = `/api/v1/servers/${GUILD}/members/21`
const STATS = `/api/v1/servers/${GUILD}/stats`

interface Fixture extends TestApp {
  base: string
  key: string
  open: (path: string, headers?: Record<string, string>) => Promise<SseReader>
  get: (path: string) => Promise<{ status: number, etag: string | null, body: string, remaining: string | null }>
}

async function serve (t: Test, overrides: Partial<Config> = {}, redisUrl = server.url): Promise<Fixture> {
  const fixture = await buildTestApp(t, redisUrl, overrides)
  const base = await fixture.app.listen({ port: 0, host: '127.0.0.1' })
  const { key } = await fixture.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  for (let i = 1; i <= 12; i++) {
    await fixture.writer.awardXp({ guildId: GUILD, userId: String(20 + i), xp: 150 * i, username: `player ${i}` })
  }
  return {
    ...fixture,
    base,
    key,
    open: async (path, headers = {}) => await SseReader.open(t, base, path, { 'x-api-key': key, ...headers }),
    get: async (path) => {
      // Uncompressed, so its ETag is the one a stream's event carries (a compressed body's names its encoding).
      const response = await fetch(new URL(path, base), { headers: { 'x-api-key': key, 'accept-encoding': 'identity' } })
      return { status: response.status, etag: response.headers.get('etag'), body: await response.text(), remaining: response.headers.get('x-ratelimit-remaining') }
    }
  }
}

t.test('each stream: headers at once, the first event with the ETag and the exact body of its endpoint, then a change', async (t) => {
  const f = await serve(t)
  for (const [path, name] of [[`${BOARD}?limit=5&page=2`, 'leaderboard'], [MEMBER, 'member'], [STATS, 'stats']] as const) {
    const [plain, query = ''] = path.split('?')
    const streamPath = `${plain}/stream${query === '' ? '' : `?${query}`}`
    const stream = await f.open(streamPath)
    t.equal(stream.status, 200, `${name}: 200`)
    t.match(stream.headers['content-type'], /^text\/event-stream/, `${name}: an event stream`)
    t.ok(stream.headers['x-ratelimit-remaining'], `${name}: with the quota headers`)
    t.ok(stream.headers['x-request-id'], `${name}: and the request id`)
    const first = await stream.event(0)
    const before = await f.get(path)
    t.equal(first.event, name, `${name}: the event's name`)
    t.equal(first.id, before.etag, `${name}: id is the endpoint's ETag`)
    t.equal(first.data, before.body, `${name}: data is exactly the endpoint's body`)

    await f.writer.awardXp({ guildId: GUILD, userId: '21', xp: 5000 })
    // (The stats stream also carries the server's events, typed: test/live-events.test.ts.)
    await stream.until(() => stream.events.filter((e) => e.event === name).length > 1, `${name}: the next event`)
    const second = stream.events.filter((e) => e.event === name)[1]!
    const after = await f.get(path)
    t.not(second.id, first.id, `${name}: a change is a new event`)
    t.equal(second.id, after.etag, `${name}: with the new ETag`)
    t.equal(second.data, after.body, `${name}: and the new body`)
  }
})

t.test('a stream to a page of an allowed origin carries the CORS headers', async (t) => {
  const origin = 'https://dash.example.com'
  const f = await serve(t, { corsOrigins: [origin] })
  const stream = await f.open(`${STATS}/stream`, { origin })
  t.equal(stream.status, 200)
  t.equal(stream.headers['access-control-allow-origin'], origin, 'the page may read it')
  t.match(stream.headers['access-control-expose-headers'], /x-ratelimit-remaining/, 'and its quota headers')
})

t.test('50 writes in one second give at most 2 events (one per watcher tick they span), the last one the final page', async (t) => {
  const f = await serve(t)
  const stream = await f.open(`${BOARD}/stream`)
  await stream.event(0)
  await sleep(1100) // past the first event's second, so the bound is the ticks'
  // Spread over a second, or over longer on a machine that takes longer to send them: the bound
  // is the number of ticks (a second apart) the writes span, plus one.
  const spanMs = await oneAtATime(async () => {
    const started = Date.now()
    for (let i = 0; i < 50; i++) {
      await f.writer.awardXp({ guildId: GUILD, userId: String(21 + (i % 12)), xp: 10 })
      await sleep(Math.max(0, started + (i + 1) * 19 - Date.now()))
    }
    return Date.now() - started
  })
  const final = await f.get(BOARD)
  await stream.until(() => stream.events.at(-1)?.id === final.etag, 'the final page')
  await sleep(1500) // nothing else comes
  const most = Math.ceil(spanMs / 1000) + 1
  t.ok(stream.events.length - 1 <= most, `${stream.events.length - 1} events for 50 writes over ${spanMs} ms (at most ${most})`)
  t.equal(stream.events.at(-1)?.data, final.body, 'the last event is the page after the last write')
})

t.test('Last-Event-ID equal to the current ETag: no repeat; a later change still comes', async (t) => {
  const f = await serve(t, { streamKeepAliveMs: 300 })
  const current = await f.get(`${BOARD}?limit=3`)
  const stream = await f.open(`${BOARD}/stream?limit=3`, { 'last-event-id': current.etag ?? '' })
  t.equal(stream.status, 200, 'opened')
  await stream.until(() => stream.comments.length >= 2, 'two keep-alive comments')
  t.equal(stream.events.length, 0, 'the page the client holds is not sent again')
  await f.writer.awardXp({ guildId: GUILD, userId: '22', xp: 9000 })
  const event = await stream.event(0)
  t.equal(event.data, (await f.get(`${BOARD}?limit=3`)).body, 'the change comes')

  const stale = await f.open(`${BOARD}/stream?limit=3`, { 'last-event-id': current.etag ?? '' })
  t.equal((await stale.event(0)).data, (await f.get(`${BOARD}?limit=3`)).body, 'an older Last-Event-ID gets the current page at once')
})

t.test('a quiet stream gets a keep-alive comment within STREAM_KEEPALIVE_MS', async (t) => {
  const f = await serve(t, { streamKeepAliveMs: 500 })
  const stream = await f.open(`${STATS}/stream`)
  await stream.event(0)
  await stream.until(() => stream.comments.includes('keep-alive'), 'a comment')
  t.pass('a comment line came while nothing changed')
  t.notOk(stream.ended, 'the stream stays open')
})

t.test("the endpoints' errors, in the contract's shape, before any stream", async (t) => {
  const f = await serve(t)
  const cases: Array<[string, Record<string, string>, number, string]> = [
    [`${BOARD}/stream?limit=101`, {}, 400, 'invalid_parameter'],
    [`${BOARD}/stream`, { 'x-api-key': '' }, 401, 'missing_api_key'],
    [`${BOARD}/stream`, { 'x-api-key': 'lb_nope' }, 401, 'invalid_api_key'],
    [`/api/v1/servers/${OTHER_GUILD}/stats/stream`, {}, 403, 'forbidden'],
    [`/api/v1/servers/${GUILD}/members/999/stream`, {}, 404, 'member_not_found']
  ]
  for (const [path, headers, status, code] of cases) {
    const answer = await f.open(path, headers)
    t.equal(answer.status, status, `${path}: ${status}`)
    t.equal(JSON.parse(answer.body).code, code, `${path}: ${code}`)
  }
})

t.test('a member removed while watched: an error event with the 404 body, and the stream ends', async (t) => {
  const f = await serve(t)
  const stream = await f.open(`/api/v1/servers/${GUILD}/members/32/stream`)
  await stream.event(0)
  await f.writer.removeMember({ guildId: GUILD, userId: '32' })
  const event = await stream.event(1)
  t.equal(event.event, 'error', 'an error event')
  t.equal(JSON.parse(event.data).code, 'member_not_found', "with the endpoint's 404 body")
  await stream.until(() => stream.ended, 'the end')
})

t.test('quota: opening counts one request, and each minute (a sixtieth of the window) open one more; past the limit the stream ends', async (t) => {
  const f = await serve(t, { rateLimitWindowMs: 60_000, planLimits: { free: 4, starter: 1000, professional: 10000 } })
  const { key } = await f.apiKeys.create({ guildId: GUILD, plan: 'free' })
  const stream = await SseReader.open(t, f.base, `${STATS}/stream`, { 'x-api-key': key })
  t.equal(stream.headers['x-ratelimit-remaining'], '3', 'opening counted one request')
  // One more each second (the window's sixtieth): 4 in all after 3 s, and the next is refused.
  await stream.until(() => stream.ended, 'the stream to end once the quota is spent', 10_000)
  const refused = await SseReader.open(t, f.base, `${STATS}/stream`, { 'x-api-key': key })
  t.equal(refused.status, 429, 'a new stream is refused while the key is past its limit')
  t.equal(JSON.parse(refused.body).code, 'rate_limited')
})

t.test('each stream is logged once, when it ends: route, duration, events sent, why it ended; its key id, never the key', async (t) => {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })
  const ctx = await buildTestApp(t, server.url, { apiKeyCacheTtlMs: 1000 })
  const app = buildApp(ctx.config, { logger: { ...(loggerOptions('info') as object), stream } })
  t.teardown(async () => { await app.close() })
  await oneAtATime(async () => { await app.ready() })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  await ctx.writer.awardXp({ guildId: GUILD, userId: '21', xp: 150, username: 'player 1' })
  const closedLines = (): Array<Record<string, unknown>> => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'stream closed')

  // Closed by its client after its first event and one change.
  const { id: keyId, key } = await ctx.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const watched = await SseReader.open(t, base, `${STATS}/stream`, { 'x-api-key': key, 'x-request-id': 'watched-1' })
  await watched.event(0)
  await ctx.writer.awardXp({ guildId: GUILD, userId: '22', xp: 10 })
  await watched.until(() => watched.events.filter((e) => e.event === 'stats').length >= 2, 'the change')
  // The stats stream carries typed events too (a member entering the top): counted as sent. The
  // stream listens for them from its start; by its second stats event that call has been made.
  await ctx.writer.awardXp({ guildId: GUILD, userId: '23', xp: 5 })
  await watched.until(() => watched.events.some((e) => e.event === 'member.rank_entered_top'), 'a typed event')
  watched.close()
  for (let i = 0; closedLines().length === 0 && i < 200; i++) await sleep(25)
  const [byClient] = closedLines()
  t.match(byClient, {
    level: 30, reqId: 'watched-1', url: `${STATS}/stream`, route: '/api/v1/servers/:guild_id/stats/stream', ms: Number, ip: '127.0.0.1', guild: GUILD, keyId, events: Number, reason: 'client_closed'
  }, 'closed by its client')
  t.ok(Number(byClient?.events) >= watched.events.length, `every event received is counted: ${String(byClient?.events)} logged, ${watched.events.length} received (${watched.events.map((e) => e.event).join(', ')})`)
  t.ok(Number(byClient?.ms) > 0, `open ${String(byClient?.ms)} ms`)

  // Ended by the service: its key revoked.
  const revoked = await ctx.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const refused = await SseReader.open(t, base, `${STATS}/stream`, { 'x-api-key': revoked.key, 'x-request-id': 'watched-2' })
  await refused.event(0)
  await ctx.apiKeys.revoke(revoked.id)
  await refused.until(() => refused.ended, 'the stream to end', 10 * (ctx.config.apiKeyCacheTtlMs + 1000))
  for (let i = 0; closedLines().length < 2 && i < 200; i++) await sleep(25)
  t.match(closedLines().find((l) => l.reqId === 'watched-2'), { keyId: revoked.id, events: 1, reason: 'key_refused' }, 'ended for its revoked key')
  t.equal(closedLines().length, 2, 'one line per stream')
  const log = lines.join('')
  t.notOk(log.includes(key) || log.includes(revoked.key), 'no key in the logs')
})

/**
 * How long a stream may take to end `dueMs` after a change: within the contract's 5 s (or
 * `dueMs` and a second, past it), on a machine whose opening of the stream took `openMs`, ten
 * of those more (a busy machine's watcher and auth are that much slower).
 */
const endBoundMs = (dueMs: number, openMs: number): number => Math.max(5000, dueMs + 1000) + 10 * openMs

t.test('a key revoked while its stream is open: the stream ends within API_KEY_CACHE_TTL_MS and a tick', async (t) => {
  const f = await serve(t, { apiKeyCacheTtlMs: 1000 })
  const { id, key } = await f.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const opening = performance.now()
  const stream = await SseReader.open(t, f.base, `${STATS}/stream`, { 'x-api-key': key })
  await stream.event(0)
  const openMs = performance.now() - opening
  await f.apiKeys.revoke(id)
  await stream.until(() => stream.ended, 'the stream to end', endBoundMs(1000 + 1000, openMs))
  const refused = await SseReader.open(t, f.base, `${STATS}/stream`, { 'x-api-key': key })
  t.equal(refused.status, 401, 'and the key opens no other')
})

t.test("re-checking open streams' keys is the service's own doing: 7 keys revoked with 5 streams each from one address all end, and the address is not locked out", async (t) => {
  // More streams than the address may fail authentications (AUTH_FAILURE_LIMIT, 30 by default):
  // counted as failed logins, the re-checks locked the address out, and the streams whose
  // re-check was refused by the lockout were taken for Redis away and stayed open.
  const f = await serve(t, { apiKeyCacheTtlMs: 1000 })
  t.ok(7 * f.config.maxStreamsPerKey > f.config.authFailureLimit, `${7 * f.config.maxStreamsPerKey} streams, ${f.config.authFailureLimit} failures allowed`)
  const made = await Promise.all(Array.from({ length: 7 }, async () => await f.apiKeys.create({ guildId: GUILD, plan: 'professional' })))
  const streams = (await Promise.all(made.map(async ({ key }) => await Promise.all(
    Array.from({ length: f.config.maxStreamsPerKey }, async () => await SseReader.open(t, f.base, `${STATS}/stream`, { 'x-api-key': key }))
  )))).flat()
  await Promise.all(streams.map(async (s) => await s.event(0)))
  for (const { id } of made) await f.apiKeys.revoke(id)
  // A key revoked is refused within API_KEY_CACHE_TTL_MS and a tick or two; the wait is ample.
  await Promise.all(streams.map(async (s) => { await s.until(() => s.ended, 'the stream to end', 10 * (f.config.apiKeyCacheTtlMs + 1000)) }))
  t.equal(streams.filter((s) => s.ended).length, streams.length, `all ${streams.length} streams ended`)
  t.equal(await f.redis.exists(f.keys.authFailures('127.0.0.1' as ClientAddress)), 0, "no failed authentication counted against the streams' address")
  const { key } = await f.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const response = await fetch(new URL(STATS, f.base), { headers: { 'x-api-key': key } })
  t.equal(response.status, 200, 'a new, valid key from that address is served')
})

t.test('a key that expires while its stream is open: the stream ends', async (t) => {
  const f = await serve(t)
  const { key } = await f.apiKeys.create({ guildId: GUILD, plan: 'professional', expiresInSeconds: 2 })
  const opening = performance.now()
  const stream = await SseReader.open(t, f.base, `${STATS}/stream`, { 'x-api-key': key })
  await stream.event(0)
  const openMs = performance.now() - opening
  await stream.until(() => stream.ended, 'the stream to end', endBoundMs(2000, openMs))
  t.pass('ended once the key expired')
})

t.test('keys are looked up again only after one changed: streams of unchanged keys cost Redis no key lookups', async (t) => {
  const own = await ownServer(t) // the count is the whole server's
  const f = await serve(t, { apiKeyCacheTtlMs: 1000, maxStreamsPerKey: 10 }, own.url)
  const admin = new Redis(own.url)
  t.teardown(() => { admin.disconnect() })
  const streams = await Promise.all(Array.from({ length: 5 }, async () => await f.open(`${STATS}/stream`)))
  await Promise.all(streams.map(async (s) => await s.event(0)))
  // Past the first checks: the first tick (within a second) reads the key-change counter for the
  // first time, so every tick up to API_KEY_CACHE_TTL_MS and a tick after that read checks each
  // stream's key, later on a slow machine. So: once those checks were seen, until two seconds (a
  // key cache's lifetime and a tick) pass without a script; twenty seconds at most.
  let before = await commandCalls(admin, 'evalsha')
  let checksSeen = false
  let quietSeconds = 0
  for (let seconds = 0; seconds < 20 && !(checksSeen && quietSeconds >= 2); seconds++) {
    await sleep(1000)
    const now = await commandCalls(admin, 'evalsha')
    checksSeen ||= now > before
    quietSeconds = now === before ? quietSeconds + 1 : 0
    before = now
  }
  await sleep(3000) // three ticks, three key-cache lifetimes
  t.equal(await commandCalls(admin, 'evalsha') - before, 0, 'no script (key lookup or read) while nothing changed')
})

t.test('at most MAX_STREAMS_PER_KEY open streams per key: past it 429, not counted; a closed one frees its place', async (t) => {
  const f = await serve(t, { maxStreamsPerKey: 2 })
  const a = await f.open(`${STATS}/stream`)
  const b = await f.open(`${BOARD}/stream`)
  t.equal(a.status, 200)
  t.equal(b.status, 200)
  const remaining = Number(b.headers['x-ratelimit-remaining'])
  const refused = await f.open(`${MEMBER}/stream`)
  t.equal(refused.status, 429, 'the third is refused')
  t.match(JSON.parse(refused.body), { code: 'rate_limited', message: /at most 2 live-update streams/ })
  t.equal(refused.headers['retry-after'], '5', 'with retry-after')
  t.equal(refused.headers['x-ratelimit-remaining'], String(remaining), 'not counted, with the quota headers')
  t.equal((await f.get(STATS)).status, 200, 'plain requests of the key are not capped')

  a.close()
  let reopened = await f.open(`${MEMBER}/stream`)
  for (const deadline = Date.now() + 5000; reopened.status !== 200 && Date.now() < deadline;) {
    await sleep(50)
    reopened = await f.open(`${MEMBER}/stream`)
  }
  t.equal(reopened.status, 200, 'a closed stream frees its place')
})

t.test('streams of one page share one read per change, whatever their number', async (t) => {
  const own = await ownServer(t) // MONITOR sees the whole server's commands
  const f = await serve(t, { maxStreamsPerKey: 100, metricsPort: 0 }, own.url)
  const metric = async (name: string): Promise<number> => {
    const address = f.app.metricsAddress()
    const text = await (await fetch(`http://127.0.0.1:${address?.port ?? 0}/metrics`)).text()
    return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1])
  }
  const streams = await Promise.all(Array.from({ length: 20 }, async () => await f.open(`${BOARD}/stream?limit=7`)))
  await Promise.all(streams.map(async (s) => await s.event(0)))
  t.equal(await metric('leaderboard_live_streams'), 20, 'metrics: 20 open streams')
  t.equal(await metric('leaderboard_live_watched_servers'), 1, 'metrics: one server watched')

  // The page's read script only (MONITOR): the watcher also checks every stream's key in its
  // first seconds, which a slow machine reaches the award within.
  let events: Array<{ data: string }> = []
  const reads = await scriptCalls(own.url, scriptSha('leaderboardPage'), async () => {
    await f.writer.awardXp({ guildId: GUILD, userId: '25', xp: 777 })
    events = await Promise.all(streams.map(async (s) => await s.event(1)))
  })
  t.equal(new Set(events.map((e) => e.data)).size, 1, 'every stream got the same body')
  t.equal(reads, 1, 'one read of the page for the change, not one per stream')
  t.ok(await metric('leaderboard_live_events_total') >= 40, 'metrics: events sent (the first and the change, to each)')
})

t.test('under load shedding a new stream is refused with 503, like any request', async (t) => {
  const f = await serve(t)
  const shedding = await buildTestApp(t, server.url, { redisPrefix: f.config.redisPrefix, maxHeapUsedPercent: 1 }) // always past it
  const base = await shedding.app.listen({ port: 0, host: '127.0.0.1' })
  let refused = await SseReader.open(t, base, `${STATS}/stream`, { 'x-api-key': f.key })
  for (const deadline = Date.now() + 5000; refused.status !== 503 && Date.now() < deadline;) {
    refused.close()
    await sleep(100) // the heap is sampled once a second
    refused = await SseReader.open(t, base, `${STATS}/stream`, { 'x-api-key': f.key })
  }
  t.equal(refused.status, 503, 'refused')
  t.equal(JSON.parse(refused.body).code, 'service_unavailable', "in the contract's shape")
  t.ok(refused.headers['retry-after'], 'with retry-after')
})

t.test('open streams are not requests in progress: more than MAX_IN_FLIGHT stay open and shed nothing', async (t) => {
  const f = await serve(t, { maxInFlight: 2, maxStreamsPerKey: 10 })
  const streams = await Promise.all(Array.from({ length: 4 }, async () => await f.open(`${STATS}/stream`)))
  t.same(streams.map((s) => s.status), [200, 200, 200, 200], 'more streams than MAX_IN_FLIGHT stay open')
  t.equal((await f.get(STATS)).status, 200, 'and do not shed plain requests')
})
