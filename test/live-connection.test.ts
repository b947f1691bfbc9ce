// A stream's connection, against a real Redis: once the stream is open Node's HTTP parser goes
// back to Node (it held some 10 KB per stream), the response says `Connection: close`, and the
// connection is still read to its end: a client that closes or half-closes it ends the stream,
// bytes it sends after its request are not answered and leave the stream as it was, and a
// stream the service ends closes its connection; an HTTP/1.0 client (no chunked encoding) gets
// the same. Clients are raw TCP sockets, so the test sees each byte and the connection's end.
import t, { type Test } from 'tap'
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp, type TestApp } from './helpers/app.js'
import type { Config } from '../src/config.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const GUILD = '1960000000000000001'
const BOARD = `/api/v1/servers/${GUILD}/leaderboard`

interface Fixture extends TestApp {
  port: number
  key: string
  /** The server's side of each connection, in the order they came. */
  accepted: Socket[]
}

async function serve (t: Test, overrides: Partial<Config> = {}): Promise<Fixture> {
  const fixture = await buildTestApp(t, server.url, overrides)
  const accepted: Socket[] = []
  fixture.app.server.on('connection', (socket: Socket) => { accepted.push(socket) })
  await fixture.app.listen({ port: 0, host: '127.0.0.1' })
  const address = fixture.app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  const { key } = await fixture.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  for (let i = 1; i <= 3; i++) await fixture.writer.awardXp({ guildId: GUILD, userId: String(i), xp: 100 * i })
  return { ...fixture, port, key, accepted }
}

/** A raw HTTP/1.1 client on one TCP connection: what it received, and whether the server ended or closed it. */
class RawClient {
  readonly socket: Socket
  received = ''
  /** The server ended its side (FIN). */
  ended = false
  closed = false
  #wake: () => void = () => {}

