// Live updates over server-sent events: opening a stream (its first event at once, or none when
// Last-Event-ID names the current body), the cap of open streams per key on this instance, the
// quota (one request to open, one more each minute open), a revoked or expired key's streams
// ending, the drain, the metrics, and each stream's log line when it ends. What is
// sent and when is the watcher's (src/live/live-watcher.ts); the routes are
// declared with the reads they stream (src/routes/api/reads.ts). The cap is checked after
// authentication and before the request is counted (the stream routes' hooks, src/pipeline/access.ts).
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { Counter, Gauge } from 'prom-client'
import { LiveWatcher, type StreamEndReason, TICK_MS, type TopicSpec } from '../live/live-watcher.js'
import { SseStream, STREAM_HEADERS } from '../live/sse-stream.js'
import { ServerEventFeed } from '../live/server-events.js'
import { releaseParser } from '../live/stream-connection.js'
import { RateLimitedError } from '../errors.js'
import { keyCoversServer } from './auth.js'
import { matchingTag } from '../http/etag.js'
import { redisUnavailability } from '../redis/errors.js'
import { slugOf } from './public-admission.js'
import { loggableUrl } from '../logger.js'

declare module 'fastify' {
  interface FastifyInstance {
    live: {
      /** Answers the request with a stream of `spec`'s events (or throws the endpoint's error). */
      open: (request: FastifyRequest, reply: FastifyReply, spec: TopicSpec) => Promise<FastifyReply>
      /** onRequest hook of a stream route (attached by src/pipeline/access.ts): reserves one of its key's open streams, or 429. */
      reserve: onRequestHookHandler
    }
  }
}

/**
 * A stream counts against its key's quota once more each minute it stays open: a sixtieth of the
 * rate-limit window, which is a minute of the default hour (a shorter window, for tests, keeps the proportion).
 */
export function chargeEveryMs (rateLimitWindowMs: number): number {
  return Math.max(1000, Math.round(rateLimitWindowMs / 60))
}
/** What a key past its cap of open streams is told to wait: streams close at their clients' pace. */
const STREAM_CAP_RETRY_AFTER_SECONDS = 5

