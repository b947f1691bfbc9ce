// Webhooks end to end (CONTRACT part 4, "Events out"): the write API's routes, the events the
// writes cause, and their delivery to a real receiver on loopback, signed as Standard Webhooks
// specifies and checked by its own package's verifier.
import t, { type Test } from 'tap'
import { Webhook } from 'standardwebhooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestAdmin, type TestAdmin } from './helpers/admin.js'
import { buildTestApp } from './helpers/app.js'
import { startReceiver, until } from './helpers/receiver.js'
import type { Config } from '../src/config.js'
import { streamIdBefore, streamIdOf } from '../src/webhooks/events.js'

t.jobs = 4

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

/** Fast retries, and loopback receivers allowed. */
const FAST: Partial<Config> = { webhookAllowPrivate: true, webhookRetryFirstMs: 20, webhookRetryMaxMs: 100 }

type Ctx = TestAdmin & { bearer: string }

async function build (t: Test, overrides: Partial<Config> = {}): Promise<Ctx> {
  const ctx = await buildTestAdmin(t, server.url, { ...FAST, ...overrides })
  return { ...ctx, bearer: await ctx.token() }
}

async function call (ctx: Ctx, method: string, url: string, payload?: unknown) {
  const res = await ctx.admin.inject({
    method: method as 'GET',
    url: `/admin/v1${url}`,
    headers: { authorization: `Bearer ${ctx.bearer}` },
    ...(payload === undefined ? {} : { payload: payload as object })
  })
  return { status: res.statusCode, body: res.body === '' ? null : res.json() }
}

const G = '7100000000000000001'

t.test('a level-up is delivered, signed so that the standardwebhooks verifier accepts it', async (t) => {
  const ctx = await build(t)
  const receiver = await startReceiver(t)
  const created = await call(ctx, 'POST', `/servers/${G}/webhooks`, { url: receiver.url, events: ['member.leveled_up'] })
  t.equal(created.status, 201)
  t.match(created.body, { id: /^[0-9a-f]{16}$/, url: receiver.url, events: ['member.leveled_up'], secret: /^whsec_/ })
  await call(ctx, 'POST', `/servers/${G}/awards`, { awards: [{ user_id: '42', xp: 150, username: 'Ada' }] })
  await until(() => receiver.received.length >= 1, 'the delivery')
  const [got] = receiver.received
  const verified = new Webhook(created.body.secret).verify(got!.body, got!.headers as Record<string, string>)
  t.match(verified, { type: 'member.leveled_up', server_id: G, data: { user_id: '42', username: 'Ada', old_level: 0, new_level: 1, xp: 150, roles: { add: [], remove: [] } } })
  t.equal(got!.headers['webhook-id'], got!.json.id)
})

/** A new webhook of server `guild` to `url`; its id and secret. */
async function hook (ctx: Ctx, guild: string, url: string, events = ['member.leveled_up']): Promise<{ id: string, secret: string }> {
  const res = await call(ctx, 'POST', `/servers/${guild}/webhooks`, { url, events })
  if (res.status !== 201) throw new Error(`webhook not created: ${JSON.stringify(res.body)}`)
  return res.body
}

/** Awards enough XP to `count` members (ids from `first`) for each to level up once, in one batch per 500. */
async function levelUps (ctx: Ctx, guild: string, count: number, first = 1): Promise<void> {
  for (let from = 0; from < count; from += 500) {
    const awards = Array.from({ length: Math.min(500, count - from) }, (_, i) => ({ user_id: String(first + from + i), xp: 100 }))
    await ctx.writer.awardMany(guild, awards.map((a) => ({ userId: a.user_id, xp: a.xp })))
  }
}

