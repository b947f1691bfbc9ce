// A member's record and its extension (history index, display name, avatar URL): read by the
// service, kept by every write that rewrites the record (a rename, a daily claim, a bulk set
// of each kind), and never shown as part of the username.
import t from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import { parseRecord, usernameOfRecord } from '../src/redis/records.js'
import { boardMember } from '../src/redis/keys.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const G = '8100000000000000001'
const EXTENSION = '\x1f17\x1fNova the Bright\x1fhttps://cdn.example/a.png'

t.test('a record reads with and without its extension', async (t) => {
  t.same(parseRecord('3:1795333638035:Ada'), { streak: 3, lastClaim: 1795333638035, username: 'Ada', historyIndex: null, displayName: null, avatarUrl: null })
  t.same(parseRecord(`::Ada${EXTENSION}`), { streak: 0, lastClaim: null, username: 'Ada', historyIndex: 17, displayName: 'Nova the Bright', avatarUrl: 'https://cdn.example/a.png' })
  t.same(parseRecord('::\x1f\x1f\x1f'), { streak: 0, lastClaim: null, username: null, historyIndex: null, displayName: null, avatarUrl: null })
  t.same(parseRecord('::a:b\x1f4'), { streak: 0, lastClaim: null, username: 'a:b', historyIndex: 4, displayName: null, avatarUrl: null }, 'a colon in a name')
  t.equal(usernameOfRecord(`2:5:Ada${EXTENSION}`), 'Ada')
  t.equal(usernameOfRecord(`2:5:${EXTENSION}`), null)
  t.equal(usernameOfRecord('2:5:Ada'), 'Ada')
})

t.test('every write that rewrites a record keeps its extension', async (t) => {
  const { app, redis, keys, writer, apiKeys } = await buildTestApp(t, server.url)
  const k = keys.guild(G)
  const record = async (userId: string): Promise<string | null> => await redis.hget(k.members, boardMember(userId))
  const extend = async (userId: string): Promise<void> => {
    await redis.hset(k.members, boardMember(userId), `${(await record(userId)) ?? '::'}${EXTENSION}`)
  }
  for (const userId of ['1', '2', '3', '4', '5', '6']) await writer.awardXp({ guildId: G, userId, xp: 100, username: `user${userId}` })
  for (const userId of ['1', '2', '3', '4', '5', '6']) await extend(userId)

  await writer.awardXp({ guildId: G, userId: '1', xp: 5, username: 'renamed' })
  t.equal(await record('1'), `::renamed${EXTENSION}`, 'an award with a new username')
  const claim = await writer.claimDaily({ guildId: G, userId: '2' })
  t.equal(await record('2'), `1:${claim.claimedAt.getTime()}:user2${EXTENSION}`, 'a daily claim')
  const at = new Date('2026-11-01T00:00:00Z')
  await writer.bulkSetMembers(G, [
    { userId: '3', xp: 1, username: 'whole', daily: { streak: 4, lastClaim: at } },
    { userId: '4', xp: 2, username: 'named' },
    { userId: '5', xp: 3, daily: { streak: 2, lastClaim: at } },
    { userId: '6', xp: 4 }
  ])
  t.equal(await record('3'), `4:${at.getTime()}:whole${EXTENSION}`, 'a bulk set of a whole record')
  t.equal(await record('4'), `::named${EXTENSION}`, 'a bulk set of a username')
  t.equal(await record('5'), `2:${at.getTime()}:user5${EXTENSION}`, 'a bulk set of a daily record')
  t.equal(await record('6'), `::user6${EXTENSION}`, 'a bulk set of the XP alone')

  const { key } = await apiKeys.create({ guildId: G, plan: 'professional' })
  const page = (await app.inject({ url: `/api/v1/servers/${G}/leaderboard?limit=10`, headers: { 'x-api-key': key } })).json()
  t.same(page.data.map((e: { username: string }) => e.username).sort(), ['named', 'renamed', 'user2', 'user5', 'user6', 'whole'], 'reads show the username alone')
  const member = (await app.inject({ url: `/api/v1/servers/${G}/members/2`, headers: { 'x-api-key': key } })).json()
  t.equal(member.username, 'user2')
})
