// The write API's import (POST /admin/v1/servers/{g}/import) over a real listener against a real
// Redis, where its body is a stream: the body limit (IMPORT_BODY_LIMIT_MB, lowered here to 1 MiB
// so that no test sends 256 MiB), answered 413 payload_too_large in the error shape for either
// format, nothing written, and before a byte is read when Content-Length says so; an answer
// before the body's end closes the connection; and Idempotency-Key, whose fingerprint is taken
// from the body's bytes as they stream in: the same key and body import once and replay the
// first answer, a refusal too; another body is 422; a retry while the first runs waits for its
// answer, then 409; a first request cut off midway leaves no claim behind, so its retry imports.
import t, { type Test } from 'tap'
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestAdmin, type TestAdmin } from './helpers/admin.js'
import { pageOf, rowOf, toJson } from './helpers/bot-json.js'
import type { Config } from '../src/config.js'
import { boardMember } from '../src/redis/keys.js'
import { tokenId } from '../src/tokens/token-store.js'
import { KEEP_ALIVE_TIMEOUT_MS } from '../src/http/server-options.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

// The tests run side by side: each has an app (its own key prefix, tokens and idempotency keys)
// listening on a port of its own. Apps are built one at a time (oneAtATime), and the two tests
// that hold the event loop for over a second (at the end of the file) run alone.
t.jobs = 8

const G = '6200000000000000001'
const MIB = 1024 * 1024

interface Answer { status: number, headers: Headers, raw: string, body: Record<string, unknown> }

/**
 * The write API with a 1 MiB import limit, listening on a free port, and a transfer token. A
 * minute for each request: bodies stream in many chunks, which a loaded machine (a CPU burner on
 * every core) sent past the 10 s default, answering 408 where a test pins another answer.
 */
