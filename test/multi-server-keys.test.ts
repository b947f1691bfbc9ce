// Keys beyond one server (CONTRACT part 3): a key for a list of servers or for every server reads
// those and no other (403), keeps one rate-limit count, and GET /api/v1/me tells what it is.
import t from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
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
