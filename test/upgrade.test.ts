// Upgrading in place: a service started on data an older release wrote (schema 1: names, streaks
// and claims in hashes keyed by user_id, no data version) moves it before serving, and answers
// exactly what that data meant.
import t from 'tap'
import { Redis } from 'ioredis'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import { boardMember, KeyBuilder } from '../src/redis/keys.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'
import { createRedis } from '../src/redis/client.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const GUILD = '1400000000000000001'
const DAY = 86_400_000

t.test('a service started on schema-1 data migrates it first and serves what it meant', async (t) => {
  const prefix = `up${process.pid}`
  const raw = new Redis(server.url)
  t.teardown(() => { raw.disconnect() })
  const base = `${prefix}:{${GUILD}}`
  const now = Number((await raw.time())[0]) * 1000
  // What the earlier release wrote for three members: named and claimed yesterday, named, neither.
  await raw.zadd(`${base}:board`, 300, boardMember('7'), 150, boardMember('99'), 0, boardMember('100'))
  await raw.hset(`${base}:names`, '7', 'Ada', '99', 'Lin')
  await raw.hset(`${base}:streaks`, '7', '4')
  await raw.hset(`${base}:claims`, '7', String(now - DAY))
  await raw.hset(`${base}:stats`, 'xp_total', 450, 'members_with_xp', 2, 'level_sum:mee6', 3, 'level_sum:linear', 4, 'level_sum:flat', 0)

  const admin = createRedis({ url: server.url, offlineQueue: true })
  t.teardown(() => { admin.disconnect() })
  const { key } = await new ApiKeyStore(admin, new KeyBuilder(prefix)).create({ guildId: GUILD, plan: 'starter' })
  const { app } = await buildTestApp(t, server.url, { redisPrefix: prefix })

  const page = await app.inject({ url: `/api/v1/servers/${GUILD}/leaderboard`, headers: { 'x-api-key': key } })
  t.same(page.json().data, [
    { rank: 1, user_id: '7', username: 'Ada', display_name: null, avatar_url: null, level: 2, xp: 300, level_progress: { xp: 45, required: 220 }, rank_change: null },
    { rank: 2, user_id: '99', username: 'Lin', display_name: null, avatar_url: null, level: 1, xp: 150, level_progress: { xp: 50, required: 155 }, rank_change: null },
    { rank: 3, user_id: '100', username: '100', display_name: null, avatar_url: null, level: 0, xp: 0, level_progress: { xp: 0, required: 100 }, rank_change: null }
  ])
  const member = await app.inject({ url: `/api/v1/servers/${GUILD}/members/7`, headers: { 'x-api-key': key } })
  t.match(member.json(), { username: 'Ada', rank: 1, daily_streak: 4, last_daily_claim: new Date(now - DAY).toISOString() })
  t.match(page.headers.etag, /^"\d+-/, 'an ETag from the data version the migration set')
  t.equal(await raw.get(`${prefix}:schema`), '2')
  t.equal(await raw.exists(`${base}:names`, `${base}:streaks`, `${base}:claims`), 0, 'the old hashes are gone')
})