async function listening (t: Test, overrides: Partial<Config> = {}): Promise<{ ctx: TestAdmin, url: string, token: string }> {
  const ctx = await buildTestAdmin(t, server.url, { importBodyLimitMb: 1, requestTimeoutMs: 60_000, ...overrides })
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

// First, so that its five seconds of waiting overlap the tests after it.
t.test('Idempotency-Key: a retry while the first import runs waits for its answer, up to 5 s, then 409 idempotency_key_in_use', async (t) => {
  const { ctx, url, token } = await listening(t)
  const csv = csvOf(300, 0, 3)
  const key = { 'idempotency-key': 'slow-1' }
  let release = (): void => {}
  const held = new Promise<void>((resolve) => { release = resolve })
  async function * slowly () { // half the file, then the rest when released
    yield csv.slice(0, 100)
    await held
    yield csv.slice(100)
  }
  const first = streamed(url, token, 'format=csv', slowly(), key)
  for (let i = 0; i < 200 && await ctx.redis.exists(stored(ctx, token, 'slow-1')) === 0; i++) await sleep(10)
  const started = Date.now()
  const inUse = await streamed(url, token, 'format=csv', [csv], key)
  t.equal(inUse.status, 409)
  t.match(inUse.body, { code: 'idempotency_key_in_use' })
  t.ok(Number(inUse.headers.get('retry-after')) >= 1, 'with retry-after')
  t.ok(Date.now() - started >= 4900, `after waiting ${Date.now() - started} ms`)
  const waiting = streamed(url, token, 'format=csv', [csv], key)
  await sleep(300)
  release()
  const [answer, replayed] = await Promise.all([first, waiting])
  t.match(answer, { status: 200, body: { imported: 4 } })
  t.equal(replayed.status, 200, 'the waiting retry gets the first answer')
  t.equal(replayed.raw, answer.raw)
  t.equal(replayed.headers.get('idempotent-replayed'), 'true')
})

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

t.test('a streamed MEE6 JSON over the limit is 413 payload_too_large too, and writes nothing', async (t) => {
  const { ctx, url, token } = await listening(t)
  const players = JSON.stringify({ players: [{ id: '1000000000001', username: 'ann', xp: 10 }], pad: '' })
  const over = players.replace('"pad":""', `"pad":"${'x'.repeat(MIB + 1 - Buffer.byteLength(players))}"`)
  t.equal(Buffer.byteLength(over), MIB + 1)
  isPayloadTooLarge(t, await streamed(url, token, 'format=mee6', inChunks(over)), 'one byte over')
  t.equal(await ctx.redis.exists(ctx.keys.guild(G).board), 0, 'nothing written')
  t.match(await streamed(url, token, 'format=mee6', inChunks(over.replace('"pad":"x', '"pad":"'))), { status: 200, body: { imported: 1 } }, 'a body of exactly the limit')
})

t.test("format=tatsu: a bot's pages streamed in, cut anywhere; bad rows answered with their page and index, an id past 2^53 exact; strict=true refuses them and writes nothing", async (t) => {
  const { ctx, url, token } = await listening(t)
  const pages = toJson([
    pageOf('tatsu', [rowOf('tatsu', { id: 'NUM:444444444444444444', xp: 50 }), rowOf('tatsu', { id: '444444444444444400', xp: 7 })]),
    pageOf('tatsu', [rowOf('tatsu', { id: '1000000000005', xp: -3 }), rowOf('tatsu', { id: '1000000000006', xp: 9 })], 1)
  ])
  const chunks = (): string[] => pages.match(/[\s\S]{1,5}/g) ?? [] // ids, numbers and keys cut across chunks
  const board = ctx.keys.guild(G).board
  t.match(await streamed(url, token, 'format=tatsu&strict=true', chunks()), { status: 422, body: { code: 'import_refused' } })
  t.equal(await ctx.redis.exists(board), 0, 'strict: nothing written')
  const answer = await streamed(url, token, 'format=tatsu', chunks())
  t.equal(answer.status, 200)
  t.same(answer.body, { imported: 3, settings: null, skipped: [{ page: 1, index: 0, reason: 'xp must be a whole number from 0 to 1000000000000 (got -3)' }] })
  t.same([await ctx.redis.zscore(board, boardMember('444444444444444444')), await ctx.redis.zscore(board, boardMember('444444444444444400'))], ['50', '7'])
  t.match(await streamed(url, token, 'format=lurkr', [pages]), { status: 400, body: { code: 'invalid_import_file', message: /^\[0\] is not a Lurkr leaderboard page: .*is it format tatsu\?$/ } },
    'the wrong format named')
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

/** The member's XP on the board, or null. */
async function xpOf (ctx: TestAdmin, n: number): Promise<number | null> {
  const score = await ctx.redis.zscore(ctx.keys.guild(G).board, boardMember(String(1_000_000_000_000 + n)))
  return score === null ? null : Number(score)
}

/** Where the service keeps `key` for `token`. */
function stored (ctx: TestAdmin, token: string, key: string): string {
  return ctx.keys.idempotency(tokenId(token) ?? '', key)
}

t.test('Idempotency-Key: the same key and body import once and answer the first response again; another body, or query, is 422', async (t) => {
  const { ctx, url, token } = await listening(t)
  const csv = csvOf(300, 0, 3) // members 0 to 3
  const key = { 'idempotency-key': 'import-1' }
  const first = await streamed(url, token, 'format=csv', [csv], key)
  t.match(first, { status: 200, body: { imported: 4, skipped: [] } })
  t.equal(first.headers.get('idempotent-replayed'), null, 'the first answer is not a replay')
  // Changed since: a second import would set it back to 0.
  await ctx.writer.setXp({ guildId: G, userId: String(1_000_000_000_000), xp: 999 })

  const split = csv.match(/[\s\S]{1,7}/g) ?? [] // other chunk boundaries, the same bytes
  const again = await streamed(url, token, 'format=csv', split, key)
  t.equal(again.status, 200)
  t.equal(again.raw, first.raw, 'the first answer')
  t.equal(again.headers.get('idempotent-replayed'), 'true')
  t.equal(await xpOf(ctx, 0), 999, 'nothing imported again: the XP set since stays')

  const other = await streamed(url, token, 'format=csv', [csvOf(300, 0, 4)], key)
  t.equal(other.status, 422)
  t.same(other.body, { statusCode: 422, error: 'Unprocessable Entity', code: 'idempotency_key_reused', message: other.body.message })
  t.equal(await xpOf(ctx, 4), null, 'another body under the key imports nothing')
  t.equal(await xpOf(ctx, 0), 999)
  t.match(await streamed(url, token, 'format=csv&strict=true', [csv], key), { status: 422, body: { code: 'idempotency_key_reused' } }, 'the URL is part of the request')

  // One space of keys per token, for every route: a key an award used is another request's here.
  const both = await ctx.token()
  const award = async () => await ctx.admin.inject({
    method: 'POST', url: `/admin/v1/servers/${G}/awards`, headers: { authorization: `Bearer ${both}`, 'idempotency-key': 'award-1' }, payload: { awards: [{ user_id: '1', xp: 5 }] }
  })
  t.equal((await award()).statusCode, 200)
  t.equal((await award()).headers['idempotent-replayed'], 'true', 'the award is answered again')
  t.match(await streamed(url, both, 'format=csv', [csv], { 'idempotency-key': 'award-1' }), { status: 422, body: { code: 'idempotency_key_reused' } })
  t.match(await streamed(url, token, 'format=csv', [csv], { 'idempotency-key': 'award-1' }), { status: 200, body: { imported: 4 } }, 'under another token, the key is new')
  t.match(await streamed(url, token, 'format=csv', [csv], { 'idempotency-key': 'bad key!' }), { status: 400, body: { code: 'invalid_parameter' } })
})

t.test('Idempotency-Key: a first import cut off midway leaves no claim, so its retry imports; a body over the limit keeps none either', async (t) => {
  const { ctx, url, token } = await listening(t)
  const csv = csvOf(300, 0, 3)
  const { host, port, pathname } = new URL(url)
  const socket = connect(Number(port), host.split(':')[0])
  socket.on('error', () => {})
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(`POST ${pathname}?format=csv HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\ncontent-type: text/csv\r\n` +
    `idempotency-key: cut-1\r\ncontent-length: ${Buffer.byteLength(csv)}\r\n\r\n${csv.slice(0, 100)}`)
  const claim = stored(ctx, token, 'cut-1')
  for (let i = 0; i < 200 && await ctx.redis.exists(claim) === 0; i++) await sleep(10)
  t.equal(await ctx.redis.exists(claim), 1, 'the first request claimed the key')
  socket.destroy()
  for (let i = 0; i < 200 && await ctx.redis.exists(claim) === 1; i++) await sleep(10)
  t.equal(await ctx.redis.exists(claim), 0, 'and freed it when its body was cut off')
  t.equal(await ctx.redis.exists(ctx.keys.guild(G).board), 0, 'nothing written')
  const retry = await streamed(url, token, 'format=csv', [csv], { 'idempotency-key': 'cut-1' })
  t.match(retry, { status: 200, body: { imported: 4 } })
  t.equal(retry.headers.get('idempotent-replayed'), null, 'imported, not replayed')

  const over = { 'idempotency-key': 'over-1' }
  isPayloadTooLarge(t, await streamed(url, token, 'format=csv', inChunks(csvOf(MIB + 1)), over), 'over the limit')
  t.equal(await ctx.redis.exists(stored(ctx, token, 'over-1')), 0, 'no answer kept: the body was not read whole')
  t.equal((await streamed(url, token, 'format=csv', [csv], over)).headers.get('idempotent-replayed'), null, 'the key is free for the retry')
})

// The last two run alone (buffered: false), after the others: the 150,000 rows refused hold this
// process's event loop for over a second, which would stall every test beside them (their apps'
// Redis commands have 10 s, but their requests' own timeouts and waits are shorter).
t.test('a file refused before its end is answered at once, and closes its connection, which the unread rest would hold up (75 s, and a shutdown with it)', { buffered: false }, async (t) => {
  const { ctx, url, token } = await listening(t)
  // No user_id column: refused at the header, the rest unread by the import (300 KB, many chunks).
  const file = 'id,name\n' + 'x\n'.repeat(150_000)
  const refused = await streamed(url, token, 'format=csv', inChunks(file))
  t.match(refused, { status: 400, body: { code: 'invalid_import_file' } })
  t.equal(refused.headers.get('connection'), 'close')
  const started = Date.now()
  await ctx.admin.close()
  // Held by the unread rest, the close would wait for a timeout to end that connection: the
  // request's (60 s here) or the keep-alive's (75 s). A busy machine's close takes less.
  const closedInMs = Date.now() - started
  const timeoutMs = Math.min(ctx.config.requestTimeoutMs, KEEP_ALIVE_TIMEOUT_MS)
  t.ok(closedInMs < timeoutMs, `the service closed in ${closedInMs} ms, before a timeout (${timeoutMs} ms) could have ended the connection`)
})

t.test('Idempotency-Key: a refused file is answered again too; its fingerprint covers the body past where the import stopped', { buffered: false }, async (t) => {
  const { ctx, url, token } = await listening(t)
  const key = { 'idempotency-key': 'refused-1' }
  // No user_id column: refused at the header, the rest unread by the import (300 KB, many chunks).
  const rest = 'x\n'.repeat(150_000)
  const file = 'id,name\n' + rest
  const first = await streamed(url, token, 'format=csv', inChunks(file), key)
  t.match(first, { status: 400, body: { code: 'invalid_import_file' } })
  const again = await streamed(url, token, 'format=csv', inChunks(file), key)
  t.equal(again.status, 400)
  t.equal(again.raw, first.raw)
  t.equal(again.headers.get('idempotent-replayed'), 'true')
  t.match(await streamed(url, token, 'format=csv', inChunks('id,name\n' + rest.slice(2) + 'y\n'), key), { status: 422, body: { code: 'idempotency_key_reused' } },
    'a body that differs only past the header is another request')
  t.equal(await ctx.redis.exists(ctx.keys.guild(G).board), 0)
})