t.test('the routes: create (secret once), list (never a secret), deliveries, delete; errors in the contract\'s shape', async (t) => {
  const ctx = await build(t)
  const g = '7100000000000000002'
  const { id } = await hook(ctx, g, 'https://93.184.215.14/hooks/leaderboard', ['member.leveled_up', 'season.ended'])
  const list = await call(ctx, 'GET', `/servers/${g}/webhooks`)
  t.match(list, { status: 200, body: { data: [{ id, url: 'https://93.184.215.14/hooks/leaderboard', events: ['member.leveled_up', 'season.ended'], disabled_at: null, failures: 0, next_attempt_at: null }] } })
  t.notOk(JSON.stringify(list.body).includes('whsec_'), 'no secret in the listing')
  t.same(await call(ctx, 'GET', `/servers/${g}/webhooks/${id}/deliveries`), { status: 200, body: { data: [] } })

  const bad = async (body: unknown) => await call(ctx, 'POST', `/servers/${g}/webhooks`, body)
  t.match(await bad({ url: 'ftp://93.184.215.14/x', events: ['member.leveled_up'] }), { status: 400, body: { code: 'invalid_parameter', message: /http or https/ } })
  t.match(await bad({ url: 'not a url', events: ['member.leveled_up'] }), { status: 400, body: { code: 'invalid_parameter' } })
  t.match(await bad({ url: 'https://user:pw@93.184.215.14/', events: ['member.leveled_up'] }), { status: 400, body: { message: /credentials/ } })
  t.match(await bad({ url: 'https://93.184.215.14/', events: ['member.left'] }), { status: 400, body: { code: 'invalid_parameter', message: /events/ } })
  t.match(await bad({ url: 'https://93.184.215.14/', events: [] }), { status: 400, body: { code: 'invalid_parameter' } })
  t.match(await bad({ url: 'https://93.184.215.14/', events: ['ping'] }), { status: 400, body: { code: 'invalid_parameter' } })
  t.match(await bad({ url: 'https://93.184.215.14/', events: ['member.leveled_up'], secret: 'whsec_mine' }), { status: 400, body: { code: 'invalid_parameter', message: /secret/ } },
    'a field the route does not know is refused, not ignored')

  const other = await ctx.token(['7100000000000000099'], ['write'])
  const keysOnly = await ctx.token('*', ['keys'])
  for (const [token, why] of [[other, /server 7100000000000000002/], [keysOnly, /scope write/]] as const) {
    const res = await ctx.admin.inject({ method: 'GET', url: `/admin/v1/servers/${g}/webhooks`, headers: { authorization: `Bearer ${token}` } })
    t.match({ status: res.statusCode, body: res.json() }, { status: 403, body: { code: 'forbidden', message: why } }, 'a token without the server or the scope')
  }

  const missing = '0123456789abcdef'
  t.match(await call(ctx, 'DELETE', `/servers/${g}/webhooks/${missing}`), { status: 404, body: { statusCode: 404, error: 'Not Found', code: 'webhook_not_found' } })
  t.match(await call(ctx, 'POST', `/servers/${g}/webhooks/${missing}/test`), { status: 404, body: { code: 'webhook_not_found' } })
  t.match(await call(ctx, 'GET', `/servers/${g}/webhooks/${missing}/deliveries`), { status: 404, body: { code: 'webhook_not_found' } })
  t.match(await call(ctx, 'DELETE', `/servers/${g}/webhooks/not-an-id`), { status: 400, body: { code: 'invalid_parameter' } })

  t.equal((await call(ctx, 'DELETE', `/servers/${g}/webhooks/${id}`)).status, 204)
  t.same((await call(ctx, 'GET', `/servers/${g}/webhooks`)).body, { data: [] })
  t.equal(await ctx.redis.exists(ctx.keys.webhookState(g), ctx.keys.webhookDeliveries(g, id)), 0, 'its state and log are gone')
  t.same(await ctx.redis.hgetall(ctx.keys.guild(g).eventSubscriptions), { limit: String(ctx.config.webhookQueueLimit), notify: ctx.keys.webhookChannel() },
    'no event type is wanted any more')
})

