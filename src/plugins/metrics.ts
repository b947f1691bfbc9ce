// Prometheus metrics, served on METRICS_PORT (a listener of its own, never the API's port) when
// it is set; nothing is registered per request when it is not. One callback hook per response
// (plus one per error, and a timer per Redis command), so the hot path pays little.
import fp from 'fastify-plugin'
import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { LeaderboardError } from '../errors.js'
import { NOT_NOW_REPLIES, redisUnavailability } from '../redis/errors.js'
import { PLANS } from '../plans.js'
import { packageInfo } from '../package-info.js'
import { OverloadedError, SHED_REASONS } from '../pipeline/shedding.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The metrics listener's address, when METRICS_PORT is set (port 0 picks a free one). */
    metricsAddress: () => { host: string, port: number } | null
    /** The registry served at /metrics, for plugins that add their own metrics; null when METRICS_PORT is unset. */
    metricsRegistry: Registry | null
  }
  interface FastifyRequest {
    /** What a failed request's error was, for the metrics (set by the onError hook). */
    failure: { code: string | null, redisReason: string | null, shedReason: string | null } | null
  }
}

const AUTH_FAILURE_CODES = new Set(['missing_api_key', 'invalid_api_key', 'forbidden'])
/** Every reason a Redis failure is counted under, so each series exists (at 0) from the start. */
const REDIS_REASONS = ['unreachable', 'timeout', ...Object.keys(NOT_NOW_REPLIES)]

type RequestDurations = Histogram<'method' | 'route' | 'status_code'>
const REQUEST_DURATIONS = 'http_request_duration_seconds'

/** The registry's request histogram, made the first time: the API's and the write API's requests share it. */
function requestDurations (registry: Registry): RequestDurations {
  const made = registry.getSingleMetric(REQUEST_DURATIONS)
  if (made !== undefined) return made as RequestDurations
  return new Histogram({
    name: REQUEST_DURATIONS,
    help: 'Requests by method, route pattern and status, and their latency (its _count is the request count)',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry]
  })
}

function observeRequest (histogram: RequestDurations, request: FastifyRequest, reply: FastifyReply): void {
  histogram.observe({ method: request.method, route: request.routeOptions.url ?? 'unknown', status_code: reply.statusCode }, reply.elapsedTime / 1000)
}

/**
 * For a listener without a metrics listener of its own (the write API): its requests go into
 * `http_request_duration_seconds` of the registry `registry()` returns (the API's, served on
 * METRICS_PORT), once there is one; none when METRICS_PORT is unset.
 */
export const requestMetricsPlugin = fp(async function requestMetricsPlugin (fastify: FastifyInstance, opts: { registry: () => Registry | null }) {
  let histogram: RequestDurations | undefined
  fastify.addHook('onResponse', (request, reply, done) => {
    if (histogram === undefined) {
      // (undefined too: a getter read before the API's app decorated its registry)
      const registry: Registry | null | undefined = opts.registry()
      if (registry !== null && registry !== undefined) histogram = requestDurations(registry)
    }
    if (histogram !== undefined) observeRequest(histogram, request, reply)
    done()
  })
}, { name: 'request-metrics' })

interface SendCommand { sendCommand: (command: { name: string, promise: Promise<unknown> }, ...rest: unknown[]) => unknown }