export default fp(async function livePlugin (fastify: FastifyInstance) {
  const { config, leaderboard, redisClock, lifecycle } = fastify
  const eventsSent = fastify.metricsRegistry === null
    ? undefined
    : new Counter({ name: 'leaderboard_live_events_total', help: 'Events written to live-update streams (one per stream shown a change)', registers: [fastify.metricsRegistry] })
  const watcher = new LiveWatcher({
    versionOf: async (guildId) => await leaderboard.version(guildId),
    keyChanges: async () => await fastify.redisClient.get(fastify.keys.apiKeyChanges()),
    keyRecheckMs: config.apiKeyCacheTtlMs + TICK_MS,
    onKeysChanged: () => { fastify.forgetApiKeys() },
    clock: redisClock,
    commandTimeoutMs: config.redisCommandTimeoutMs,
    keepAliveMs: config.streamKeepAliveMs,
    chargeEveryMs: chargeEveryMs(config.rateLimitWindowMs),
    events: new ServerEventFeed(fastify.redisClient, fastify.keys, redisClock),
    onEventsSent: (count) => { eventsSent?.inc(count) },
    onError: (err, spec) => {
      // Redis down or slow is the outage log's to report; the next tick tries again.
      if (redisUnavailability(err, fastify.redisClient) === null) fastify.log.error({ err, topic: spec?.id }, 'live update failed')
    }
  })
  if (fastify.metricsRegistry !== null) {
    const registers = [fastify.metricsRegistry]
    /* eslint-disable no-new -- registered with the registry, read through collect() */
    new Gauge({ name: 'leaderboard_live_streams', help: 'Live-update streams open on this instance', registers, collect () { this.set(watcher.openStreams) } })
    new Gauge({ name: 'leaderboard_live_watched_servers', help: 'Servers whose data version this instance watches for its open streams', registers, collect () { this.set(watcher.watchedServers) } })
    /* eslint-enable no-new */
  }

  // Open streams per key on this instance, reserved before the request is counted.
  const openByKey = new Map<string, number>()
  const release = (keyId: string): void => {
    const open = (openByKey.get(keyId) ?? 1) - 1
    if (open <= 0) openByKey.delete(keyId)
    else openByKey.set(keyId, open)
  }
  const reserveStream: onRequestHookHandler = (request, reply, done) => {
    const key = request.apiKey
    if (key === null) { done(); return }
    const open = openByKey.get(key.id) ?? 0
    if (open < config.maxStreamsPerKey) {
      openByKey.set(key.id, open + 1)
      reply.raw.once('close', () => { release(key.id) })
      done()
      return
    }
    const refusal = new RateLimitedError(`at most ${config.maxStreamsPerKey} live-update streams may be open per API key on this instance; ` +
      `close one, or retry in ${STREAM_CAP_RETRY_AFTER_SECONDS} s`, STREAM_CAP_RETRY_AFTER_SECONDS)
    // Not counted; the key's quota headers all the same, as on any authenticated answer.
    fastify.quota(request, false, reply).then(() => { done(refusal) }, done)
  }

  /** Why connections kept their parser, each logged once (a Node whose internals differ: every stream). */
  const parserKeptLogged = new Set<string>()

  lifecycle.onDrain(() => { watcher.endAll() })
  fastify.addHook('preClose', async () => { watcher.stop() })

  async function open (request: FastifyRequest, reply: FastifyReply, spec: TopicSpec): Promise<FastifyReply> {
    const event = await watcher.current(spec, request.dataVersion)
    const lastEventId = request.headers['last-event-id']
    const held = typeof lastEventId === 'string' && matchingTag(quoted(lastEventId), event.etag.slice(1, -1)) !== null

    reply.hijack()
    const response = reply.raw
    // The connection timeout would cut a stream that is quiet between keep-alives.
    response.socket?.setTimeout(0)
    response.writeHead(200, { ...reply.getHeaders(), ...STREAM_HEADERS } as Record<string, string>)
    response.flushHeaders()
    const parserKept = releaseParser(request.raw)
    if (parserKept !== undefined && !parserKeptLogged.has(parserKept)) {
      parserKeptLogged.add(parserKept)
      fastify.log.warn({ reason: parserKept }, "streams' connections keep Node's HTTP parser (some 10 KB each)")
    }
    const now = Date.now()
    const stream = new SseStream(response, held ? event.etag : '', now, chargeEveryMs(config.rateLimitWindowMs))
    const first = !held && stream.offer(event, now) ? 1 : 0
    if (first === 1) eventsSent?.inc()
    // A stream's one log line, at its end (the request line is not written for a hijacked reply).
    const ended = (reason: StreamEndReason, events: number): void => {
      fastify.log.info({
        reqId: request.id,
        url: loggableUrl(request.url),
        route: request.routeOptions.url,
        ms: Date.now() - now,
        ip: request.ip,
        guild: spec.guildId,
        keyId: request.apiKey?.id,
        events: first + events,
        reason
      }, 'stream closed')
    }
    if (lifecycle.draining) { // this instance is going away: the client reconnects elsewhere
      stream.end()
      ended('draining', 0)
      return reply
    }
    const publicBoard = request.routeOptions.config.access?.kind === 'public'
    watcher.subscribe(spec, stream, publicBoard
      ? {
          ended,
          // A public board's stream counts against its client address, and ends when the slug no
          // longer names the board's server (made private, or moved).
          charge: async () => (await fastify.publicBoards.count(request)).success,
          expiresAt: null,
          allowed: async () => await fastify.publicBoards.resolve(slugOf(request)) === spec.guildId
        }
      : {
          ended,
          charge: async () => (await fastify.quota(request, true)).admitted,
          // The key again (from this instance's key cache, looked up every API_KEY_CACHE_TTL_MS),
          // after a key changed: a key revoked, rotated or moved off the server loses its streams.
          // The service's own check, not the client's login: a refusal counts nothing against its
          // address. Redis away rejects, and the stream goes on.
          expiresAt: request.apiKey?.expiresAtLocal ?? null,
          allowed: async () => {
            const key = await fastify.apiKeyNow(request)
            return key !== null && keyCoversServer(key, spec.guildId)
          }
        })
    response.once('close', () => { watcher.unsubscribe(stream) })
    return reply
  }

  fastify.decorate('live', { open, reserve: reserveStream })
}, { name: 'live', dependencies: ['config', 'leaderboard-reader', 'lifecycle', 'metrics', 'admission', 'public-admission'] })

/** A Last-Event-ID as an entity tag: as sent (quoted, the `id:` we wrote), or bare. */
function quoted (id: string): string {
  const value = id.trim()
  return value.startsWith('"') || value.startsWith('W/') ? value : `"${value}"`
}
