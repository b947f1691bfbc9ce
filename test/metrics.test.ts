// Prometheus metrics on METRICS_PORT: requests by route and status with latencies, refusals,
// authentication failures, Redis errors and command latency, process defaults; never on the
// API's port, and gone with the app.
import t from 'tap'
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import { packageInfo } from '../src/package-info.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const GUILD = '1300000000000000001'
const API = `/api/v1/servers/${GUILD}`

async function scrape (port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`)
  t.equal(response.status, 200)
  t.match(response.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
  return await response.text()
}

/** The sum of the sample lines of `name` whose labels include `labels`. */
function total (text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`)
  let sum = 0
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match?.[1] === name && wanted.every((pair) => (match[2] ?? '').split(',').includes(pair))) sum += Number(match[3])
  }
  return sum
}

/** The value of one sample line, `name{labels} value`, or undefined when absent. */
function sample (text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`)
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match?.[1] !== name) continue
    const present = (match[2] ?? '').split(',')
    if (wanted.every((pair) => present.includes(pair))) return Number(match[3])
  }
  return undefined
}

t.test('requests, refusals and auth failures are counted by route, status and code', async (t) => {
  const { app, apiKeys, writer } = await buildTestApp(t, server.url, { metricsPort: 0, planLimits: { free: 3, starter: 1000, professional: 1000 } })
  const port = app.metricsAddress()?.port
  if (port === undefined) throw new Error('no metrics listener')
  const { key } = await apiKeys.create({ guildId: GUILD, plan: 'free' })
  const other = await apiKeys.create({ guildId: '1300000000000000002', plan: 'starter' })
  await writer.awardXp({ guildId: GUILD, userId: '7', xp: 50 })

  const first = await app.inject({ url: `${API}/leaderboard`, headers: { 'x-api-key': key } })
  t.equal(first.statusCode, 200)
  const etag = String(first.headers.etag)
  t.equal((await app.inject({ url: `${API}/leaderboard`, headers: { 'x-api-key': key, 'if-none-match': etag } })).statusCode, 304)
  t.equal((await app.inject({ url: `${API}/stats` })).statusCode, 401)
  t.equal((await app.inject({ url: `${API}/stats`, headers: { 'x-api-key': 'lbk_0000000000000000_nope' } })).statusCode, 401)
  t.equal((await app.inject({ url: `${API}/stats`, headers: { 'x-api-key': other.key } })).statusCode, 403)
  for (let i = 0; i < 2; i++) t.equal((await app.inject({ url: `${API}/members/7`, headers: { 'x-api-key': key } })).statusCode, 200)
  t.equal((await app.inject({ url: `${API}/members/7`, headers: { 'x-api-key': key } })).statusCode, 429)
  t.equal((await app.inject({ url: '/nowhere' })).statusCode, 404)

  const text = await scrape(port)
  const count = (route: string, status: string) => sample(text, 'http_request_duration_seconds_count', { method: 'GET', route, status_code: status })
  t.equal(count('/api/v1/servers/:guild_id/leaderboard', '200'), 1)
  t.equal(count('/api/v1/servers/:guild_id/leaderboard', '304'), 1)
  t.equal(count('/api/v1/servers/:guild_id/stats', '401'), 2)
  t.equal(count('/api/v1/servers/:guild_id/stats', '403'), 1)
  t.equal(count('/api/v1/servers/:guild_id/members/:user_id', '200'), 2)
  t.equal(count('/api/v1/servers/:guild_id/members/:user_id', '429'), 1)
  t.equal(count('unknown', '404'), 1, 'an unknown route is one label, never the raw URL')
  t.notOk(text.includes('/nowhere'))
  t.ok(sample(text, 'http_request_duration_seconds_bucket', { route: '/api/v1/servers/:guild_id/leaderboard', status_code: '200', le: '+Inf' }) === 1)
  t.equal(sample(text, 'leaderboard_rate_limited_total', { plan: 'free' }), 1)
  t.equal(sample(text, 'leaderboard_auth_failures_total', { code: 'missing_api_key' }), 1)
  t.equal(sample(text, 'leaderboard_auth_failures_total', { code: 'invalid_api_key' }), 1)
  t.equal(sample(text, 'leaderboard_auth_failures_total', { code: 'forbidden' }), 1)
  t.ok((sample(text, 'leaderboard_redis_command_duration_seconds_count', { command: 'evalsha' }) ?? 0) > 0, 'scripts are timed')
  t.ok((sample(text, 'process_cpu_user_seconds_total', {}) ?? -1) >= 0, 'process defaults')
  t.ok(text.includes('nodejs_eventloop_lag_seconds'))

  t.equal((await app.inject({ url: '/metrics' })).statusCode, 404, 'never on the API port')
  const notThere = await fetch(`http://127.0.0.1:${port}/other`)
  t.equal(notThere.status, 404)
})