  private constructor (socket: Socket) {
    this.socket = socket
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { this.received += chunk; this.#wake() })
    socket.on('end', () => { this.ended = true; this.#wake() })
    socket.on('close', () => { this.closed = true; this.#wake() })
    socket.on('error', () => {})
  }

  static async connect (t: Test, port: number): Promise<RawClient> {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true })
    t.teardown(() => { socket.destroy() })
    await once(socket, 'connect')
    return new RawClient(socket)
  }

  static request (path: string, key: string): string {
    return `GET ${path} HTTP/1.1\r\nhost: localhost\r\naccept: text/event-stream\r\nx-api-key: ${key}\r\n\r\n`
  }

  count (text: string): number {
    return this.received.split(text).length - 1
  }

  async until (check: () => boolean, what: string, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms; received: ${JSON.stringify(this.received.slice(-300))}`)
      await Promise.race([new Promise<void>((resolve) => { this.#wake = resolve }), sleep(50)])
    }
  }
}

/** The server's side of the `index`th connection, once it came. */
async function acceptedSocket (f: Fixture, index: number): Promise<Socket> {
  for (let i = 0; i < 200 && f.accepted[index] === undefined; i++) await sleep(10)
  const socket = f.accepted[index]
  if (socket === undefined) throw new Error(`connection ${index} was not accepted`)
  return socket
}

t.test("once a stream is open its connection gives Node's HTTP parser back, and the response says Connection: close", async (t) => {
  const f = await serve(t)
  const client = await RawClient.connect(t, f.port)
  client.socket.write(RawClient.request(`${BOARD}/stream?limit=3`, f.key))
  await client.until(() => client.count('event: leaderboard') === 1, 'first event')
  t.match(client.received, /^HTTP\/1\.1 200 OK\r\n/, 'the stream is open')
  t.match(client.received, /\r\nconnection: close\r\n/i, 'Connection: close')
  const socket = await acceptedSocket(f, 0) as Socket & { parser?: unknown }
  t.equal(socket.parser, null, "the connection's parser is given back")

  await f.writer.awardXp({ guildId: GUILD, userId: '1', xp: 1000 })
  await client.until(() => client.count('event: leaderboard') === 2, 'the change')
  t.pass('and changes still come')
})

t.test('a client that half-closes its stream\'s connection (sends FIN, reads on) ends the stream, and its place under the cap is free again', async (t) => {
  const f = await serve(t, { maxStreamsPerKey: 1 })
  const first = await RawClient.connect(t, f.port)
  first.socket.write(RawClient.request(`${BOARD}/stream?limit=3`, f.key))
  await first.until(() => first.count('event: leaderboard') === 1, 'first event')
  first.socket.end()
  await first.until(() => first.closed, 'close of the connection by the service')
  t.ok(first.closed, 'the service closes its side too')

  // The stream left: a second stream of the key (cap 1) is let in.
  let status = ''
  for (const deadline = Date.now() + 5000; status !== '200' && Date.now() < deadline;) {
    const second = await RawClient.connect(t, f.port)
    second.socket.write(RawClient.request(`${BOARD}/stream?limit=3`, f.key))
    await second.until(() => /^HTTP\/1\.1 (\d+)/.test(second.received), 'a status line')
    status = /^HTTP\/1\.1 (\d+)/.exec(second.received)?.[1] ?? ''
    if (status !== '200') { second.socket.destroy(); await sleep(50) }
  }
  t.equal(status, '200', 'a new stream of the key is let in')
})

t.test('a client that closes its stream\'s connection outright ends the stream', async (t) => {
  const f = await serve(t, { maxStreamsPerKey: 1 })
  const first = await RawClient.connect(t, f.port)
  first.socket.write(RawClient.request(`${BOARD}/stream?limit=3`, f.key))
  await first.until(() => first.count('event: leaderboard') === 1, 'first event')
  const socket = await acceptedSocket(f, 0)
  first.socket.destroy()
  if (!socket.destroyed) await once(socket, 'close')
  t.ok(socket.destroyed, "the service's side of the connection is closed")
})

t.test('bytes a client sends after its stream\'s request are not answered; the stream goes on, and when the service ends it the connection closes', async (t) => {
  const f = await serve(t)
  const client = await RawClient.connect(t, f.port)
  client.socket.write(RawClient.request(`/api/v1/servers/${GUILD}/members/3/stream`, f.key))
  await client.until(() => client.count('event: member') === 1, 'first event')
  // A second request on the same connection, and bytes that are no request at all.
  client.socket.write('GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n')
  client.socket.write('\x00\x01 not HTTP \r\n\r\n')
  await f.writer.awardXp({ guildId: GUILD, userId: '3', xp: 1000 })
  await client.until(() => client.count('event: member') === 2, 'the change')
  t.equal(client.count('HTTP/1.1'), 1, 'one response on the connection: the stream\'s')
  t.notOk(client.ended, 'the stream is open')

  // The member removed: the stream's last event is the error, then the service ends the connection.
  await f.writer.removeMember({ guildId: GUILD, userId: '3' })
  await client.until(() => client.ended, 'end of the connection after the error event')
  t.match(client.received, /event: error\ndata: \{"statusCode":404/, 'the error event came')
  t.match(client.received, /\r\n0\r\n\r\n$/, 'the chunked body ended before the connection did')
  t.equal(client.count('HTTP/1.1'), 1, 'and nothing answered the bytes sent after the request')
})

t.test('an HTTP/1.0 client gets its stream too (no chunked encoding: the body ends with the connection), without a parser once open', async (t) => {
  const f = await serve(t)
  const client = await RawClient.connect(t, f.port)
  client.socket.write(`GET /api/v1/servers/${GUILD}/members/2/stream HTTP/1.0\r\naccept: text/event-stream\r\nx-api-key: ${f.key}\r\n\r\n`)
  await client.until(() => client.count('event: member') === 1, 'first event')
  t.match(client.received, /^HTTP\/1\.1 200 OK\r\n/, 'the stream is open')
  t.notMatch(client.received, /transfer-encoding/i, 'no chunked encoding, which an HTTP/1.0 client cannot read')
  const socket = await acceptedSocket(f, 0) as Socket & { parser?: unknown }
  t.equal(socket.parser, null, "the connection's parser is given back")

  await f.writer.awardXp({ guildId: GUILD, userId: '2', xp: 1000 })
  await client.until(() => client.count('event: member') === 2, 'the change')
  t.match(client.received, /event: member\nid: [^\n]*\ndata: \{[^\n]*"xp":1200/, 'the change, as plain event-stream bytes')

  await f.writer.removeMember({ guildId: GUILD, userId: '2' })
  await client.until(() => client.ended, 'end of the connection after the error event')
  t.match(client.received, /event: error\ndata: \{"statusCode":404[^\n]*\n\n$/, 'the error event is the last bytes before the end')
})
