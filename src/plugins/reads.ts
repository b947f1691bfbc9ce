// Serving a read: from this instance's response cache while the server's data version (read
// by the admission hook) is the one the body was read at, else from Redis through the reader.
// Every 200 carries a strong ETag and Cache-Control; a body of 1 KiB or more is compressed when
// the client accepts it; an If-None-Match that holds the current tag gets a 304.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Versioned } from '../reader/leaderboard-reader.js'
import { ResponseCache } from '../http/response-cache.js'
import { chooseEncoding } from '../http/encoding.js'
import { bodyDependsOnDay, cacheHeaders, etagHeader, matchingTag, sendNotModified } from '../http/etag.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Answers with the body that `read` returns (serialized by the route's 200 schema), or with
     * the cached one for `cacheKey` when it is current. `read` may throw (a 404, say).
     */
    serveRead: <T>(request: FastifyRequest, reply: FastifyReply, cacheKey: string, read: () => Promise<Versioned<T>>) => Promise<FastifyReply>
  }
}

export default fp(async function readsPlugin (fastify: FastifyInstance) {
  const cache = new ResponseCache(fastify.config.responseCacheMb * 1024 * 1024)
  const { redisClock } = fastify

  fastify.decorate('serveRead', async function serveRead<T> (request: FastifyRequest, reply: FastifyReply, cacheKey: string, read: () => Promise<Versioned<T>>) {
    const perDay = bodyDependsOnDay(request)
    let entry = cache.get(cacheKey, request.dataVersion, perDay ? redisClock.now() : undefined)
    if (entry === undefined) {
      const result = await read()
      entry = cache.put(cacheKey, result.version, perDay ? result.nowMs ?? redisClock.now() : undefined, reply.serialize(result.value) as string)
    }
    const encoding = chooseEncoding(request.headers['accept-encoding'], entry.identity.length)
    const tag = matchingTag(request.headers['if-none-match'], entry.tag)
    if (tag !== null) return await sendNotModified(reply, tag)
    cacheHeaders(reply).header('etag', etagHeader(entry.tag, encoding)).type('application/json; charset=utf-8')
    if (encoding !== 'identity') reply.header('content-encoding', encoding)
    return await reply.send(cache.body(cacheKey, entry, encoding))
  })
}, { name: 'reads', dependencies: ['config', 'redis'] })
