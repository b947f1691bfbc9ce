// Idempotency-Key under a stalled Redis: a request whose claim could not be confirmed gets its
// 503, and its retry with the same key runs (it is not held off by a claim that nothing answers).
// A Redis server of its own, stopped with SIGSTOP and resumed with SIGCONT.
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestAdmin } from './helpers/admin.js'
import { boardMember } from '../src/redis/keys.js'

const GUILD = '6300000000000000001'

t.test('a claim whose SET ran only after the request had its 503 (Redis stalled, then resumed) does not hold off the retry', async (t) => {
  const redisServer = await RedisServer.start()
  t.teardown(async () => { await redisServer.close() })
  const TIMEOUT_MS = 300
  const ctx = await buildTestAdmin(t, redisServer.url, { redisCommandTimeoutMs: TIMEOUT_MS, apiKeyCacheTtlMs: 5000 })
  const token = await ctx.token()
  const tokenId = (await ctx.tokens.list())[0]?.id ?? ''
  const claimKey = ctx.keys.idempotency(tokenId, 'stall-1')
  const award = async (): Promise<{ status: number, replayed: string | undefined, body: { code?: string, results?: unknown } }> => {
    const res = await ctx.admin.inject({
      method: 'POST',
      url: `/admin/v1/servers/${GUILD}/awards`,
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'stall-1' },
      payload: { awards: [{ user_id: '7', xp: 40 }] }
    })
    return { status: res.statusCode, replayed: res.headers['idempotent-replayed'] as string | undefined, body: res.json() }
  }
  // The token is looked up and cached before the stall: the claim's SET is the request's first Redis command.
  t.equal((await ctx.admin.inject({ url: `/admin/v1/servers/${GUILD}/settings`, headers: { authorization: `Bearer ${token}` } })).statusCode, 200)

  process.kill(redisServer.pid, 'SIGSTOP')
  let resumed = false
  const resume = (): void => { if (!resumed) { resumed = true; process.kill(redisServer.pid, 'SIGCONT') } }
  t.teardown(resume)
  const first = await award()
  t.equal(first.status, 503, 'the request whose claim Redis did not answer gets a 503')
  t.equal(first.body.code, 'service_unavailable')
  resume()

  // Once Redis runs again the stalled SET lands; the request's release, sent after it, frees it.
  // Seen from outside: the key holds the claim only until the release has run (a few pauses of at most 1 s).
  const resumedAt = Date.now()
  const until = resumedAt + 10_000
  while (await ctx.redis.exists(claimKey) === 1 && Date.now() < until) await sleep(20)
  t.equal(await ctx.redis.exists(claimKey), 0, `the claim left by the failed request is freed (${Date.now() - resumedAt} ms after the resume)`)

  const retry = await award()
  t.equal(retry.status, 200, `the retry with the same key runs (${JSON.stringify(retry.body)})`)
  t.equal(retry.replayed, undefined, 'as a first request: nothing was answered before')
  t.match(retry.body.results, [{ user_id: '7', xp: 40, gained: 40 }])
  t.equal(Number(await ctx.redis.zscore(ctx.keys.guild(GUILD).board, boardMember('7'))), 40, 'applied once')
  const again = await award()
  t.equal(again.replayed, 'true', 'and its answer is kept for the next retry')
})

t.test('a claim still pending when the retry arrives is freed by the failed request: the retry, waiting on it, takes the key over', async (t) => {
  const redisServer = await RedisServer.start()
  t.teardown(async () => { await redisServer.close() })
  const TIMEOUT_MS = 300
  const ctx = await buildTestAdmin(t, redisServer.url, { redisCommandTimeoutMs: TIMEOUT_MS, apiKeyCacheTtlMs: 5000 })
  const token = await ctx.token()
  const call = async (): Promise<number> => (await ctx.admin.inject({
    method: 'PUT',
    url: `/admin/v1/servers/${GUILD}/members/8`,
    headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'stall-2' },
    payload: { xp: 500 }
  })).statusCode
  t.equal((await ctx.admin.inject({ url: `/admin/v1/servers/${GUILD}/settings`, headers: { authorization: `Bearer ${token}` } })).statusCode, 200)
  process.kill(redisServer.pid, 'SIGSTOP')
  let resumed = false
  const resume = (): void => { if (!resumed) { resumed = true; process.kill(redisServer.pid, 'SIGCONT') } }
  t.teardown(resume)
  t.equal(await call(), 503)
  resume()
  // At once, before the release has necessarily run: the retry finds the claim (or not) and waits for it.
  t.equal(await call(), 200, 'not 409 idempotency_key_in_use')
  t.equal(Number(await ctx.redis.zscore(ctx.keys.guild(GUILD).board, boardMember('8'))), 500)
})