t.test('a URL whose host is private is refused without WEBHOOK_ALLOW_PRIVATE, at creation and again at delivery', async (t) => {
  const ctx = await build(t, { webhookAllowPrivate: false })
  const g = '7100000000000000003'
  for (const url of ['http://127.0.0.1:9/x', 'http://localhost/x', 'http://10.0.0.8/x', 'http://169.254.169.254/latest', 'http://[::1]/x', 'http://[::ffff:127.0.0.1]/x']) {
    t.match(await call(ctx, 'POST', `/servers/${g}/webhooks`, { url, events: ['member.leveled_up'] }),
      { status: 400, body: { code: 'invalid_parameter', message: /not a public address/ } }, url)
  }
  t.match(await call(ctx, 'POST', `/servers/${g}/webhooks`, { url: 'http://does-not-exist.invalid/x', events: ['member.leveled_up'] }),
    { status: 400, body: { code: 'invalid_parameter', message: /does not resolve/ } })

  // Made where private receivers are allowed, delivered by an instance where they are not.
  const receiver = await startReceiver(t)
  const maker = await build(t, { webhookDelivery: false })
  const { id } = await hook(maker, g, receiver.url)
  const deliverer = await buildTestApp(t, server.url, { ...FAST, webhookAllowPrivate: false, redisPrefix: maker.config.redisPrefix })
  await levelUps(maker, g, 1)
  await until(async () => (await deliverer.redis.llen(maker.keys.webhookDeliveries(g, id))) > 0, 'an attempt')
  const [attempt] = (await call(maker, 'GET', `/servers/${g}/webhooks/${id}/deliveries`)).body.data
  t.match(attempt, { outcome: 'failed', status: null, error: /^refused: 127\.0\.0\.1 resolves to 127\.0\.0\.1, which is not a public address/ })
  t.equal(receiver.received.length, 0, 'nothing was sent')
})

t.test('a failed delivery is retried after 500s, with the same id, and each attempt is logged', async (t) => {
  const ctx = await build(t)
  const g = '7100000000000000004'
  const receiver = await startReceiver(t, (_r, n) => n < 2 ? 500 : 200)
  const { id, secret } = await hook(ctx, g, receiver.url)
  await levelUps(ctx, g, 1)
  await until(() => receiver.received.length >= 3, 'three attempts')
  const ids = receiver.received.map((r) => r.headers['webhook-id'])
  t.same(new Set(ids).size, 1, 'one event, sent three times')
  for (const r of receiver.received) t.ok(new Webhook(secret).verify(r.body, r.headers as Record<string, string>), 'each attempt is signed afresh')
  await until(async () => (await call(ctx, 'GET', `/servers/${g}/webhooks/${id}/deliveries`)).body.data.length === 3, 'the log')
  const log = (await call(ctx, 'GET', `/servers/${g}/webhooks/${id}/deliveries`)).body.data
  t.match(log, [
    { outcome: 'delivered', status: 200, error: null, event_id: ids[0], event_type: 'member.leveled_up' },
    { outcome: 'failed', status: 500, error: 'HTTP 500', event_id: ids[0] },
    { outcome: 'failed', status: 500, error: 'HTTP 500' }
  ], 'newest first')
  for (const entry of log) t.ok(Number.isInteger(entry.duration_ms) && entry.duration_ms >= 0 && !Number.isNaN(Date.parse(entry.at)))
  t.match((await call(ctx, 'GET', `/servers/${g}/webhooks`)).body.data[0], { failures: 0, next_attempt_at: null })
})

