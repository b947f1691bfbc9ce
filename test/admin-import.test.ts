// The write API's import (POST /admin/v1/servers/{g}/import) over a real listener against a real
// Redis, where its body is a stream: the body limit (IMPORT_BODY_LIMIT_MB, lowered here to 1 MiB
// so that no test sends 256 MiB), answered 413 payload_too_large in the error shape for either
// format, nothing written, and before a byte is read when Content-Length says so; an answer
// before the body's end closes the connection.
import t, { type Test } from 'tap'
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestAdmin, type TestAdmin } from './helpers/admin.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const G = '6200000000000000001'
const MIB = 1024 * 1024

interface Answer { status: number, headers: Headers, raw: string, body: Record<string, unknown> }

/** The write API with a 1 MiB import limit, listening on a free port, and a transfer token. */
async function listening (t: Test): Promise<{ ctx: TestAdmin, url: string, token: string }> {
  const ctx = await buildTestAdmin(t, server.url, { importBodyLimitMb: 1 })
  const address = await ctx.admin.listen({ port: 0, host: '127.0.0.1' })
  return { ctx, url: `${address}/admin/v1/servers/${G}/import`, token: await ctx.token('*', ['transfer']) }
}

/**
 * POSTs `chunks` as the body, streamed (chunked: no Content-Length, so only the service's count
 * of the bytes as they arrive can refuse it).
 */
async function streamed (url: string, token: string, query: string, chunks: Iterable<string> | AsyncIterable<string>,
  headers: Record<string, string> = {}): Promise<Answer> {
  async function * bytes () { for await (const chunk of chunks) yield Buffer.from(chunk) }
  const res = await fetch(`${url}?${query}`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', ...headers }, body: bytes(), duplex: 'half'
  } as RequestInit)
  const raw = await res.text()
  return { status: res.status, headers: res.headers, raw, body: raw === '' ? {} : JSON.parse(raw) }
}

/**
 * A CSV of `bytes` bytes: members from..to-1 (`user_id,username,xp,note`, about 30 bytes a row),
 * the last row's note (a column the import ignores) padded to the length.
 */
function csvOf (bytes: number, from = 0, to = 3): string {
  let csv = 'user_id,username,xp,note\n'
  for (let i = from; i < to; i++) csv += `${1_000_000_000_000 + i},member${i},${i},\n`
  return csv + `${1_000_000_000_000 + to},member${to},${to},` + 'x'.repeat(bytes - Buffer.byteLength(csv) - `${1_000_000_000_000 + to},member${to},${to},`.length)
}

/** `text` in chunks of 64 KiB, as a client sends a large body. */
function * inChunks (text: string): Generator<string> {
  for (let at = 0; at < text.length; at += 64 * 1024) yield text.slice(at, at + 64 * 1024)
}

function isPayloadTooLarge (t: Test, res: Answer, what: string): void {
  t.equal(res.status, 413, `${what}: 413`)
  t.same(Object.keys(res.body).sort(), ['code', 'error', 'message', 'statusCode'], `${what}: the error shape`)
  t.match(res.body, { statusCode: 413, error: 'Payload Too Large', code: 'payload_too_large', message: 'the file is over 1 MiB' }, what)
}

t.test('IMPORT_BODY_LIMIT_MB: a streamed CSV over the limit is 413 payload_too_large and writes nothing; one at the limit is imported', async (t) => {
  const { ctx, url, token } = await listening(t)
  // A few rows (no batch of them is due before the end), padded past the limit.
  isPayloadTooLarge(t, await streamed(url, token, 'format=csv', inChunks(csvOf(MIB + 1))), 'one byte over')
  t.equal(await ctx.redis.exists(ctx.keys.guild(G).board), 0, 'nothing written')
  const exactly = csvOf(MIB)
  t.equal(Buffer.byteLength(exactly), MIB)
  t.match(await streamed(url, token, 'format=csv', inChunks(exactly)), { status: 200, body: { imported: 4, skipped: [] } },
    'a body of exactly the limit, on the same client (the 413 closed its connection, rather than leave the rest of the body in the way)')
})

t.test('a streamed MEE6 JSON over the limit is 413 payload_too_large too (its reader reads it whole), and writes nothing', async (t) => {
  const { ctx, url, token } = await listening(t)
  const players = JSON.stringify({ players: [{ id: '1000000000001', username: 'ann', xp: 10 }], pad: '' })
  const over = players.replace('"pad":""', `"pad":"${'x'.repeat(MIB + 1 - Buffer.byteLength(players))}"`)
  t.equal(Buffer.byteLength(over), MIB + 1)
  isPayloadTooLarge(t, await streamed(url, token, 'format=mee6', inChunks(over)), 'one byte over')
  t.equal(await ctx.redis.exists(ctx.keys.guild(G).board), 0, 'nothing written')
  t.match(await streamed(url, token, 'format=mee6', inChunks(over.replace('"pad":"x', '"pad":"'))), { status: 200, body: { imported: 1 } }, 'a body of exactly the limit')
})

t.test('a Content-Length over the limit is 413 before a byte of the body is read: rows a streamed import would have written by then are not', async (t) => {
  const { ctx, url, token } = await listening(t)
  // 35,000 rows: a streamed import writes them 10,000 at a time as they are read, long before
  // it could count past the limit.
  const csv = csvOf(MIB + 200_000, 0, 35_000)
  const { host, port, pathname } = new URL(url)
  const socket = connect(Number(port), host.split(':')[0])
  t.teardown(() => { socket.destroy() })
  socket.on('error', () => {}) // the service closes the connection after its answer
  const answer = { received: '' }
  socket.on('data', (chunk: Buffer) => { answer.received += chunk.toString() })
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(`POST ${pathname}?format=csv HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\ncontent-type: text/csv\r\n` +
    `content-length: ${Buffer.byteLength(csv)}\r\n\r\n${csv.slice(0, 700_000)}`)
  // The answer, or (without the check) the first rows written, then the rest of the body.
  for (let i = 0; i < 300 && answer.received === '' && await ctx.redis.exists(ctx.keys.guild(G).board) === 0; i++) await sleep(10)
  if (answer.received === '') socket.write(csv.slice(700_000))
  for (let i = 0; i < 500 && !answer.received.includes('}'); i++) await sleep(10)
  const [head = '', body = ''] = answer.received.split('\r\n\r\n')
  t.match(head, /^HTTP\/1\.1 413 /)
  t.match(head, /\r\nconnection: close\r\n/i, 'the connection closes, the rest of the body unread')
  t.same(JSON.parse(body), { statusCode: 413, error: 'Payload Too Large', code: 'payload_too_large', message: 'the file is over 1 MiB' })
  t.equal(await ctx.redis.exists(ctx.keys.guild(G).board), 0, 'nothing written')
})

t.test('a file refused before its end is answered at once, and closes its connection, which the unread rest would hold up (75 s, and a shutdown with it)', async (t) => {
  const { ctx, url, token } = await listening(t)
  // No user_id column: refused at the header, the rest unread by the import (300 KB, many chunks).
  const file = 'id,name\n' + 'x\n'.repeat(150_000)
  const refused = await streamed(url, token, 'format=csv', inChunks(file))
  t.match(refused, { status: 400, body: { code: 'invalid_import_file' } })
  t.equal(refused.headers.get('connection'), 'close')
  const started = Date.now()
  await ctx.admin.close()
  t.ok(Date.now() - started < 5000, `the service closed in ${Date.now() - started} ms`)
})
