// The write API (ADMIN_PORT, /admin/v1) over HTTP against a real Redis, endpoint by endpoint of
// CONTRACT part 3 "The write API": tokens (scopes, servers, revocation), members, daily claims,
// settings, Idempotency-Key, API keys end to end, import and export; and the public port, which
// serves no write at all.
import t, { type Test } from 'tap'
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestAdmin, type TestAdmin } from './helpers/admin.js'
import type { Config } from '../src/config.js'
import { boardMember } from '../src/redis/keys.js'

// The subtests run side by side: each app works under a key prefix of its own (tokens, keys,
// idempotency records and the failed-authentication counts are all under it) on the shared
// server, and nothing reads the server as a whole.
t.jobs = 6

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

async function buildAdmin (t: Test, overrides: Partial<Config> = {}): Promise<TestAdmin> {
  return await buildTestAdmin(t, server.url, overrides)
}

const [A, B] = ['6100000000000000001', '6100000000000000002']
/** Short cache: a revocation shows within this (the default is 3 s, at most 5 s). */
const TTL = 300

async function call (ctx: TestAdmin, method: string, url: string, token: string | undefined, payload?: unknown, headers: Record<string, string> = {}) {
  const res = await ctx.admin.inject({
    method: method as 'GET',
    url: `/admin/v1${url}`,
    headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers },
    ...(payload === undefined ? {} : { payload: payload as object })
  })
  return { status: res.statusCode, headers: res.headers, body: res.body === '' ? null : res.json(), raw: res.body }
}

t.test('tokens: missing 401 missing_token, unknown 401 invalid_token, a scope or server it lacks 403 forbidden', async (t) => {
  const ctx = await buildAdmin(t, { apiKeyCacheTtlMs: TTL })
  const award = { awards: [{ user_id: '1', xp: 10 }] }
  t.match(await call(ctx, 'POST', `/servers/${A}/awards`, undefined, award), { status: 401, body: { code: 'missing_token' } })
  t.match(await call(ctx, 'POST', `/servers/${A}/awards`, 'lba_0123456789abcdef_' + 'x'.repeat(32), award), { status: 401, body: { code: 'invalid_token' } })
  const res = await ctx.admin.inject({ method: 'POST', url: `/admin/v1/servers/${A}/awards`, headers: { authorization: 'Basic abc' }, payload: award })
  t.equal(res.json().code, 'missing_token')

  const onlyA = await ctx.token([A], ['write'])
  t.equal((await call(ctx, 'POST', `/servers/${A}/awards`, onlyA, award)).status, 200)
  t.match(await call(ctx, 'POST', `/servers/${B}/awards`, onlyA, award), { status: 403, body: { code: 'forbidden', message: /server 6100000000000000002/ } })
  t.match(await call(ctx, 'GET', `/servers/${A}/keys`, onlyA), { status: 403, body: { code: 'forbidden', message: /scope keys/ } })
  t.match(await call(ctx, 'GET', `/servers/${A}/export?format=csv`, onlyA), { status: 403, body: { message: /scope transfer/ } })
  const keysOnly = await ctx.token('*', ['keys'])
  t.match(await call(ctx, 'PUT', `/servers/${A}/settings`, keysOnly, { xp_multiplier: 2 }), { status: 403 })
  t.equal((await ctx.writer.redis.zcard(ctx.keys.guild(B).board)), 0, 'nothing written on the refused server')
})

t.test('a revoked or rotated token is refused within the lookup cache\'s time (at most 5 s)', async (t) => {
  const ctx = await buildAdmin(t, { apiKeyCacheTtlMs: TTL })
  const a = await ctx.tokens.create({ name: 'bot', servers: [A], scopes: ['write'] })
  const b = await ctx.tokens.create({ name: 'other', servers: [A], scopes: ['write'] })
  const get = async (token: string) => (await call(ctx, 'GET', `/servers/${A}/settings`, token)).status
  t.equal(await get(a.token), 200)
  t.equal(await get(b.token), 200)
  await ctx.tokens.revoke(a.id)
  const rotated = await ctx.tokens.rotate(b.id)
  await sleep(TTL + 50)
  t.equal(await get(a.token), 401, 'revoked')
  t.equal(await get(b.token), 401, 'the secret before the rotation')
  t.equal(await get(rotated.token), 200, 'the new secret')
})