t.test('a receiver that answers 410 Gone disables the webhook: nothing more is sent, and a ping is refused', async (t) => {
  const ctx = await build(t)
  const g = '7100000000000000005'
  const receiver = await startReceiver(t, () => 410)
  const { id } = await hook(ctx, g, receiver.url)
  await levelUps(ctx, g, 1)
  await until(async () => (await call(ctx, 'GET', `/servers/${g}/webhooks`)).body.data[0].disabled_at !== null, 'the webhook disabled')
  t.match((await call(ctx, 'GET', `/servers/${g}/webhooks`)).body.data[0], { disabled_reason: /410/ })
  t.match((await call(ctx, 'GET', `/servers/${g}/webhooks/${id}/deliveries`)).body.data, [{ outcome: 'disabled', status: 410 }])
  t.match(await call(ctx, 'POST', `/servers/${g}/webhooks/${id}/test`), { status: 409, body: { code: 'webhook_disabled' } })
  await levelUps(ctx, g, 3, 100)
  t.equal(await ctx.redis.exists(ctx.keys.guild(g).events), 1)
  t.notOk(await ctx.redis.hget(ctx.keys.guild(g).eventSubscriptions, 'type:member.leveled_up'), 'the write scripts no longer queue its events')
  receiver.answer = () => 200
  // A ping of another webhook of the server goes through the same queue; once it has arrived, the
  // disabled one would have been sent the level-ups before it, had it been enabled.
  const other = await startReceiver(t)
  const second = await hook(ctx, g, other.url)
  await call(ctx, 'POST', `/servers/${g}/webhooks/${second.id}/test`)
  await until(() => other.received.length === 1, 'the ping')
  t.equal(receiver.received.length, 1, 'the disabled webhook got nothing after its 410')
})

t.test('a ping goes to that webhook only, signed, and shows in its log', async (t) => {
  const ctx = await build(t)
  const g = '7100000000000000006'
  const [a, b] = [await startReceiver(t), await startReceiver(t)]
  const hookA = await hook(ctx, g, a.url)
  await hook(ctx, g, b.url)
  const res = await call(ctx, 'POST', `/servers/${g}/webhooks/${hookA.id}/test`)
  t.match(res, { status: 202, body: { event_id: new RegExp(`^evt_${g}_`) } })
  await until(() => a.received.length === 1, 'the ping')
  t.match(new Webhook(hookA.secret).verify(a.received[0]!.body, a.received[0]!.headers as Record<string, string>),
    { id: res.body.event_id, type: 'ping', server_id: g, data: { webhook_id: hookA.id } })
  await until(async () => (await call(ctx, 'GET', `/servers/${g}/webhooks/${hookA.id}/deliveries`)).body.data.length === 1, 'the log')
  t.equal(b.received.length, 0, 'the other webhook is not pinged')
})

/** The events a receiver was answered 2xx for, by id, in the order received. */
const deliveredIds = (receiver: { received: Array<{ json: { id: string } }> }, ok: (n: number) => boolean = () => true): string[] =>
  receiver.received.filter((_r, n) => ok(n)).map((r) => r.json.id)

/** Event ids in the queue's order. */
const inQueueOrder = (ids: string[]): boolean => ids.every((id, i) => i === 0 || streamIdBefore(streamIdOf(ids[i - 1] as string), streamIdOf(id)))

t.test('in order per server under many events, with failures in between: each event delivered, in the queue\'s order', async (t) => {
  const ctx = await build(t)
  const g = '7100000000000000007'
  // Every seventh request fails: the event is sent again before any after it.
  const receiver = await startReceiver(t, (_r, n) => n % 7 === 3 ? 500 : 200)
  await hook(ctx, g, receiver.url)
  await levelUps(ctx, g, 300)
  const answered = (n: number): boolean => n % 7 !== 3
  await until(() => deliveredIds(receiver, answered).length >= 300, '300 deliveries', undefined, () => receiver.received.length)
  const ids = deliveredIds(receiver, answered)
  t.equal(new Set(ids).size, 300, 'each of the 300 level-ups')
  t.ok(inQueueOrder(ids), 'in the queue\'s order')
  const failedThenSent = receiver.received.filter((_r, n) => !answered(n)).map((r) => r.json.id)
  for (const id of failedThenSent) t.equal(receiver.received.findIndex((r) => r.json.id === id) < receiver.received.findLastIndex((r) => r.json.id === id), true)
  t.same(new Set(receiver.received.map((r) => r.json.data.user_id)).size, 300)
})

