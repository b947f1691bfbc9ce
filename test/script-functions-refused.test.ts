// A Redis user without FUNCTION (an ACL, as a managed Redis may set): the first award meets
// "not found", its FUNCTION LOAD is refused, and the process goes back to EVALSHA for good
// (src/redis/functions.ts), saying so once. A file of its own: the fallback is the process's.
import t from 'tap'
import { Redis } from 'ioredis'
import { RedisServer } from './helpers/redis-server.js'
import { createRedis } from '../src/redis/client.js'
import { boardMember, KeyBuilder } from '../src/redis/keys.js'
import { FUNCTIONS_REFUSED, functionsRefused } from '../src/redis/functions.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'

const GUILD = '1530000000000000001'

t.test('a user without +function: every award applied, by EVALSHA once FUNCTION LOAD was refused, the refusal emitted once', async (t) => {
  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  const operator = new Redis(server.url)
  t.teardown(() => { operator.disconnect() })
  await operator.acl('SETUSER', 'writer', 'on', '>secret', '~*', '&*', '+@all', '-function')
  const calls = async (name: string): Promise<number> =>
    Number(new RegExp(`^cmdstat_${name.replace('|', '\\|')}:calls=(\\d+)`, 'm').exec(await operator.info('commandstats'))?.[1] ?? 0)

  const redis = createRedis({ url: `redis://writer:secret@127.0.0.1:${server.port}`, offlineQueue: true, commandTimeoutMs: 10_000 })
  t.teardown(() => { redis.disconnect() })
  const refusals: string[] = []
  redis.on(FUNCTIONS_REFUSED, (reason: string) => { refusals.push(reason) })
  const writer = new LeaderboardWriter(redis, new KeyBuilder())

  const results = await Promise.all(Array.from({ length: 20 }, async (_, i) => await writer.awardXp({ guildId: GUILD, userId: String(1 + i), xp: 10 + i })))
  t.same(results.map((r) => [r.applied, r.xp]), Array.from({ length: 20 }, (_, i) => [true, 10 + i]), '20 awards in flight as it happened, each applied once')
  t.match(functionsRefused(), /^NOPERM .*'function\|load'/, "Redis's refusal, kept")
  t.same(refusals, [functionsRefused()], 'emitted once, with it')
  t.same(await operator.call('FUNCTION', 'LIST'), [], 'no library loaded')

  const fcalls = await calls('fcall')
  const scriptCalls = async (): Promise<number> => await calls('eval') + await calls('evalsha')
  const before = await scriptCalls()
  t.match(await writer.awardXp({ guildId: GUILD, userId: '1', xp: 5 }), { applied: true, xp: 15 })
  await writer.awardMany(GUILD, [{ userId: '2', xp: 1 }, { userId: '3', xp: 1 }])
  t.equal(await calls('fcall'), fcalls, 'no FCALL any more')
  t.ok(await scriptCalls() >= before + 2, 'the award scripts as scripts (EVAL on a connection\'s first call, EVALSHA after)')
  t.equal(Number(await operator.zscore(new KeyBuilder().guild(GUILD).board, boardMember('3'))), 13)
  t.equal(refusals.length, 1, 'still said once')
})