t.test('failed bearer attempts count against the failed-authentication limit (429 past it)', async (t) => {
  const ctx = await buildAdmin(t, { authFailureLimit: 3 })
  for (let i = 0; i < 3; i++) t.equal((await call(ctx, 'GET', `/servers/${A}/settings`, `lba_${i}`)).status, 401)
  const refused = await call(ctx, 'GET', `/servers/${A}/settings`, 'lba_again')
  t.equal(refused.status, 429)
  t.equal(refused.body.code, 'rate_limited')
  t.ok(Number(refused.headers['retry-after']) >= 1)
})

t.test('POST awards: multiplied awards with each member\'s xp, gain, level and level-up, in order', async (t) => {
  const ctx = await buildAdmin(t)
  const token = await ctx.token()
  await ctx.writer.configureGuild(A, { multiplier: '1.5' })
  await ctx.writer.setXp({ guildId: A, userId: '2', xp: 90 })
  const res = await call(ctx, 'POST', `/servers/${A}/awards`, token, {
    awards: [{ user_id: '1', xp: 10, username: 'ann' }, { user_id: '2', xp: 10 }, { user_id: '1', xp: 100 }]
  })
  t.equal(res.status, 200)
  t.same(res.body.results, [
    { user_id: '1', xp: 15, gained: 15, level: 0, leveled_up: false, applied: true },
    { user_id: '2', xp: 105, gained: 15, level: 1, leveled_up: true, applied: true },
    { user_id: '1', xp: 165, gained: 150, level: 1, leveled_up: true, applied: true }
  ])
  const member = await ctx.app.inject({ url: `/api/v1/servers/${A}/members/1`, headers: { 'x-api-key': (await ctx.apiKeys.create({ guildId: A, plan: 'free' })).key } })
  t.match(member.json(), { username: 'ann', xp: 165 })
})

t.test('POST awards: an award whose op_id was applied by an earlier request answers its first result with "replayed": true', async (t) => {
  const ctx = await buildAdmin(t)
  const token = await ctx.token()
  const award = { user_id: '1', xp: 150, op_id: '1310000000000000001' }
  const first = await call(ctx, 'POST', `/servers/${A}/awards`, token, { awards: [award] })
  t.same(first.body.results, [{ user_id: '1', xp: 150, gained: 150, level: 1, leveled_up: true, applied: true }])
  const again = await call(ctx, 'POST', `/servers/${A}/awards`, token, { awards: [award, { user_id: '2', xp: 5 }] })
  t.equal(again.headers['idempotent-replayed'], undefined, 'another request, not an Idempotency-Key replay')
  t.same(again.body.results, [
    { user_id: '1', xp: 150, gained: 150, level: 1, leveled_up: true, applied: true, replayed: true },
    { user_id: '2', xp: 5, gained: 5, level: 0, leveled_up: false, applied: true }
  ])
  t.equal(Number(await ctx.redis.zscore(ctx.keys.guild(A).board, boardMember('1'))), 150, 'applied once')
})

t.test('a batch with one bad item is 400 invalid_parameter naming its index, and applies nothing', async (t) => {
  const ctx = await buildAdmin(t)
  const token = await ctx.token()
  const good = { user_id: '1', xp: 10 }
  for (const [what, bad, index] of [
    ['xp 0', { user_id: '2', xp: 0 }, 2],
    ['a bad user id', { user_id: '012', xp: 5 }, 1],
    ['a control character in the name', { user_id: '3', xp: 5, username: 'a\u0007b' }, 2],
    ['xp over the largest award', { user_id: '3', xp: 1_000_001 }, 1]
  ] as const) {
    const awards = index === 1 ? [good, bad, good] : [good, good, bad]
    const res = await call(ctx, 'POST', `/servers/${A}/awards`, token, { awards })
    t.equal(res.status, 400, what)
    t.equal(res.body.code, 'invalid_parameter', what)
    t.match(res.body.message, new RegExp(`awards(/|\\[)${index}`), `${what}: ${res.body.message as string}`)
  }
  t.equal((await call(ctx, 'POST', `/servers/${A}/awards`, token, { awards: [{ user_id: 'x1', xp: 5 }] })).body.message,
    'awards/0/user_id must be a decimal id of 1 to 20 digits without a leading zero')
  t.equal((await call(ctx, 'POST', `/servers/${A}/awards`, token, { awards: [] })).status, 400)
  const many = Array.from({ length: 1001 }, (_, i) => ({ user_id: String(i + 1), xp: 1 }))
  t.equal((await call(ctx, 'POST', `/servers/${A}/awards`, token, { awards: many })).status, 400, 'more than 1,000')
  t.equal(await ctx.redis.exists(ctx.keys.guild(A).board), 0, 'nothing applied')
})

