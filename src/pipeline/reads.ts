// Serving a read: from this instance's response cache while the server's data version (read
// by the admission hook) is the one the body was read at, else from Redis through the reader
// (requests that miss together share one read: see readShared). Every 200 carries a strong
// ETag and Cache-Control; a body of 1 KiB or more is compressed when the client accepts it; an
// If-None-Match that holds the current tag gets a 304. The cache key is derived from the route
// and its validated parameters (readCacheKey), never written by a route.
//
// A URL once served through its route is known: what validation made of its path and query
// (a function of the URL alone) is kept by the URL's text, and the next request for it is
// admitted and answered before validation (answerKnownUrl) with those values, through every
// check a request of that route gets: its key's authentication before, then admission (the
// count and its headers, the server scope, the 304, the data version) and the cached body only
// at the current version. A URL that validation refuses never becomes known.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, preValidationAsyncHookHandler } from 'fastify'
import { LRUCache } from 'lru-cache'
import type { Versioned } from '../reader/leaderboard-reader.js'
import { utcDay } from '../periods/periods.js'
import { type CachedBody, ResponseCache } from '../http/response-cache.js'
import { chooseEncoding } from '../http/encoding.js'
import { cacheHeaders, etagHeader, matchingTag, sendNotModified } from '../http/etag.js'
import { bodyDependsOnDay } from './access.js'
import { withDeadline } from '../redis/deadline.js'

/** What the response cache has answered since the start. */
export interface ResponseCacheStats {
  /** Reads answered from the cache. */
  hits: number
  /** Reads that went to Redis (or joined a read of the same data in progress). */
  misses: number
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The instance's response cache (one for the whole instance: the metrics read it too). */
    responseCache: ResponseCache
    responseCacheStats: ResponseCacheStats
    /**
     * Answers with the body that `read` returns (serialized by the route's 200 schema), or with
     * the cached one for the request's route and validated parameters when it is current. `read`
     * may throw (a 404, say).
     */
    serveRead: <T>(request: FastifyRequest, reply: FastifyReply, read: () => Promise<Versioned<T>>) => Promise<FastifyReply>
    /** serveRead for a body that is text already (a public board's page, a rank card), sent as `type`. */
    serveRendered: (request: FastifyRequest, reply: FastifyReply, type: string, render: () => Promise<Versioned<string>>) => Promise<FastifyReply>
    /**
     * preValidation hook of a read with key access, first of its hooks: a URL served before is
     * admitted and, when its cached body is current, answered here (see the top of this file).
     */
    answerKnownUrl: preValidationAsyncHookHandler
    /** The URLs known to be valid, by their text (one store for the instance, as the cache). */
    knownUrls: LRUCache<string, KnownUrl>
  }
  interface FastifyRequest {
    /** Went through answerKnownUrl unknown: served through its route, its URL becomes known. */
    learnsUrl: boolean
  }
}

/** What validation made of a URL served through its route, and its cached body's key. */
export interface KnownUrl {
  params: Record<string, unknown>
  query: Record<string, unknown>
  cacheKey: string
  perDay: boolean
}

/**
 * Bytes of known URLs kept, counting each URL twice (its text, and its query's values, at most
 * as long), its cache key and KNOWN_URL_OVERHEAD for the objects around them; past this the least
 * recently used are forgotten (a forgotten URL is validated again, and known again once served).
 */
export const KNOWN_URLS_MAX_BYTES = 4 * 1024 * 1024
export const KNOWN_URL_OVERHEAD = 400

function knownUrlSize (known: KnownUrl, url: string): number {
  return KNOWN_URL_OVERHEAD + 2 * url.length + known.cacheKey.length
}

/**
 * The cache key of a read: its route and every validated parameter of its path and query (with
 * the defaults validation filled in), in a fixed order. Derived, never written by a route, so no
 * parameter a body depends on can be left out of it.
 */
export function readCacheKey (request: FastifyRequest): string {
  const key = cacheKeyOf(request.routeOptions.url ?? '', request.params, request.query)
  // A public board's slug names a server only for a while (it may move to another).
  return request.publicServer === undefined ? key : `${key} @${request.publicServer}`
}

/** The cache key of the read at route `url` with these validated parameters. */
export function cacheKeyOf (url: string, params: unknown, query: unknown): string {
  return `${url} ${canonical(params)}?${canonical(query)}`
}

function canonical (values: unknown): string {
  if (values === null || typeof values !== 'object') return ''
  const record = values as Record<string, unknown>
  return Object.keys(record).sort().map((name) => `${name}=${String(record[name])}`).join('&')
}

/** The response cache and its counts, on the root instance. */
export const responseCachePlugin = fp(async function responseCachePlugin (fastify: FastifyInstance) {
  fastify.decorate('responseCache', new ResponseCache(fastify.config.responseCacheMb * 1024 * 1024))
  fastify.decorate('responseCacheStats', { hits: 0, misses: 0 })
  fastify.decorate('knownUrls', new LRUCache<string, KnownUrl>({ maxSize: KNOWN_URLS_MAX_BYTES, sizeCalculation: knownUrlSize }))
}, { name: 'response-cache', dependencies: ['config'] })

