// The ceiling `npm run bench` measures the service against: a bare Fastify route per endpoint
// that serves the very bytes the service answered (same status, body and content headers), with
// no authentication, rate limit or Redis. A request carrying If-None-Match gets the same 304.
//
// With a Redis URL, the "floor": the same route, after the Redis exchange the service makes for
// a read it serves from its cache (the limiter's script, counting or, for a revalidation, only
// reading, and the GET of the server's data version, together in one round trip), through the
// service's own client, limiter and version read (each batching one event-loop turn's requests,
// the limiter per API key presented), and with every header line the service sends (request id,
// rate-limit, security and caching headers, as in one of its answers). What the service costs
// beyond it is its own code; what the floor costs beyond the bare route, the contract's. With
// `headers` instead of a Redis URL, the bare route with the service's header lines: what those
// lines alone cost.
//
//   node --import tsx scripts/bench-bare-server.ts <fixtures.json> <port> [headers | <redis url> <guild id>]
import Fastify from 'fastify'
import { readFileSync } from 'node:fs'
import { createRedis } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { SlidingWindow } from '../src/rate-limit/sliding-window.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'

export interface BareFixture {
  /** Path and query, as requested. */
  path: string
  /** The request headers that select this answer (if-none-match, accept-encoding). */
  requestHeaders: Record<string, string>
  status: number
  /** Content headers of the service's answer (content-type, content-encoding, etag, vary...). */
  headers: Record<string, string>
  /** Every header of that answer but the connection's own (date, connection, keep-alive, length): the floor's. */
  allHeaders: Record<string, string>
  /** The body, base64. */
  body: string
}

const [fixturesFile, port, redisUrl, guildId] = process.argv.slice(2)
if (fixturesFile === undefined || port === undefined) throw new Error('usage: bench-bare-server.ts <fixtures.json> <port> [headers | <redis url> <guild id>]')
/** Whether answers carry every header line the service sends (the floor's, and the `headers` server's). */
const allHeaders = redisUrl !== undefined
const fixtures = JSON.parse(readFileSync(fixturesFile, 'utf8')) as BareFixture[]

/** What tells fixtures of one path apart: a conditional request and the accepted encodings. */
function fixtureKey (path: string, headers: Record<string, string | string[] | undefined>): string {
  return `${path} ${headers['if-none-match'] === undefined ? '' : 'conditional'} ${String(headers['accept-encoding'] ?? '')}`
}

const byKey = new Map(fixtures.map((f) => [fixtureKey(f.path, f.requestHeaders), { ...f, bytes: Buffer.from(f.body, 'base64') }]))
const fastify = Fastify({ logger: false })
fastify.get('/ready', async () => 'ready')

/** The floor's Redis exchange for one request, or nothing for the bare route. */
let exchange: ((apiKey: string, revalidation: boolean) => Promise<unknown>) | undefined
if (redisUrl !== undefined && redisUrl !== 'headers' && guildId !== undefined) {
  const redis = createRedis({ url: redisUrl })
  const keys = new KeyBuilder()
  const window = new SlidingWindow(redis)
  const reader = new LeaderboardReader(redis, keys)
  fastify.addHook('onClose', () => { redis.disconnect() })
  exchange = async (apiKey, revalidation) => {
    // A limiter key per API key presented, as the service counts (its own prefix: no shared count).
    const limiterKey = keys.keyRateLimit(`bench-floor-${apiKey}`)
    return await Promise.all([
      revalidation ? window.peek(limiterKey, 1e9, 3_600_000) : window.hit(limiterKey, 1e9, 3_600_000),
      reader.version(guildId)
    ])
  }
}

fastify.get('/*', (request, reply) => {
  const fixture = byKey.get(fixtureKey(request.url, request.headers))
  if (fixture === undefined) return reply.code(404).send()
  const send = (): void => {
    reply.code(fixture.status).headers(allHeaders ? fixture.allHeaders : fixture.headers)
    reply.send(fixture.status === 304 ? undefined : fixture.bytes)
  }
  if (exchange === undefined) return send()
  exchange(String(request.headers['x-api-key']), fixture.status === 304).then(send, (err: Error) => { reply.send(err) })
  return reply
})
await fastify.listen({ host: '127.0.0.1', port: Number(port) })
