// Webhooks end to end (CONTRACT part 4, "Events out"): the write API's routes, the events the
// writes cause, and their delivery to a real receiver on loopback, signed as Standard Webhooks
// specifies and checked by its own package's verifier.
import t, { type Test } from 'tap'
import { Webhook } from 'standardwebhooks'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestAdmin, type TestAdmin } from './helpers/admin.js'
import { startReceiver, until } from './helpers/receiver.js'
import type { Config } from '../src/config.js'

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
