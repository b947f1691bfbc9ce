// Requests read as sent (CONTRACT part 4, "Closed by construction"): ids in bodies are JSON
// strings (a discord.py bot's ints, as Python's json module writes them, are refused and never
// applied), bodies are not coerced, a field or query parameter a route does not know is refused
// by name, a body without a JSON content type is 415, names are counted in code points, and the
// Idempotency-Key fingerprint is the body as sent, in a canonical form.
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Type } from 'typebox'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestAdmin, type TestAdmin } from './helpers/admin.js'
import { SseReader } from './helpers/sse.js'
import { buildInstance } from '../src/app.js'
import { parseConfig } from '../src/config.js'
import { canonicalJson } from '../src/pipeline/idempotency.js'
import { InvalidParameterError } from '../src/errors.js'

t.jobs = 4

const run = promisify(execFile)
const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const G = '7100000000000000001'
const EMOJI = '😀' // one code point, two UTF-16 units

/** A write-API request: an object payload is sent as JSON, a string one as it is (with the caller's content type). */
async function call (ctx: TestAdmin, method: string, url: string, token: string, payload?: unknown, headers: Record<string, string> = {}) {
  const json = payload !== undefined && typeof payload !== 'string'
  const res = await ctx.admin.inject({
    method: method as 'GET',
    url: `/admin/v1${url}`,
    headers: { authorization: `Bearer ${token}`, ...(json ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(payload === undefined ? {} : { payload: json ? JSON.stringify(payload) : payload as string })
  })
  return { status: res.statusCode, headers: res.headers, body: res.body === '' ? null : res.json() }
}

/** The board as the read API serves it: [user_id, xp] by rank. */
async function board (ctx: TestAdmin, guildId = G): Promise<Array<[string, number]>> {
  const { key } = await ctx.apiKeys.create({ guildId, plan: 'professional' })
  const res = await ctx.app.inject({ url: `/api/v1/servers/${guildId}/leaderboard?limit=100`, headers: { 'x-api-key': key } })
  return (res.json() as { data: Array<{ user_id: string, xp: number }> }).data.map((e) => [e.user_id, e.xp])
}

/**
 * Python sends each body (built from Python ints and strings, serialized by its json module, as
 * a discord.py bot does) to the write API over HTTP: the answers, in order.
 */
async function fromPython (t: Test, base: string, token: string, requests: string): Promise<Array<{ status: number, body: { code?: string, message?: string, results?: unknown[] } }>> {
  const script = `
import json, sys, urllib.request, urllib.error
base, token = sys.argv[1], sys.argv[2]
author_id = 1200000000000000001   # what discord.py gives as message.author.id
message_id = 1310000000000000001  # and as message.id
for method, path, body in ${requests}:
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method=method,
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            print(json.dumps({"status": response.status, "body": json.loads(response.read())}))
    except urllib.error.HTTPError as error:
        print(json.dumps({"status": error.code, "body": json.loads(error.read())}))
`
  const dir = t.testdir({ 'bot.py': script })
  const { stdout } = await run('python3', [`${dir}/bot.py`, base, token], { timeout: 60_000 })
  return stdout.trim().split('\n').map((line) => JSON.parse(line))
}

t.test('ids a Python bot sends as ints are 400 naming the field and saying to send ids as strings; nothing is applied', async (t) => {
  const ctx = await buildTestAdmin(t, server.url)
  const token = await ctx.token()
  const base = `${await ctx.admin.listen({ port: 0, host: '127.0.0.1' })}/admin/v1`
  const keysBefore = await ctx.apiKeys.list(G)
  const answers = await fromPython(t, base, token, `[
    ("POST", "/servers/${G}/awards", {"awards": [{"user_id": author_id, "xp": 15}]}),
    ("POST", "/servers/${G}/awards", {"awards": [{"user_id": str(author_id), "xp": 15, "op_id": message_id}]}),
    ("POST", "/servers/${G}/awards", {"awards": [{"user_id": str(author_id), "xp": 15, "op_id": message_id + 1}]}),
    ("POST", "/servers/${G}/awards", {"awards": [{"user_id": "7", "xp": 1}, {"user_id": author_id + 1, "xp": 15}]}),
    ("POST", "/servers/${G}/keys", {"plan": "free", "servers": [${G}]}),
    ("PUT", "/servers/${G}/settings", {"role_rewards": [{"level": 5, "role_id": 1300000000000000001}]}),
  ]`)
  const places = ['awards/0/user_id', 'awards/0/op_id', 'awards/0/op_id', 'awards/1/user_id', 'servers/0', 'role_rewards/0/role_id']
  t.equal(answers.length, places.length)
  answers.forEach((answer, i) => {
    t.equal(answer.status, 400, places[i] ?? '')
    t.equal(answer.body.code, 'invalid_parameter')
    t.match(answer.body.message, `${places[i] ?? ''} must be a JSON string, not a number: send ids as strings`)
    t.match(answer.body.message, /2\^53/)
  })
  t.equal((await ctx.apiKeys.list(G)).length, keysBefore.length, 'no key was made')
  t.same((await ctx.writer.settings.read(G)).roleRewards, [], 'no role reward was set')
  t.same(await board(ctx), [], 'nobody got XP')

  // The same awards with str(): applied, to exactly the member named.
  const good = await fromPython(t, base, token, `[
    ("POST", "/servers/${G}/awards", {"awards": [{"user_id": str(author_id), "xp": 15, "op_id": str(message_id)}]}),
    ("POST", "/servers/${G}/awards", {"awards": [{"user_id": str(author_id), "xp": 15, "op_id": str(message_id + 1)}]}),
    ("PUT", "/servers/${G}/settings", {"multipliers": {"roles": {1300000000000000001: 2}}}),
  ]`)
  t.same(good.map((a) => a.status), [200, 200, 200], 'an int key of a map is written as a string by json.dumps: taken')
  t.same((await ctx.writer.settings.read(G)).multipliers.roles, { '1300000000000000001': 200 }, 'that role, exactly')
  t.same(await board(ctx), [['1200000000000000001', 30]], 'two operations a digit apart are two awards')
})

t.test('bodies are not coerced: a string, boolean or fraction where an integer goes is 400 and applies nothing', async (t) => {
  const ctx = await buildTestAdmin(t, server.url)
  const token = await ctx.token()
  for (const [xp, got] of [[true, 'a boolean'], ['1e3', 'a string'], ['10', 'a string'], [1.5, 'a number with a fraction'], [null, 'null']] as const) {
    const res = await call(ctx, 'POST', `/servers/${G}/awards`, token, { awards: [{ user_id: '5', xp }] })
    t.equal(res.status, 400, JSON.stringify(xp))
    t.equal(res.body.message, `awards/0/xp must be an integer from 1 to 1000000 or an object {min, max} (got ${got})`)
  }
  t.equal((await call(ctx, 'PUT', `/servers/${G}/members/5`, token, { xp: '10' })).status, 400, 'PUT member, xp as a string')
  t.equal((await call(ctx, 'POST', `/servers/${G}/awards`, token, { awards: [{ user_id: '5', xp: 3, username: 42 }] })).status, 400, 'a name as a number')
  const settings = await call(ctx, 'PUT', `/servers/${G}/settings`, token, { xp_multiplier: '2' })
  t.match(settings, { status: 400, body: { message: 'xp_multiplier must be a number from 0.01 to 100 (got a string)' } })
  t.same(await board(ctx), [], 'nothing applied')
  t.equal((await call(ctx, 'GET', `/servers/${G}/settings`, token)).body.xp_multiplier, 1, 'the multiplier unchanged')

  // A query string is text: it is still read into its types.
  const exported = await call(ctx, 'GET', `/servers/${G}/export?format=jsonl`, token)
  t.equal(exported.status, 200)
})

t.test('a field a route does not know is 400 naming it, never dropped; a PATCH answers 200 only for a change it made', async (t) => {
  const ctx = await buildTestAdmin(t, server.url)
  const token = await ctx.token()
  const item = await call(ctx, 'POST', `/servers/${G}/awards`, token, { awards: [{ user_id: '5', xp: 3 }, { user_id: '6', xp: 3, usr_name: 'Ada' }] })
  t.match(item, { status: 400, body: { code: 'invalid_parameter', message: 'awards/1/usr_name is not a field this route knows (it takes user_id, xp, username, display_name, avatar_url, op_id, role_ids, channel_id)' } })
  const top = await call(ctx, 'POST', `/servers/${G}/awards`, token, { awards: [{ user_id: '5', xp: 3 }], dry_run: true })
  t.match(top, { status: 400, body: { message: 'dry_run is not a field this route knows (it takes awards)' } })
  t.same(await board(ctx), [], 'nothing applied')

  const { id } = await ctx.apiKeys.create({ guildId: G, plan: 'free' })
  const typo = await call(ctx, 'PATCH', `/keys/${id}`, token, { plan: 'starter', server: [G] })
  t.match(typo, { status: 400, body: { message: /^server is not a field this route knows \(it takes plan, name, expires_at, servers\)$/ } })
  t.equal((await ctx.apiKeys.get(id))?.plan, 'free', 'the known field of a refused body is not applied either')
  t.match(await call(ctx, 'PATCH', `/keys/${id}`, token, {}), { status: 400, body: { message: 'body must give at least one of plan, name, expires_at, servers' } })
  t.match(await call(ctx, 'PUT', `/servers/${G}/settings`, token, { xp_multiplier: 2, curve: 'linear' }), { status: 400, body: { message: /^curve is not a field/ } })
  t.match(await call(ctx, 'PUT', `/servers/${G}/settings`, token, { multipliers: { roles: { moderators: 2 } } }),
    { status: 400, body: { message: 'multipliers/roles is keyed by ids (decimal, 1 to 20 digits without a leading zero): "moderators" is not one' } })
  t.match(await call(ctx, 'PUT', `/servers/${G}/settings`, token, { season: { every: 'week', tz: 'UTC' } }), { status: 400, body: { message: /^season\/tz is not a field this route knows \(it takes every, timezone\)$/ } })
  t.equal((await ctx.writer.settings.read(G)).season.every, 'none', 'nothing changed')
})

t.test('a query parameter a route does not take is 400 naming it, on both listeners; documents ignore any', async (t) => {
  const ctx = await buildTestAdmin(t, server.url)
  const token = await ctx.token()
  const { key } = await ctx.apiKeys.create({ guildId: G, plan: 'professional' })
  const read = async (url: string) => {
    const res = await ctx.app.inject({ url, headers: { 'x-api-key': key } })
    return { status: res.statusCode, body: res.json() }
  }
  t.match(await read(`/api/v1/servers/${G}/leaderboard?limt=50`),
    { status: 400, body: { code: 'invalid_parameter', message: 'limt is not a parameter of this route (it takes period, season, limit, page)' } })
  t.match(await read(`/api/v1/servers/${G}/stats?_=1732550000`), { status: 400, body: { message: '_ is not a parameter of this route (it takes none)' } })
  t.match(await read(`/api/v1/servers/${G}/members/1/around?radius=2&limit=3`), { status: 400, body: { message: /^limit is not a parameter/ } })
  // A stream: refused before it opens (a stream that opened would never end an inject).
  const stream = await SseReader.open(t, await ctx.app.listen({ port: 0, host: '127.0.0.1' }), `/api/v1/servers/${G}/leaderboard/stream?limt=5`, { 'x-api-key': key })
  t.match({ status: stream.status, body: stream.status === 200 ? null : JSON.parse(stream.body) }, { status: 400, body: { message: /^limt is not/ } })
  t.equal((await read('/healthz?verbose=1')).status, 400)
  t.equal((await read(`/api/v1/servers/${G}/leaderboard?limit=5&page=2&period=week`)).status, 200, 'the known ones, coerced from text')
  for (const url of ['/api/v1/openapi.json?v=2', '/api/v1/docs/?v=2', '/admin/v1/openapi.json?v=2']) {
    const app = url.startsWith('/admin') ? ctx.admin : ctx.app
    t.equal((await app.inject({ url })).statusCode, 200, `a document ignores a cache-buster: ${url}`)
  }
  t.match(await call(ctx, 'GET', `/servers/${G}/export?format=csv&gzip=1`, token), { status: 400, body: { message: 'gzip is not a parameter of this route (it takes format)' } })
  t.match(await call(ctx, 'GET', `/servers/${G}/settings?x=1`, token), { status: 400, body: { message: 'x is not a parameter of this route (it takes none)' } })
})

t.test('a write body without a JSON content type is 415 unsupported_media_type and applies nothing', async (t) => {
  const ctx = await buildTestAdmin(t, server.url)
  const token = await ctx.token()
  const body = JSON.stringify({ awards: [{ user_id: '5', xp: 3 }] })
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
    const res = await call(ctx, 'POST', `/servers/${G}/awards`, token, body, { 'content-type': type })
    t.match(res, { status: 415, body: { statusCode: 415, error: 'Unsupported Media Type', code: 'unsupported_media_type', message: /must be JSON, sent with content-type: application\/json/ } }, type)
  }
  const none = await ctx.admin.inject({ method: 'POST', url: `/admin/v1/servers/${G}/awards`, headers: { authorization: `Bearer ${token}` }, payload: Buffer.from(body) })
  t.match(none.json(), { code: 'unsupported_media_type', message: /none was given/ })
  t.same(await board(ctx), [], 'nothing applied')
  t.equal((await call(ctx, 'POST', `/servers/${G}/awards`, token, body, { 'content-type': 'application/json; charset=utf-8' })).status, 200)
})

t.test('names are counted in code points: 51 emoji is a name, 100 too, 101 code points is not, by the write API and the library alike', async (t) => {
  const ctx = await buildTestAdmin(t, server.url)
  const token = await ctx.token()
  const award = async (userId: string, username: string) => await call(ctx, 'POST', `/servers/${G}/awards`, token, { awards: [{ user_id: userId, xp: 1, username }] })
  t.equal((await award('1', EMOJI.repeat(51))).status, 200, '51 emoji: 102 UTF-16 units')
  t.equal((await award('2', EMOJI.repeat(100))).status, 200, '100 emoji')
  t.equal((await award('3', `${EMOJI.repeat(100)}a`)).status, 400, '101 code points')
  t.equal((await call(ctx, 'PUT', `/servers/${G}/members/4`, token, { xp: 5, username: EMOJI.repeat(51) })).status, 200, 'PUT member')
  const { key } = await ctx.apiKeys.create({ guildId: G, plan: 'free' })
  const member = await ctx.app.inject({ url: `/api/v1/servers/${G}/members/1`, headers: { 'x-api-key': key } })
  t.equal(member.json().username, EMOJI.repeat(51), 'recorded as sent')

  await ctx.writer.awardXp({ guildId: G, userId: '5', xp: 1, username: EMOJI.repeat(51) })
  await ctx.writer.awardMany(G, [{ userId: '6', xp: 1, username: EMOJI.repeat(100) }])
  await t.rejects(ctx.writer.awardXp({ guildId: G, userId: '7', xp: 1, username: EMOJI.repeat(101) }), InvalidParameterError)
  await t.rejects(ctx.writer.setUsername({ guildId: G, userId: '5', username: `${EMOJI.repeat(100)}a` }), InvalidParameterError)

  const created = await call(ctx, 'POST', `/servers/${G}/keys`, token, { plan: 'free', name: EMOJI.repeat(60) })
  t.equal(created.status, 201, 'a key name of 60 emoji')
  t.equal((await ctx.apiKeys.create({ guildId: G, plan: 'free', name: EMOJI.repeat(100) })).name, EMOJI.repeat(100), 'and the key store alike')
  await t.rejects(ctx.apiKeys.create({ guildId: G, plan: 'free', name: EMOJI.repeat(101) }), InvalidParameterError)
  t.equal((await ctx.tokens.create({ name: EMOJI.repeat(100) })).name, EMOJI.repeat(100), 'a token name too')
})

t.test('the Idempotency-Key fingerprint is the body as sent: names in another order are the same request, a string for a number is not', async (t) => {
  const ctx = await buildTestAdmin(t, server.url)
  const token = await ctx.token()
  const key = { 'idempotency-key': 'batch-1' }
  const first = await call(ctx, 'POST', `/servers/${G}/awards`, token, '{"awards":[{"user_id":"5","xp":7,"username":"Ada"}]}', { ...key, 'content-type': 'application/json' })
  t.equal(first.status, 200)
  const reordered = await call(ctx, 'POST', `/servers/${G}/awards`, token, '{ "awards": [ {"username": "Ada", "xp": 7, "user_id": "5"} ] }', { ...key, 'content-type': 'application/json' })
  t.equal(reordered.status, 200, 'not 422')
  t.equal(reordered.headers['idempotent-replayed'], 'true', 'the first answer again')
  t.same(reordered.body, first.body)
  const asText = await call(ctx, 'POST', `/servers/${G}/awards`, token, '{"awards":[{"user_id":"5","xp":"7","username":"Ada"}]}', { ...key, 'content-type': 'application/json' })
  t.equal(asText.status, 400, '"7" is another request, and an invalid one: not the first answer')
  t.equal(asText.headers['idempotent-replayed'], undefined)
  const other = await call(ctx, 'POST', `/servers/${G}/awards`, token, '{"awards":[{"user_id":"5","xp":8,"username":"Ada"}]}', { ...key, 'content-type': 'application/json' })
  t.match(other, { status: 422, body: { code: 'idempotency_key_reused' } })
  t.same(await board(ctx), [['5', 7]], 'applied once')

  t.equal(canonicalJson({ b: [{ d: '7', c: 7 }], a: null }), '{"a":null,"b":[{"c":7,"d":"7"}]}')
  t.not(canonicalJson({ xp: '7' }), canonicalJson({ xp: 7 }))
  t.equal(canonicalJson(JSON.parse('{"xp":1e3,"é":"\\u00e9"}')), canonicalJson({ é: 'é', xp: 1000 }), 'the same values written another way')
})

t.test('a body schema that leaves an object open is an error when the app is built', async (t) => {
  const config = parseConfig({ redisUrl: server.url, logLevel: 'silent' })
  // A listener of its own, with routes open to anyone: only the body schema is at stake.
  const guard = { prefixes: ['/test'], kinds: [], documents: [], hooks: () => ({}) }
  const open = { access: { kind: 'service' } } as const
  for (const [what, body, path] of [
    ['the body itself', Type.Object({ a: Type.String() }), '/'],
    ['an object inside', Type.Object({ items: Type.Array(Type.Object({ a: Type.String() })) }, { additionalProperties: false }), '/items/items']
  ] as const) {
    const app = buildInstance(config, async (fastify) => {
      fastify.post('/open', { schema: { body }, config: open }, async () => ({}))
    }, guard)
    t.teardown(async () => { await app.close() })
    await t.rejects(async () => { await app.ready() }, new RegExp(`the body schema of POST /open leaves ${path} open`), what)
  }
  const closed = buildInstance(config, async (fastify) => {
    fastify.post('/closed', { schema: { body: Type.Object({ a: Type.String() }, { additionalProperties: false }) }, config: open }, async () => ({}))
  }, guard)
  t.teardown(async () => { await closed.close() })
  await closed.ready().then(() => {})
  t.equal((await closed.inject({ method: 'POST', url: '/closed', payload: { a: 'x', b: 1 } })).statusCode, 400, 'a closed one is built, and refuses an unknown field')
})