t.test('PUT and DELETE a member; a name alone for a non-member is 404; DELETE of a non-member is 404', async (t) => {
  const ctx = await buildAdmin(t)
  const token = await ctx.token()
  const put = await call(ctx, 'PUT', `/servers/${A}/members/7`, token, { xp: 1000, username: 'zed' })
  t.equal(put.status, 200)
  t.match(put.body, { user_id: '7', username: 'zed', xp: 1000, level: 4, rank: 1 })
  t.match((await call(ctx, 'PUT', `/servers/${A}/members/7`, token, { username: 'zoe' })).body, { username: 'zoe', xp: 1000 })
  t.match(await call(ctx, 'PUT', `/servers/${A}/members/8`, token, { username: 'nobody' }), { status: 404, body: { code: 'member_not_found' } })
  t.equal((await call(ctx, 'PUT', `/servers/${A}/members/7`, token, {})).status, 400, 'nothing to set')
  const removed = await call(ctx, 'DELETE', `/servers/${A}/members/7`, token)
  t.equal(removed.status, 204)
  t.equal(removed.raw, '')
  t.match(await call(ctx, 'DELETE', `/servers/${A}/members/7`, token), { status: 404, body: { code: 'member_not_found' } })
})

t.test('a daily claim twice the same UTC day is 409 daily_already_claimed with the next claim time and retry-after', async (t) => {
  const ctx = await buildAdmin(t)
  const token = await ctx.token()
  await ctx.writer.setXp({ guildId: A, userId: '9', xp: 40 })
  const first = await call(ctx, 'POST', `/servers/${A}/members/9/daily`, token, { username: 'dee' })
  t.equal(first.status, 200)
  t.match(first.body, { daily_streak: 1, xp: 40, gained: 0 })
  t.ok(Math.abs(Date.parse(first.body.last_daily_claim) - Date.now()) < 60_000)
  const asked = Date.now()
  const second = await call(ctx, 'POST', `/servers/${A}/members/9/daily`, token, {})
  const answered = Date.now()
  t.equal(second.status, 409)
  t.equal(second.body.code, 'daily_already_claimed')
  const next = Date.parse(second.body.next_claim_at)
  t.equal(next % (24 * 3600 * 1000), 0, 'a UTC midnight')
  t.ok(next > answered)
  // Whole seconds until then, as counted at some moment while the request was answered.
  const retryAfter = Number(second.headers['retry-after'])
  t.ok(retryAfter >= Math.ceil((next - answered) / 1000) && retryAfter <= Math.ceil((next - asked) / 1000),
    `retry-after: until then (${retryAfter} s, asked ${Math.ceil((next - asked) / 1000)} s before)`)
})

t.test('settings: GET and PUT the curve and multiplier', async (t) => {
  const ctx = await buildAdmin(t)
  const token = await ctx.token()
  t.match((await call(ctx, 'GET', `/servers/${A}/settings`, token)).body, { xp_curve: 'mee6', xp_multiplier: 1 })
  t.match((await call(ctx, 'PUT', `/servers/${A}/settings`, token, { xp_curve: 'flat', xp_multiplier: 0.29 })).body, { xp_curve: 'flat', xp_multiplier: 0.29 })
  t.match((await call(ctx, 'PUT', `/servers/${A}/settings`, token, { xp_multiplier: 2 })).body, { xp_curve: 'flat', xp_multiplier: 2 })
  t.equal((await call(ctx, 'PUT', `/servers/${A}/settings`, token, { xp_curve: 'steep' })).status, 400)
  t.equal((await call(ctx, 'PUT', `/servers/${A}/settings`, token, { xp_multiplier: 0.001 })).status, 400)
})

