// Keys beyond one server (CONTRACT part 3): a key for a list of servers or for every server reads
// those and no other (403), keeps one rate-limit count, and GET /api/v1/me tells what it is; its
// servers can be changed (part 4), a server taken away refused everywhere within 5 s.
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import { buildTestAdmin } from './helpers/admin.js'
import { SseReader } from './helpers/sse.js'
import { LeaderboardClient } from '../src/client/index.js'
import { InvalidParameterError } from '../src/errors.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const [A, B, C] = ['5100000000000000001', '5100000000000000002', '5100000000000000003']

async function status (app: Awaited<ReturnType<typeof buildTestApp>>['app'], url: string, key: string) {
  const res = await app.inject({ url, headers: { 'x-api-key': key } })
  return { status: res.statusCode, body: res.json(), headers: res.headers }
}

t.test('a key for a list of servers reads a listed server and gets 403 forbidden on an unlisted one', async (t) => {
  const { app, apiKeys, writer } = await buildTestApp(t, server.url)
  await writer.setXp({ guildId: A, userId: '1', xp: 100 })
  await writer.setXp({ guildId: B, userId: '2', xp: 200 })
  const { key, guildId, servers } = await apiKeys.create({ servers: [A, B], plan: 'starter' })
  t.equal(guildId, null)
  t.same(servers, [A, B])
  t.equal((await status(app, `/api/v1/servers/${A}/leaderboard`, key)).body.data[0].user_id, '1')
  t.equal((await status(app, `/api/v1/servers/${B}/stats`, key)).body.total_xp, 200)
  const other = await status(app, `/api/v1/servers/${C}/leaderboard`, key)
  t.equal(other.status, 403)
  t.equal(other.body.code, 'forbidden')
  t.equal(other.headers['x-ratelimit-remaining'], '997', 'the three requests share the one key\'s count')
})

t.test('a key for every server reads any server', async (t) => {
  const { app, apiKeys, writer } = await buildTestApp(t, server.url)
  await writer.setXp({ guildId: C, userId: '3', xp: 300 })
  const { key } = await apiKeys.create({ servers: '*', plan: 'free' })
  t.equal((await status(app, `/api/v1/servers/${C}/stats`, key)).body.total_xp, 300)
  t.equal((await status(app, '/api/v1/servers/1/leaderboard', key)).status, 200)
})

t.test('GET /api/v1/me answers the key\'s id, name, plan, servers and expiry, and is counted', async (t) => {
  const { app, apiKeys } = await buildTestApp(t, server.url)
  const one = await apiKeys.create({ guildId: A, plan: 'free', name: 'bot' })
  const list = await apiKeys.create({ servers: [B, A], plan: 'starter', expiresInSeconds: 3600 })
  const every = await apiKeys.create({ servers: '*', plan: 'professional' })

  const me = await status(app, '/api/v1/me', one.key)
  t.equal(me.status, 200)
  t.same(me.body, { key_id: one.id, name: 'bot', plan: 'free', servers: [A], expires_at: null })
  t.equal(me.headers['x-ratelimit-remaining'], '99')
  t.same((await status(app, '/api/v1/me', list.key)).body,
    { key_id: list.id, name: null, plan: 'starter', servers: [B, A], expires_at: list.expiresAt?.toISOString() })
  t.equal((await status(app, '/api/v1/me', every.key)).body.servers, '*')
  const none = await app.inject({ url: '/api/v1/me' })
  t.equal(none.statusCode, 401)
  t.equal(none.json().code, 'missing_api_key')

  // The typed client's me().
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const client = new LeaderboardClient({ baseUrl: `${base}/api/v1`, apiKey: list.key })
  t.same((await client.me()).data.servers, [B, A])
})

