// "Not run here, send it again" (src/redis/redirects.ts) on a single Redis: `SCRIPT FLUSH` and
// `FUNCTION FLUSH` (the award scripts are functions: src/redis/functions.ts) while bots write over
// the write API and with the library answers no 500 and applies each write once;
// what ioredis hands back once it gives up on a resharding is "not now" (503, resent by the
// writer), not a 500. The resharding itself is test/cluster-resharding.test.ts.
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestAdmin } from './helpers/admin.js'
import { awardLoad, xpOnBoard } from './helpers/award-load.js'
import { redisUnavailability } from '../src/redis/errors.js'

const GUILD = '1510000000000000001'

t.test('SCRIPT FLUSH and FUNCTION FLUSH again and again while bots write: no 500, each acknowledged award applied once', async (t) => {
  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  const { admin, writer, keys, tokens, redis } = await buildTestAdmin(t, server.url, { redisCommandTimeoutMs: 500 })
  const operator = new Redis(server.url)
  t.teardown(() => { operator.disconnect() })
  const bot = await tokens.create({ name: 'bot', servers: '*', scopes: ['write'] })
  const libraryLoads = async (): Promise<number> => Number(/^cmdstat_function\|load:calls=(\d+)/m.exec(await operator.info('commandstats'))?.[1] ?? 0)

  const load = awardLoad({ admin, token: bot.token, writer, guildId: GUILD })
  // Flushes back to back for a second: some land between a script's EVAL and the EVALSHAs sent
  // after it, or between a library's load and the FCALLs sent again after it.
  await sleep(100)
  for (const until = Date.now() + 1000; Date.now() < until;) {
    await operator.script('FLUSH')
    await operator.call('FUNCTION', 'FLUSH')
    await sleep(1)
  }
  await sleep(100)
  const { acknowledged, failures, counted } = await load.stop()

  t.same(failures.slice(0, 3), [], `no 500 and no error from the library, in ${counted}`)
  t.ok(await libraryLoads() > 1, `the writers met the flushes: the award functions' library was loaded ${await libraryLoads()} times`)
  t.ok(acknowledged > 0, `${acknowledged} XP acknowledged`)
  t.equal(await xpOnBoard(redis, keys, GUILD), acknowledged, 'the XP on the board is the sum of the acknowledged gains: nothing lost, nothing applied twice')
  t.equal(Number(await redis.hget(keys.guild(GUILD).stats, 'xp_total')), acknowledged, "and so is the server's total")
})

t.test('ioredis giving up on a resharding under way is "not now", with the last reply\'s code', async (t) => {
  const gaveUp = new Error('Too many Cluster redirections. Last error: ReplyError: TRYAGAIN Multiple keys request during rehashing of slot')
  t.same(redisUnavailability(gaveUp), { reason: 'TRYAGAIN', retryAfterSeconds: 1 }, 'its redirections used up')
  const split = new Error('All keys in the pipeline should belong to the same slots allocation group')
  t.same(redisUnavailability(split), { reason: 'MOVED', retryAfterSeconds: 1 }, 'an auto-pipeline split by a slot map refreshed since its commands were queued (nothing was sent)')
  t.equal(redisUnavailability(new Error('Too many Cluster redirections. Last error: ReplyError: WRONGTYPE Operation against a key')), null,
    'an error that is not about where the data is stays what it is')
})