t.test('settings: the whole object with its defaults; a PUT changes the fields it names and keeps the others', async (t) => {
  const ctx = await buildAdmin(t)
  const token = await ctx.token()
  t.same((await call(ctx, 'GET', `/servers/${A}/settings`, token)).body, {
    xp_curve: 'mee6',
    xp_multiplier: 1,
    custom_curve: null,
    season: { every: 'none', timezone: 'UTC' },
    season_retention: 12,
    history_days: 30,
    cooldown_seconds: 0,
    daily_xp_cap: 0,
    multipliers: { roles: {}, channels: {}, stacking: 'highest' },
    boosts: [],
    role_rewards: [],
    role_rewards_mode: 'stack',
    name: null,
    icon_url: null,
    public: { enabled: false, slug: null }
  })
  const changed = await call(ctx, 'PUT', `/servers/${A}/settings`, token, {
    season: { every: 'week', timezone: 'europe/paris' },
    multipliers: { roles: { 11: 2, 12: 0.5 } },
    boosts: [{ multiplier: 2, starts_at: '2026-12-05T00:00:00Z', ends_at: '2026-12-07T00:00:00Z' }],
    role_rewards: [{ level: 10, role_id: '21' }, { level: 5, role_id: '20' }]
  })
  t.equal(changed.status, 200)
  t.match(changed.body, {
    xp_curve: 'mee6',
    season: { every: 'week', timezone: 'Europe/Paris' },
    multipliers: { roles: { 11: 2, 12: 0.5 }, channels: {}, stacking: 'highest' },
    boosts: [{ multiplier: 2, starts_at: '2026-12-05T00:00:00.000Z', ends_at: '2026-12-07T00:00:00.000Z' }],
    role_rewards: [{ level: 5, role_id: '20' }, { level: 10, role_id: '21' }]
  }, 'the time zone in its canonical spelling, role rewards by level')
  const stacking = await call(ctx, 'PUT', `/servers/${A}/settings`, token, { multipliers: { stacking: 'multiply' } })
  t.same(stacking.body.multipliers, { roles: { 11: 2, 12: 0.5 }, channels: {}, stacking: 'multiply' }, 'a partial map keeps the rest')
  for (const [body, field] of [
    [{ season: { timezone: 'Mars/Olympus' } }, /season\.timezone/],
    [{ boosts: [{ multiplier: 2, starts_at: '2026-12-07T00:00:00Z', ends_at: '2026-12-05T00:00:00Z' }] }, /ends_at must be after starts_at/],
    [{ role_rewards: [{ level: 5, role_id: '20' }, { level: 6, role_id: '20' }] }, /given twice/],
    [{ xp_curve: 'custom' }, /custom_curve/],
    [{ custom_curve: [100, 100] }, /strictly increasing/]
  ] as const) {
    const refused = await call(ctx, 'PUT', `/servers/${A}/settings`, token, body)
    t.equal(refused.status, 400, JSON.stringify(body))
    t.match(refused.body.message, field)
  }
  t.same((await call(ctx, 'GET', `/servers/${A}/settings`, token)).body, stacking.body, 'a refused change changes nothing')
})

