import t from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { createRedis } from '../src/redis/client.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { KeyBuilder } from '../src/redis/keys.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })
const redis = createRedis({ url: server.url, offlineQueue: true })
t.teardown(() => { redis.disconnect() })
const writer = new LeaderboardWriter(redis, new KeyBuilder('t'))

t.test('award', async (t) => {
  const r = await writer.awardXp({ guildId: '1', userId: '99', xp: 150, username: 'bob' })
  t.same(r, { gained: 150, xp: 150 })
  t.same(await redis.hgetall('t:{1}:stats'), {})
})