t.test('list() of a server holds its own keys, the lists naming it and the keys of every server', async (t) => {
  const { apiKeys } = await buildTestApp(t, server.url)
  const g = '5200000000000000001'
  const own = await apiKeys.create({ guildId: g, plan: 'free' })
  const listed = await apiKeys.create({ servers: [g, A], plan: 'free' })
  const elsewhere = await apiKeys.create({ servers: [B, C], plan: 'free' })
  const every = await apiKeys.create({ servers: '*', plan: 'free' })
  const ids = (await apiKeys.list(g)).map((info) => info.id)
  t.same(ids.sort(), [own.id, listed.id, every.id].sort())
  t.notOk(ids.includes(elsewhere.id))
})

t.test('create() refuses an empty list, a bad id, more than 1,000 servers, or a server and a list at once', async (t) => {
  const { apiKeys } = await buildTestApp(t, server.url)
  const many = Array.from({ length: 1001 }, (_, i) => String(1000 + i))
  for (const servers of [[], ['01'], many, 'all']) {
    await t.rejects(apiKeys.create({ servers: servers as string[], plan: 'free' }), InvalidParameterError, JSON.stringify(servers).slice(0, 40))
  }
  await t.rejects(apiKeys.create({ guildId: A, servers: [B], plan: 'free' }), InvalidParameterError)
  t.equal((await apiKeys.create({ servers: many.slice(0, 1000), plan: 'free' })).servers.length, 1000)
})

t.test('PATCH /admin/v1/keys/{id} with servers: a server taken away refuses the key (403) within 5 s on another instance, its open stream too', async (t) => {
  const ctx = await buildTestAdmin(t, server.url) // the write API, and the read API on instance 1
  // Instance 2: another process's read API on the same data, with the default lookup cache (3 s).
  const other = await buildTestApp(t, server.url, { redisPrefix: ctx.config.redisPrefix })
  t.equal(other.config.apiKeyCacheTtlMs, 3000)
  const base = await other.app.listen({ port: 0, host: '127.0.0.1' })
  await ctx.writer.setXp({ guildId: A, userId: '1', xp: 100 })
  await ctx.writer.setXp({ guildId: B, userId: '2', xp: 200 })
  const { id, key } = await ctx.apiKeys.create({ servers: [A, B], plan: 'professional' })
  t.equal((await status(other.app, `/api/v1/servers/${B}/stats`, key)).status, 200, 'instance 2 has the key in its cache, with B')
  const stream = await SseReader.open(t, base, `/api/v1/servers/${B}/stats/stream`, { 'x-api-key': key })
  await stream.event(0)
  const changesBefore = Number(await ctx.redis.get(ctx.keys.apiKeyChanges()) ?? 0)

  const token = await ctx.token([A, B], ['keys'])
  const patched = await ctx.admin.inject({ method: 'PATCH', url: `/admin/v1/keys/${id}`, headers: { authorization: `Bearer ${token}` }, payload: { servers: [A] } })
  const changedAt = Date.now()
  t.equal(patched.statusCode, 200)
  t.same(patched.json().servers, [A])
  t.equal(Number(await ctx.redis.get(ctx.keys.apiKeyChanges())), changesBefore + 1, 'the key-changes counter moved: open streams check their keys again')
  t.equal(await ctx.redis.hget(ctx.keys.apiKey(id), 'guild_id'), A, 'a one-server record again')
  t.equal(await ctx.redis.hexists(ctx.keys.apiKey(id), 'servers'), 0)
  t.same((await ctx.apiKeys.list(B)).map((info) => info.id), [], 'no longer listed under B')
  t.same((await ctx.apiKeys.list(A)).map((info) => info.id), [id])

  // The contract's bound: whatever instance 2 had cached, by 5 s after the change it refuses.
  let last = 0
  do {
    last = (await status(other.app, `/api/v1/servers/${B}/stats`, key)).status
    if (last === 403) break
    await sleep(100)
  } while (Date.now() - changedAt < 5000)
  t.equal(last, 403, 'instance 2 refuses the key on B')
  t.equal((await status(other.app, `/api/v1/servers/${A}/stats`, key)).status, 200, 'and still serves it on A')
  t.equal((await status(ctx.app, `/api/v1/servers/${B}/stats`, key)).status, 403, 'instance 1 too')
  await stream.until(() => stream.ended, 'the stream on B to end', 5000)
  t.pass('the open stream on B ended')
})