t.test('Idempotency-Key: the same key and body apply once and answer the first response; another body is 422', async (t) => {
  const ctx = await buildAdmin(t)
  const token = await ctx.token()
  const body = { awards: [{ user_id: '1', xp: 100 }, { user_id: '2', xp: 5 }] }
  const first = await call(ctx, 'POST', `/servers/${A}/awards`, token, body, { 'idempotency-key': 'award-42' })
  const again = await call(ctx, 'POST', `/servers/${A}/awards`, token, body, { 'idempotency-key': 'award-42' })
  t.equal(again.status, 200)
  t.equal(again.raw, first.raw)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(Number(await ctx.redis.zscore(ctx.keys.guild(A).board, '99999999999999999998')), 100, 'applied once')
  const other = await call(ctx, 'POST', `/servers/${A}/awards`, token, { awards: [{ user_id: '1', xp: 1 }] }, { 'idempotency-key': 'award-42' })
  t.equal(other.status, 422)
  t.equal(other.body.code, 'idempotency_key_reused')
  t.equal((await call(ctx, 'POST', `/servers/${A}/awards`, token, body, { 'idempotency-key': 'bad key!' })).status, 400)
  // A refusal is answered again too, and DELETE's empty 204.
  await ctx.writer.setXp({ guildId: A, userId: '5', xp: 1 })
  const del = await call(ctx, 'DELETE', `/servers/${A}/members/5`, token, undefined, { 'idempotency-key': 'del-5' })
  const delAgain = await call(ctx, 'DELETE', `/servers/${A}/members/5`, token, undefined, { 'idempotency-key': 'del-5' })
  t.same([del.status, delAgain.status], [204, 204])
  const daily = await call(ctx, 'POST', `/servers/${A}/members/3/daily`, token, {}, { 'idempotency-key': 'daily-3' })
  t.equal((await call(ctx, 'POST', `/servers/${A}/members/3/daily`, token, {}, { 'idempotency-key': 'daily-3' })).raw, daily.raw, 'a retried claim is not a second claim')
})