export default fp(async function readsPlugin (fastify: FastifyInstance) {
  const cache = fastify.responseCache
  const stats = fastify.responseCacheStats
  const remember = fastify.config.responseCacheMb > 0 // with the cache off there is nothing to answer from
  const { knownUrls } = fastify
  const { redisClock } = fastify
  const commandTimeoutMs = fastify.config.redisCommandTimeoutMs

  function cached (cacheKey: string, version: string | undefined, perDay: boolean): CachedBody | undefined {
    return cache.get(cacheKey, version, perDay ? redisClock.now() : undefined)
  }

  function send (request: FastifyRequest, reply: FastifyReply, cacheKey: string, entry: CachedBody, type = 'application/json; charset=utf-8'): FastifyReply {
    const encoding = chooseEncoding(request.headers['accept-encoding'], entry.identity.length)
    const tag = matchingTag(request.headers['if-none-match'], entry.tag)
    if (tag !== null) return sendNotModified(reply, tag)
    cacheHeaders(reply).header('etag', etagHeader(entry.tag, encoding)).type(type)
    if (encoding !== 'identity') reply.header('content-encoding', encoding)
    return reply.send(cache.body(cacheKey, entry, encoding))
  }

  /** Reads in progress, by data version, day (for a body that depends on it) and cache key. */
  const reading = new Map<string, Promise<CachedBody>>()

  /**
   * The body for `cacheKey` read from Redis, or the one a request with the same data version is
   * already reading: that read was sent after its own request read the version, so it holds
   * every write that version holds, and so every write made before this request arrived (its
   * version read came after it did). After a write, an instance's requests for one URL cost one
   * read script, not one each. Not with the cache off, where every read goes to Redis.
   */
  async function readShared<T> (cacheKey: string, version: string | undefined, perDay: boolean, read: () => Promise<Versioned<T>>,
    serialize: (value: T) => string): Promise<CachedBody> {
    const fresh = async (): Promise<CachedBody> => {
      const result = await withDeadline(read(), commandTimeoutMs)
      return cache.put(cacheKey, result.version, perDay ? result.nowMs ?? redisClock.now() : undefined, serialize(result.value))
    }
    if (!remember || version === undefined) return await fresh()
    const id = `${version} ${perDay ? utcDay(redisClock.now()) : ''} ${cacheKey}`
    let pending = reading.get(id)
    if (pending === undefined) {
      pending = fresh()
      reading.set(id, pending)
      const done = (): void => { reading.delete(id) }
      pending.then(done, done)
    }
    return await pending
  }

  async function serve<T> (request: FastifyRequest, reply: FastifyReply, read: () => Promise<Versioned<T>>, serialize: (value: T) => string, type?: string): Promise<FastifyReply> {
    const cacheKey = readCacheKey(request)
    const perDay = bodyDependsOnDay(request)
    if (request.learnsUrl && request.validationError === undefined && request.refusal === null) {
      knownUrls.set(request.url, { params: { ...request.params as object }, query: { ...request.query as object }, cacheKey, perDay })
    }
    let entry = cached(cacheKey, request.dataVersion, perDay)
    if (entry !== undefined) {
      stats.hits++
    } else {
      stats.misses++
      entry = await readShared(cacheKey, request.dataVersion, perDay, read, serialize)
    }
    return await send(request, reply, cacheKey, entry, type)
  }

  fastify.decorate('serveRead', async function serveRead<T> (request: FastifyRequest, reply: FastifyReply, read: () => Promise<Versioned<T>>) {
    return await serve(request, reply, read, (value) => reply.serialize(value) as string)
  })

  fastify.decorateRequest('learnsUrl', false)

  // The router sends one URL to one route (or its HEAD twin, with the same schemas and hooks), so
  // the URL alone names what validation made of it; the headers are checked as the route would.
  fastify.decorate('answerKnownUrl', async function answerKnownUrl (request: FastifyRequest, reply: FastifyReply) {
    if (!remember) return
    const known = knownUrls.get(request.url)
    const headersValid = request.getValidationFunction('headers')
    if (known === undefined || (headersValid !== undefined && !(headersValid(request.headers) as boolean))) {
      request.learnsUrl = true
      return
    }
    const { params, query } = request
    request.params = { ...known.params }
    request.query = { ...known.query }
    await fastify.admit(request, reply)
    if (reply.sent) return reply // the 304
    const entry = cached(known.cacheKey, request.dataVersion, known.perDay)
    if (entry === undefined) {
      // Read through the route, admitted already: validated as it came, then the handler.
      request.params = params
      request.query = query
      return
    }
    stats.hits++
    return send(request, reply, known.cacheKey, entry)
  })

  fastify.decorate('serveRendered', async function serveRendered (request: FastifyRequest, reply: FastifyReply, type: string, render: () => Promise<Versioned<string>>) {
    return await serve(request, reply, render, (text) => text, type)
  })
}, { name: 'reads', dependencies: ['config', 'redis', 'response-cache', 'admission'] })