t.test('two instances deliver each event once, in order', async (t) => {
  const ctx = await build(t)
  await buildTestApp(t, server.url, { ...FAST, redisPrefix: ctx.config.redisPrefix }) // the second instance
  const guilds = ['7100000000000000011', '7100000000000000012', '7100000000000000013']
  const receiver = await startReceiver(t)
  for (const g of guilds) await hook(ctx, g, receiver.url)
  const started = Date.now()
  await Promise.all(guilds.map(async (g) => { await levelUps(ctx, g, 200) }))
  await until(() => receiver.received.length >= 600, '600 deliveries', undefined, () => receiver.received.length)
  // A second delivery of any of them would come within as long again.
  await sleep(Math.min(5000, Date.now() - started))
  const ids = deliveredIds(receiver)
  t.equal(ids.length, 600)
  t.equal(new Set(ids).size, 600, 'no event twice')
  for (const g of guilds) t.ok(inQueueOrder(receiver.received.filter((r) => r.json.server_id === g).map((r) => r.json.id)), `server ${g} in order`)
})

t.test('a restart of every instance loses nothing: events queued while none runs are delivered when one starts', async (t) => {
  const ctx = await build(t)
  const g = '7100000000000000014'
  const second = await buildTestApp(t, server.url, { ...FAST, redisPrefix: ctx.config.redisPrefix })
  const receiver = await startReceiver(t)
  await hook(ctx, g, receiver.url)
  await levelUps(ctx, g, 50)
  await until(() => receiver.received.length >= 50, 'the first 50', undefined, () => receiver.received.length)
  await Promise.all([ctx.app.close(), second.app.close()])
  await levelUps(ctx, g, 50, 1000) // no instance runs: the writer queues them in Redis
  t.equal(await ctx.redis.xlen(ctx.keys.guild(g).events) >= 50, true, 'queued in Redis')
  t.equal(receiver.received.length, 50, 'nothing delivered while no instance runs')
  await buildTestApp(t, server.url, { ...FAST, redisPrefix: ctx.config.redisPrefix })
  await until(() => receiver.received.length >= 100, 'the 50 queued meanwhile', undefined, () => receiver.received.length)
  const ids = deliveredIds(receiver)
  t.equal(new Set(ids).size, 100)
  t.ok(inQueueOrder(ids))
})

t.test('an event not delivered within the retry period is given up, logged, and the next one goes', async (t) => {
  // The second event, made once the first has failed for half the period, waits behind it and is
  // younger by as much: still in its own period when the first is given up, if the worker comes
  // back to the queue within half a period. A machine too busy for that gives both up, or gives
  // the first up before its first attempt (older than the period when the worker first reached
  // it: seen with a CPU burner on each core beside other suites); the scenario then runs again
  // with a period four times as long.
  type Log = Array<{ outcome: string, event_id: string }>
  for (let periodMs = 2000, attempt = 0; ; periodMs *= 4, attempt++) {
    const ctx = await build(t, { webhookRetryForMs: periodMs })
    const g = `710000000000000015${attempt}`
    let first: string | undefined
    const receiver = await startReceiver(t, (r) => { first ??= r.json.id; return r.json.id === first ? 500 : 200 })
    const { id } = await hook(ctx, g, receiver.url)
    const deliveries = async (): Promise<Log> => (await call(ctx, 'GET', `/servers/${g}/webhooks/${id}/deliveries`)).body.data
    await levelUps(ctx, g, 1)
    const made = Date.now()
    // One failed attempt at least: on a loaded machine the first retry may come after the period.
    let unattempted = false
    await until(async () => {
      if (receiver.received.length >= 1) return Date.now() - made >= periodMs / 2
      unattempted = (await deliveries()).some((a) => a.outcome === 'gave_up')
      return unattempted
    }, 'the first event failing for half its period')
      .catch(async (err: Error) => {
        // Seen once with two whole suites on the machine (no attempt in 30 s): say where delivery stood.
        const { redis, keys } = ctx
        const [state, lease, events] = await Promise.all([
          redis.hgetall(keys.webhookState(g)), redis.pttl(keys.webhookLease(g)), redis.xlen(keys.guild(g).events)
        ])
        throw new Error(`${err.message}; received ${receiver.received.length}, state ${JSON.stringify(state)}, lease ttl ${lease} ms, ${events} events, deliveries ${JSON.stringify(await deliveries())}`)
      })
    if (unattempted) {
      if (periodMs < 32_000) {
        t.comment(`the first event was given up before any attempt with a retry period of ${periodMs} ms: again, four times as long`)
        continue
      }
      t.fail(`the first event was given up before any attempt even with a retry period of ${periodMs} ms`)
      return
    }
    await levelUps(ctx, g, 1, 2)
    let log: Log = []
    // The second's delivery, and its record (which follows its answer), or the second given up too.
    await until(async () => {
      log = await deliveries()
      return log[0]?.outcome === 'delivered' || log.some((a) => a.outcome === 'gave_up' && a.event_id !== first)
    }, 'the second event delivered or given up')
    if (log[0]?.outcome !== 'delivered' && periodMs < 32_000) continue
    t.ok(receiver.received.some((r) => r.json.id !== first), `the second event delivered (a retry period of ${periodMs} ms)`)
    t.match(log[0], { outcome: 'delivered', status: 200 })
    t.match(log[1], { outcome: 'gave_up', event_id: first, status: null, error: /24 h|retry period/ })
    t.ok(log.length > 2 && log.slice(2).every((a) => a.outcome === 'failed' && a.event_id === first), 'after failed attempts at the first')
    return
  }
})