t.test('Idempotency-Key: a first request cut off after its body was sent is applied once; the retry gets its answer', async (t) => {
  const ctx = await buildAdmin(t)
  const token = await ctx.token()
  const address = await ctx.admin.listen({ port: 0, host: '127.0.0.1' })
  const { port } = new URL(address)
  const body = JSON.stringify({ awards: [{ user_id: '11', xp: 70 }] })
  const socket = connect(Number(port), '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
  // The whole request sent, then the connection cut once the service has taken the request up,
  // before the client reads any answer: a client timing out. (A client that half-closes its
  // side at once may find its request dropped unread, as Node drops it; the retry then applies it.)
  socket.write(`POST /admin/v1/servers/${A}/awards HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\n` +
    `content-type: application/json\r\nidempotency-key: cut-1\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
  const stored = ctx.keys.idempotency((await ctx.tokens.list())[0]?.id ?? '', 'cut-1')
  for (let i = 0; i < 500 && await ctx.redis.exists(stored) === 0; i++) await sleep(10)
  socket.destroy()
  t.equal(await ctx.redis.exists(stored), 1, 'the first request reached the service')
  const retry = await fetch(`${address}/admin/v1/servers/${A}/awards`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'cut-1' }, body
  })
  t.equal(retry.status, 200)
  t.equal(retry.headers.get('idempotent-replayed'), 'true')
  t.same(((await retry.json()) as { results: unknown }).results, [{ user_id: '11', xp: 70, gained: 70, level: 0, leveled_up: false, applied: true }])
  t.equal(Number(await ctx.redis.zscore(ctx.keys.guild(A).board, '99999999999999999988')), 70, 'applied once')
})

t.test('API keys end to end over HTTP: create, use, change, rotate, revoke', async (t) => {
  const ctx = await buildAdmin(t, { apiKeyCacheTtlMs: TTL })
  const token = await ctx.token([A], ['keys'])
  const read = async (key: string) => (await ctx.app.inject({ url: `/api/v1/servers/${A}/stats`, headers: { 'x-api-key': key } })).statusCode

  const created = await call(ctx, 'POST', `/servers/${A}/keys`, token, { plan: 'starter', name: 'dashboard' })
  t.equal(created.status, 201)
  t.match(created.body, { name: 'dashboard', plan: 'starter', servers: [A], expires_at: null, revoked_at: null, key: /^lbk_/ })
  const { id, key } = created.body as { id: string, key: string }
  t.equal(await read(key), 200, 'the new key reads its server')

  const list = await call(ctx, 'GET', `/servers/${A}/keys`, token)
  t.same(list.body.data.map((k: { id: string }) => k.id), [id])
  t.notOk(list.raw.includes(key) || list.raw.includes('hash'), 'never a secret')

  const expires = new Date(Date.now() + 3600_000).toISOString()
  t.match((await call(ctx, 'PATCH', `/keys/${id}`, token, { plan: 'professional', expires_at: expires, name: null })).body,
    { plan: 'professional', expires_at: expires, name: null })
  await sleep(TTL + 50)
  const counted = await ctx.app.inject({ url: `/api/v1/servers/${A}/stats`, headers: { 'x-api-key': key } })
  t.equal(counted.headers['x-ratelimit-limit'], '10000', 'the new plan applies')

  const rotated = await call(ctx, 'POST', `/keys/${id}/rotate`, token)
  t.equal(rotated.status, 200)
  t.equal(rotated.body.id, id)
  await sleep(TTL + 50)
  t.equal(await read(key), 401, 'the old secret is refused')
  t.equal(await read(rotated.body.key), 200, 'the new one reads')

  t.equal((await call(ctx, 'DELETE', `/keys/${id}`, token)).status, 204)
  await sleep(TTL + 50)
  t.equal(await read(rotated.body.key), 401, 'revoked')
  t.match(await call(ctx, 'POST', `/keys/${id}/rotate`, token), { status: 409, body: { code: 'api_key_inactive' } })
  t.match(await call(ctx, 'DELETE', '/keys/0123456789abcdef', token), { status: 404, body: { code: 'api_key_not_found' } })
  t.equal((await call(ctx, 'PATCH', '/keys/nothex', token, { plan: 'free' })).status, 400)
})

t.test('API keys: a key of several or every server needs a token that has them all', async (t) => {
  const ctx = await buildAdmin(t)
  const onlyA = await ctx.token([A], ['keys'])
  const every = await ctx.token('*', ['keys'])
  t.match(await call(ctx, 'POST', `/servers/${A}/keys`, onlyA, { plan: 'free', servers: [A, B] }), { status: 403 })
  t.match(await call(ctx, 'POST', `/servers/${A}/keys`, onlyA, { plan: 'free', servers: '*' }), { status: 403 })
  const wide = await call(ctx, 'POST', `/servers/${A}/keys`, every, { plan: 'free', servers: [A, B] })
  t.equal(wide.status, 201)
  t.same(wide.body.servers, [A, B])
  t.match(await call(ctx, 'DELETE', `/keys/${wide.body.id as string}`, onlyA), { status: 403 }, 'a key reading B is not onlyA\'s to revoke')
  t.ok((await call(ctx, 'GET', `/servers/${A}/keys`, onlyA)).body.data.some((k: { id: string }) => k.id === wide.body.id), 'listed under A')
  t.equal((await call(ctx, 'POST', `/servers/${A}/keys`, every, { plan: 'free', expires_at: '2020-01-01T00:00:00Z' })).status, 400, 'an expiry in the past')
})

t.test('import: a bad row is skipped and reported, or with strict=true refuses the whole file (422) and writes nothing', async (t) => {
  const ctx = await buildAdmin(t)
  const token = await ctx.token('*', ['transfer'])
  const csv = 'user_id,username,xp\n1,ann,100\nnope,bob,5\n3,cy,300\n'
  const send = async (url: string, payload: string, type = 'text/csv') => await ctx.admin.inject({
    method: 'POST', url: `/admin/v1${url}`, headers: { authorization: `Bearer ${token}`, 'content-type': type }, payload
  })
  const strict = await send(`/servers/${A}/import?format=csv&strict=true`, csv)
  t.equal(strict.statusCode, 422)
  t.equal(strict.json().code, 'import_refused')
  t.equal(await ctx.redis.exists(ctx.keys.guild(A).board), 0, 'nothing written')
  const lenient = await send(`/servers/${A}/import?format=csv`, csv)
  t.equal(lenient.statusCode, 200)
  t.match(lenient.json(), { imported: 2, skipped: [{ line: 3, reason: /user id/ }] })
  const mee6 = await send(`/servers/${B}/import?format=mee6`, JSON.stringify({ players: [{ id: '4', username: 'dee', xp: 40 }, { id: 5, xp: -1 }] }), 'application/json')
  t.match(mee6.json(), { imported: 1, skipped: [{ index: 1 }] })
  t.match((await send(`/servers/${B}/import?format=mee6`, '{not json')).json(), { statusCode: 400, code: 'invalid_import_file' })
  const headerless = await send(`/servers/${B}/import?format=csv`, 'id,name\n1,x\n')
  t.match(headerless.json(), { statusCode: 400, code: 'invalid_import_file' }, 'a CSV without the columns')
  t.equal((await send(`/servers/${B}/import?format=xml`, csv)).statusCode, 400, 'an unknown format')

  const exported = await ctx.admin.inject({ url: `/admin/v1/servers/${A}/export?format=csv`, headers: { authorization: `Bearer ${token}` } })
  t.equal(exported.statusCode, 200)
  t.match(exported.headers['content-type'], /^text\/csv/)
  t.equal(exported.body, 'user_id,username,xp,level,daily_streak,last_daily_claim,xp_curve,xp_multiplier\n3,cy,300,2,0,,mee6,1\n1,ann,100,1,0,,mee6,1\n')
  // An export imported into another server brings its settings, unless keep_settings.
  await ctx.writer.configureGuild(A, { curve: 'flat' })
  const again = await ctx.admin.inject({ url: `/admin/v1/servers/${A}/export?format=csv`, headers: { authorization: `Bearer ${token}` } })
  t.match((await send(`/servers/${B}/import?format=csv`, again.body)).json(), { imported: 2, skipped: [], settings: { xp_curve: 'flat', xp_multiplier: 1 } })
  t.match((await send(`/servers/${B}/import?format=csv&keep_settings=true`, again.body)).json(), { settings: null })
  const lines = await ctx.admin.inject({ url: `/admin/v1/servers/${A}/export?format=jsonl`, headers: { authorization: `Bearer ${token}` } })
  t.match(JSON.parse(lines.body.split('\n')[0] ?? ''), { user_id: '3', xp: 300 })
})

t.test('the public port serves no write: every write path of the write API is 404 there, and changes nothing', async (t) => {
  const ctx = await buildAdmin(t)
  const token = await ctx.token()
  const key = (await ctx.apiKeys.create({ servers: '*', plan: 'professional' })).key
  const routes = ctx.admin.printRoutes({ commonPrefix: false })
  const writes: Array<[string, string]> = [
    ['POST', `/servers/${A}/awards`], ['PUT', `/servers/${A}/members/1`], ['DELETE', `/servers/${A}/members/1`],
    ['POST', `/servers/${A}/members/1/daily`], ['GET', `/servers/${A}/settings`], ['PUT', `/servers/${A}/settings`],
    ['GET', `/servers/${A}/keys`], ['POST', `/servers/${A}/keys`], ['PATCH', '/keys/0123456789abcdef'],
    ['POST', '/keys/0123456789abcdef/rotate'], ['DELETE', '/keys/0123456789abcdef'],
    ['POST', `/servers/${A}/import?format=csv`], ['GET', `/servers/${A}/export`]
  ]
  t.ok(routes.includes('/admin/v1/servers/:guild_id/awards'), 'the list names the write routes')
  for (const [method, path] of writes) {
    for (const prefix of ['/admin/v1', '/api/v1']) {
      const res = await ctx.app.inject({
        method: method as 'GET',
        url: `${prefix}${path}`,
        payload: method === 'GET' || method === 'DELETE' ? undefined : { awards: [{ user_id: '1', xp: 5 }], xp: 5, plan: 'free' },
        headers: { authorization: `Bearer ${token}`, 'x-api-key': key }
      })
      t.equal(res.statusCode, 404, `public port: ${method} ${prefix}${path}`)
    }
  }
  t.equal(await ctx.redis.exists(ctx.keys.guild(A).board, ctx.keys.guild(A).settings), 0, 'nothing changed')
})

t.test('an unauthenticated request to the write API changes nothing', async (t) => {
  const ctx = await buildAdmin(t)
  for (const [method, url, payload] of [
    ['POST', `/servers/${A}/awards`, { awards: [{ user_id: '1', xp: 5 }] }], ['PUT', `/servers/${A}/members/1`, { xp: 5 }],
    ['PUT', `/servers/${A}/settings`, { xp_curve: 'flat' }], ['POST', `/servers/${A}/keys`, { plan: 'free' }]
  ] as const) {
    t.equal((await call(ctx, method, url, undefined, payload)).status, 401)
  }
  t.equal(await ctx.redis.exists(ctx.keys.guild(A).board, ctx.keys.guild(A).settings, ctx.keys.guild(A).apiKeys), 0)
})