t.test('PATCH servers needs a token that has every server of the old and the new list; one server to many and back to every server', async (t) => {
  const ctx = await buildTestAdmin(t, server.url)
  const patch = async (token: string, id: string, servers: unknown) => {
    const res = await ctx.admin.inject({ method: 'PATCH', url: `/admin/v1/keys/${id}`, headers: { authorization: `Bearer ${token}` }, payload: { servers } })
    return { status: res.statusCode, body: res.json() }
  }
  const onlyA = await ctx.token([A], ['keys'])
  const own = await ctx.apiKeys.create({ guildId: A, plan: 'free' })
  t.match(await patch(onlyA, own.id, [A, B]), { status: 403, body: { code: 'forbidden', message: /new list/ } }, 'a server the token lacks')
  t.match(await patch(onlyA, own.id, '*'), { status: 403 }, 'every server, with a token of one')
  t.same((await ctx.apiKeys.get(own.id))?.servers, [A], 'unchanged')
  const wide = await ctx.apiKeys.create({ servers: [A, C], plan: 'free' })
  t.match(await patch(onlyA, wide.id, [A]), { status: 403 }, 'the old list holds a server the token lacks')

  const every = await ctx.token('*', ['keys'])
  t.match(await patch(every, own.id, [A, B]), { status: 200, body: { servers: [A, B] } })
  t.equal((await status(ctx.app, `/api/v1/servers/${B}/stats`, own.key)).status, 200, 'reads B at once: not cached yet')
  t.same((await ctx.apiKeys.list(B)).map((info) => info.id), [own.id])
  t.match(await patch(every, own.id, '*'), { status: 200, body: { servers: '*' } })
  t.ok(await ctx.redis.sismember(ctx.keys.allServersApiKeys(), own.id))
  t.equal(await ctx.redis.sismember(ctx.keys.guild(B).apiKeys, own.id), 0, 'listed once, among the keys of every server')
  const info = await ctx.apiKeys.update(own.id, { servers: [C] })
  t.same([info.servers, info.guildId], [[C], C], 'the library: back to one server')
  t.equal(await ctx.redis.sismember(ctx.keys.allServersApiKeys(), own.id), 0)
  t.same((await ctx.apiKeys.list(A)).map((i) => i.id).includes(own.id), false)
  // A change cut off between its writes (Redis gone after the record, before the old servers'
  // lists): the record decides what a list shows, and the list is tidied when it is read.
  await ctx.redis.sadd(ctx.keys.guild(A).apiKeys, own.id)
  await ctx.redis.sadd(ctx.keys.allServersApiKeys(), own.id)
  t.same((await ctx.apiKeys.list(A)).map((i) => i.id).includes(own.id), false, 'a stale entry is not shown')
  t.equal(await ctx.redis.sismember(ctx.keys.guild(A).apiKeys, own.id), 0, 'and is gone from the server\'s list')
  t.equal(await ctx.redis.sismember(ctx.keys.allServersApiKeys(), own.id), 0, 'and from the list of keys of every server')
  t.same((await ctx.apiKeys.list(C)).map((i) => i.id).includes(own.id), true, 'where it belongs, it stays')
  t.equal(await ctx.redis.sismember(ctx.keys.guild(C).apiKeys, own.id), 1)
  await t.rejects(ctx.apiKeys.update(own.id, { servers: [] }), InvalidParameterError)
  t.match(await patch(every, own.id, ['012']), { status: 400, body: { message: 'servers/0 must be a decimal id of 1 to 20 digits without a leading zero' } })
})