export default fp(async function metricsPlugin (fastify: FastifyInstance) {
  const { metricsPort, host } = fastify.config
  let server: Server | null = null
  fastify.decorate('metricsAddress', () => {
    const address = server?.address()
    return typeof address === 'object' && address !== null ? { host, port: address.port } : null
  })
  if (metricsPort === undefined) {
    fastify.decorate('metricsRegistry', null)
    return
  }

  const registry = new Registry()
  fastify.decorate('metricsRegistry', registry)
  collectDefaultMetrics({ register: registry })
  const registers = [registry]
  const requests = requestDurations(registry)
  const rateLimited = new Counter({
    name: 'leaderboard_rate_limited_total',
    help: 'Requests refused with 429 rate_limited, by the key\'s plan ("address" for a failed-authentication lockout)',
    labelNames: ['plan'] as const,
    registers
  })
  const authFailures = new Counter({
    name: 'leaderboard_auth_failures_total',
    help: 'Requests refused by authentication, by code (missing_api_key, invalid_api_key, forbidden)',
    labelNames: ['code'] as const,
    registers
  })
  const redisErrors = new Counter({
    name: 'leaderboard_redis_errors_total',
    help: 'Redis failures: "connection" for the client\'s error events, "request" for requests answered 503 because of Redis',
    labelNames: ['source', 'reason'] as const,
    registers
  })
  const redisLatency = new Histogram({
    name: 'leaderboard_redis_command_duration_seconds',
    help: 'Redis commands from sending to their answer (evalsha: a script), by command',
    labelNames: ['command'] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
    registers
  })

  const shed = new Counter({
    name: 'leaderboard_shed_total',
    help: 'Requests refused with 503 by load shedding, by the signal past its threshold (in_flight, event_loop_delay, heap)',
    labelNames: ['reason'] as const,
    registers
  })
  const { responseCache, responseCacheStats, redisHealth } = fastify
  new Counter({ // eslint-disable-line no-new
    name: 'leaderboard_response_cache_requests_total',
    help: 'Reads answered from the response cache (hit) or from Redis (miss)',
    labelNames: ['result'] as const,
    registers,
    collect () {
      this.reset()
      this.inc({ result: 'hit' }, responseCacheStats.hits)
      this.inc({ result: 'miss' }, responseCacheStats.misses)
    }
  })
  new Gauge({ // eslint-disable-line no-new
    name: 'leaderboard_response_cache_bytes',
    help: 'Bytes the response cache holds now (RESPONSE_CACHE_MB bounds it)',
    registers,
    collect () { this.set(responseCache.size) }
  })
  const redis = fastify.redisClient
  new Gauge({ // eslint-disable-line no-new
    name: 'leaderboard_redis_up',
    help: '1 while Redis serves this instance (connected, no outage), else 0: /readyz is 503 while it is 0',
    registers,
    collect () { this.set(redisHealth.outage === null && redis.status === 'ready' ? 1 : 0) }
  })
  new Gauge({
    name: 'leaderboard_build_info',
    help: 'Always 1; the labels name the running release and Node version',
    labelNames: ['version', 'node_version'] as const,
    registers
  }).set({ version: packageInfo.version, node_version: process.versions.node }, 1)

  // Every series of the counters exists from the start, at 0, so a panel shows 0, not "no data".
  for (const plan of [...PLANS, 'address']) rateLimited.inc({ plan }, 0)
  for (const code of AUTH_FAILURE_CODES) authFailures.inc({ code }, 0)
  for (const source of ['connection', 'request']) for (const reason of REDIS_REASONS) redisErrors.inc({ source, reason }, 0)
  for (const reason of SHED_REASONS) shed.inc({ reason }, 0)

  redis.on('error', (err: Error) => {
    redisErrors.inc({ source: 'connection', reason: redisUnavailability(err)?.reason ?? 'unreachable' })
  })
  // Every command, auto-pipelined or not, goes through sendCommand.
  const client = redis as unknown as SendCommand
  const send = client.sendCommand.bind(client)
  client.sendCommand = (command, ...rest) => {
    const end = redisLatency.startTimer({ command: command.name })
    command.promise.then(() => end(), () => end())
    return send(command, ...rest)
  }

  fastify.decorateRequest('failure', null)
  fastify.addHook('onError', (request: FastifyRequest, _reply, error: FastifyError, done) => {
    const unavailable = redisUnavailability(error, fastify.redisClient)
    request.failure = {
      code: error instanceof LeaderboardError ? error.code : null,
      redisReason: unavailable?.reason ?? null,
      shedReason: error instanceof OverloadedError ? error.reason : null
    }
    done()
  })
  fastify.addHook('onResponse', (request, reply, done) => {
    observeRequest(requests, request, reply)
    const failure = request.failure
    if (failure !== null) {
      if (failure.code === 'rate_limited') rateLimited.inc({ plan: request.apiKey?.plan ?? 'address' })
      else if (failure.code !== null && AUTH_FAILURE_CODES.has(failure.code)) authFailures.inc({ code: failure.code })
      if (failure.redisReason !== null) redisErrors.inc({ source: 'request', reason: failure.redisReason })
      if (failure.shedReason !== null) shed.inc({ reason: failure.shedReason })
    }
    done()
  })

  server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: scrape GET /metrics\n')
      return
    }
    registry.metrics().then((body) => {
      res.writeHead(200, { 'content-type': registry.contentType }).end(body)
    }, (err: Error) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${err.message}\n`)
    })
  })
  server.listen(metricsPort, host)
  try {
    await once(server, 'listening')
  } catch (err) {
    throw new Error(`cannot listen on ${host}:${metricsPort} for metrics (METRICS_PORT): ${(err as Error).message}`)
  }
  fastify.log.info({ port: fastify.metricsAddress()?.port }, 'metrics served at /metrics')
  fastify.addHook('onClose', async () => {
    server?.closeAllConnections()
    await new Promise((resolve) => server?.close(resolve))
  })
}, { name: 'metrics', dependencies: ['config', 'redis', 'auth', 'response-cache'] })