t.test('Redis errors are counted, from the connection and from requests answered 503', async (t) => {
  const own = await RedisServer.start()
  t.teardown(async () => { await own.close() })
  const { app, apiKeys } = await buildTestApp(t, own.url, { metricsPort: 0, apiKeyCacheTtlMs: 0 })
  const port = app.metricsAddress()?.port as number
  const { key } = await apiKeys.create({ guildId: GUILD, plan: 'free' })
  await own.stop()
  const down = await app.inject({ url: `${API}/stats`, headers: { 'x-api-key': key } })
  t.equal(down.statusCode, 503)
  // The client reports its failed reconnection attempts as they come.
  let text = await scrape(port)
  for (let i = 0; i < 50 && total(text, 'leaderboard_redis_errors_total', { source: 'connection' }) === 0; i++) {
    await sleep(100)
    text = await scrape(port)
  }
  t.ok(total(text, 'leaderboard_redis_errors_total', { source: 'request' }) >= 1, 'the 503 is counted')
  t.ok(total(text, 'leaderboard_redis_errors_total', { source: 'connection' }) >= 1, 'the lost connection is counted')
  t.equal(sample(text, 'http_request_duration_seconds_count', { route: '/api/v1/servers/:guild_id/stats', status_code: '503' }), 1)
})

t.test('no metrics listener unless METRICS_PORT is set, and none after close', async (t) => {
  const off = await buildTestApp(t, server.url)
  t.equal(off.app.metricsAddress(), null)
  t.equal(off.app.hasRequestDecorator('failure'), false, 'nothing is added to requests when off')

  const on = await buildTestApp(t, server.url, { metricsPort: 0 })
  const port = on.app.metricsAddress()?.port as number
  t.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 200)
  await on.app.close()
  const refused = await new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(false) })
    socket.once('error', () => { resolve(true) })
  })
  t.ok(refused, 'the metrics port is closed with the app')
})

t.test('every counter has its series from the start, at 0; build info, Redis up and the response cache are reported', async (t) => {
  const { app, apiKeys, writer } = await buildTestApp(t, server.url, { metricsPort: 0 })
  const port = app.metricsAddress()?.port as number
  let text = await scrape(port)
  t.equal(sample(text, 'leaderboard_rate_limited_total', { plan: 'professional' }), 0)
  t.equal(sample(text, 'leaderboard_rate_limited_total', { plan: 'address' }), 0)
  t.equal(sample(text, 'leaderboard_auth_failures_total', { code: 'invalid_api_key' }), 0)
  t.equal(sample(text, 'leaderboard_redis_errors_total', { source: 'request', reason: 'OOM' }), 0)
  t.equal(sample(text, 'leaderboard_redis_errors_total', { source: 'connection', reason: 'unreachable' }), 0)
  t.equal(sample(text, 'leaderboard_shed_total', { reason: 'in_flight' }), 0)
  t.equal(sample(text, 'leaderboard_shed_total', { reason: 'event_loop_delay' }), 0)
  t.equal(sample(text, 'leaderboard_build_info', { version: packageInfo.version, node_version: process.versions.node }), 1)
  t.equal(sample(text, 'leaderboard_redis_up', {}), 1)
  t.equal(sample(text, 'leaderboard_response_cache_requests_total', { result: 'hit' }), 0)
  t.equal(sample(text, 'leaderboard_response_cache_requests_total', { result: 'miss' }), 0)
  t.equal(sample(text, 'leaderboard_response_cache_bytes', {}), 0)

  const { key } = await apiKeys.create({ guildId: GUILD, plan: 'professional' })
  await writer.awardXp({ guildId: GUILD, userId: '7', xp: 50 })
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ url: `${API}/leaderboard`, headers: { 'x-api-key': key } })).statusCode, 200)
  await writer.awardXp({ guildId: GUILD, userId: '7', xp: 50 })
  t.equal((await app.inject({ url: `${API}/leaderboard`, headers: { 'x-api-key': key } })).statusCode, 200)
  text = await scrape(port)
  t.equal(sample(text, 'leaderboard_response_cache_requests_total', { result: 'miss' }), 2, 'the first read and the one after a write went to Redis')
  t.equal(sample(text, 'leaderboard_response_cache_requests_total', { result: 'hit' }), 2, 'the two repeats were answered from the cache')
  t.ok((sample(text, 'leaderboard_response_cache_bytes', {}) ?? 0) > 0, 'the cache holds the body')
})

t.test('Redis up falls to 0 while Redis cannot serve, and load shedding is counted by reason', async (t) => {
  const own = await RedisServer.start()
  t.teardown(async () => { await own.close() })
  const { app, apiKeys } = await buildTestApp(t, own.url, { metricsPort: 0, maxInFlight: 1 })
  const port = app.metricsAddress()?.port as number
  const { key } = await apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const statuses = await Promise.all(Array.from({ length: 6 }, async () =>
    (await app.inject({ url: `${API}/stats`, headers: { 'x-api-key': key } })).statusCode))
  const shedCount = statuses.filter((status) => status === 503).length
  t.ok(shedCount > 0, `some of 6 concurrent requests were shed past MAX_IN_FLIGHT=1: ${statuses.join(' ')}`)
  let text = await scrape(port)
  t.equal(sample(text, 'leaderboard_shed_total', { reason: 'in_flight' }), shedCount)
  t.equal(sample(text, 'leaderboard_redis_up', {}), 1)

  await own.stop()
  t.equal((await app.inject({ url: `${API}/stats`, headers: { 'x-api-key': key } })).statusCode, 503)
  for (let i = 0; i < 50 && sample(text, 'leaderboard_redis_up', {}) !== 0; i++) {
    await sleep(100)
    text = await scrape(port)
  }
  t.equal(sample(text, 'leaderboard_redis_up', {}), 0, 'down while Redis is')
})