t.test('a receiver that falls more than WEBHOOK_QUEUE_LIMIT events behind loses the oldest: logged as dropped, the rest in order', async (t) => {
  const ctx = await build(t, { webhookQueueLimit: 100 })
  const g = '7100000000000000016'
  // Down; then up for one request (whose record carries the drop, read before later attempts
  // push it out of the log's 100); then up.
  let mode: 'down' | 'one' | 'up' = 'down'
  let answeredAfterDown = -1
  const receiver = await startReceiver(t, (_r, n) => {
    if (mode === 'one' && answeredAfterDown < 0) { answeredAfterDown = n; return 200 }
    return mode === 'up' ? 200 : 503
  })
  const { id } = await hook(ctx, g, receiver.url)
  await levelUps(ctx, g, 1)
  await until(() => receiver.received.length >= 1, 'the first attempt')
  await levelUps(ctx, g, 1000, 2) // the queue keeps about the last 100 to 200 of these
  // An attempt sent before the last writes trimmed its event may reach the receiver after them
  // (and would be answered): the receiver comes up once an attempt at an event still queued came.
  const oldest = (await ctx.redis.xrange(ctx.keys.guild(g).events, '-', '+', 'COUNT', 1))[0]?.[0] ?? '0-0'
  await until(() => receiver.received.some((r) => !streamIdBefore(streamIdOf(r.json.id), oldest)), 'an attempt at an event still queued')
  mode = 'one'
  type Attempt = { outcome: string, error: string | null, event_id: string }
  let log: Attempt[] = []
  await until(async () => {
    log = (await call(ctx, 'GET', `/servers/${g}/webhooks/${id}/deliveries`)).body.data
    return log.some((a) => a.outcome === 'delivered')
  }, 'one delivery')
  // Newest first: the delivery, the failed attempts at the same event while the receiver was
  // down, and before the first of them the gap.
  const delivered = log.findIndex((a) => a.outcome === 'delivered')
  const event = log[delivered]?.event_id
  const gap = log.findIndex((a, i) => i > delivered && !(a.outcome === 'failed' && a.event_id === event))
  t.match(log[gap], { outcome: 'dropped', event_id: event, error: /^\d+ events were dropped from the queue before this one/ }, 'logged with the first attempt after the gap')
  mode = 'up'
  await until(() => receiver.received.some((r) => r.json.data.user_id === '1001'), 'the last event', undefined, () => receiver.received.length)
  const users = [...new Set(receiver.received.filter((r) => r.status === 200).map((r) => Number(r.json.data.user_id)))]
  t.ok(users.length < 1000 && users.length >= 100, `${users.length} of the 1,001 delivered: the queue's limit, approximately`)
  t.same(users, Array.from({ length: users.length }, (_, i) => 1002 - users.length + i), 'the newest, in order')
})
