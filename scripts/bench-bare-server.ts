// The ceiling `npm run bench` measures the service against: a bare Fastify route per endpoint
// that serves the very bytes the service answered (same status, body and content headers), with
// no authentication, rate limit or Redis. A request carrying If-None-Match gets the same 304.
//
//   node --import tsx scripts/bench-bare-server.ts <fixtures.json> <port>
import Fastify from 'fastify'
import { readFileSync } from 'node:fs'

export interface BareFixture {
  /** Path and query, as requested. */
  path: string
  /** The request headers that select this answer (if-none-match, accept-encoding). */
  requestHeaders: Record<string, string>
  status: number
  /** Content headers of the service's answer (content-type, content-encoding, etag, vary...). */
  headers: Record<string, string>
  /** The body, base64. */
  body: string
}

const [fixturesFile, port] = process.argv.slice(2)
if (fixturesFile === undefined || port === undefined) throw new Error('usage: bench-bare-server.ts <fixtures.json> <port>')
const fixtures = JSON.parse(readFileSync(fixturesFile, 'utf8')) as BareFixture[]

/** What tells fixtures of one path apart: a conditional request and the accepted encodings. */
function fixtureKey (path: string, headers: Record<string, string | string[] | undefined>): string {
  return `${path} ${headers['if-none-match'] === undefined ? '' : 'conditional'} ${String(headers['accept-encoding'] ?? '')}`
}

const byKey = new Map(fixtures.map((f) => [fixtureKey(f.path, f.requestHeaders), { ...f, bytes: Buffer.from(f.body, 'base64') }]))
const fastify = Fastify({ logger: false })
fastify.get('/ready', async () => 'ready')
fastify.get('/*', (request, reply) => {
  const fixture = byKey.get(fixtureKey(request.url, request.headers))
  if (fixture === undefined) return reply.code(404).send()
  reply.code(fixture.status).headers(fixture.headers)
  return reply.send(fixture.status === 304 ? undefined : fixture.bytes)
})
await fastify.listen({ host: '127.0.0.1', port: Number(port) })
