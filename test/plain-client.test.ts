// The library on a client it did not create: a bot that hands `new Redis(url)` to the writer,
// the reader or the key store gets working scripts, not "awardXp is not a function".
import t from 'tap'
import { Redis } from 'ioredis'
import { redisFixture } from './helpers/redis-server.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'

const { server } = await redisFixture(t, 'plain')
const keys = new KeyBuilder('plain')

function plainClient (): Redis {
  const client = new Redis(server.url)
  t.teardown(() => { client.disconnect() })
  return client
}

t.test('a writer given a plain ioredis client writes', async (t) => {
  const writer = new LeaderboardWriter(plainClient(), keys)
  t.match(await writer.awardXp({ guildId: '1', userId: '2', xp: 150, username: 'ada' }), { gained: 150, xp: 150 })
  t.equal(await writer.setXp({ guildId: '1', userId: '3', xp: 40 }), 0)
})

t.test('a reader given a plain ioredis client reads what was written', async (t) => {
  const reader = new LeaderboardReader(plainClient(), keys)
  t.match(await reader.page('1', 1, 10), { total: 2, data: [{ rank: 1, user_id: '2', username: 'ada', xp: 150 }, { rank: 2, user_id: '3' }] })
  t.match(await reader.member('1', '3'), { rank: 2, xp: 40 })
})

t.test('a key store given a plain ioredis client creates and checks keys', async (t) => {
  const store = new ApiKeyStore(plainClient(), keys)
  const created = await store.create({ guildId: '1', plan: 'free' })
  t.match(await store.check(created.key), { status: 'ok', guildId: '1', plan: 'free' })
})

t.test('defining the scripts again on the same client is harmless', async (t) => {
  const client = plainClient()
  const writer = new LeaderboardWriter(client, keys)
  const defined = client.awardXp
  const again = new LeaderboardWriter(client, keys)
  new LeaderboardReader(client, keys) // eslint-disable-line no-new
  t.equal(client.awardXp, defined, 'the command is defined once')
  await writer.awardXp({ guildId: '4', userId: '5', xp: 1 })
  t.match(await again.awardXp({ guildId: '4', userId: '5', xp: 1 }), { gained: 1, xp: 2 })
})
