// Webhook delivery through faults: Redis restarting under it, and an instance closing (SIGTERM's
// drain and close) with a delivery in flight to a receiver that hangs.
import t from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import { startReceiver, until } from './helpers/receiver.js'
import { WebhookStore } from '../src/webhooks/webhook-store.js'
import type { Config } from '../src/config.js'

const FAST: Partial<Config> = { webhookAllowPrivate: true, webhookRetryFirstMs: 20, webhookRetryMaxMs: 100 }
const G = '7400000000000000001'

t.test('Redis restarting under the worker: the events queued before and after are all delivered, in order', async (t) => {
  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  const ctx = await buildTestApp(t, server.url, FAST)
  const receiver = await startReceiver(t)
  await new WebhookStore(ctx.redis, ctx.keys, { allowPrivate: true }).create(G, { url: receiver.url, events: ['member.leveled_up'] })
  await ctx.writer.awardMany(G, Array.from({ length: 20 }, (_, i) => ({ userId: String(i + 1), xp: 100 })))
  await until(() => receiver.received.length >= 20, 'the first 20', undefined, () => receiver.received.length)
  await server.restart() // saved and loaded: the queue and the cursors come back
  await ctx.writer.awardMany(G, Array.from({ length: 20 }, (_, i) => ({ userId: String(i + 100), xp: 100 })))
  await until(() => new Set(receiver.received.map((r) => r.json.id)).size >= 40, 'the 20 after the restart', undefined, () => receiver.received.length)
  const users = receiver.received.map((r) => Number(r.json.data.user_id))
  t.same([...new Set(users)], [...Array.from({ length: 20 }, (_, i) => i + 1), ...Array.from({ length: 20 }, (_, i) => i + 100)], 'every event, in order')
})

t.test('an instance closing with a delivery in flight: the attempt is cut, the lease let go, and another instance delivers it', async (t) => {
  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  // A minute for a receiver's answer and for the drain's own cut: only the close's cut ends the
  // hanging attempt within the test's waits.
  const slow = { ...FAST, webhookTimeoutMs: 60_000, shutdownDrainMs: 60_000 }
  const first = await buildTestApp(t, server.url, slow)
  const receiver = await startReceiver(t, (_r, n) => n === 0 ? 0 : 200) // the first request hangs
  const { id } = await new WebhookStore(first.redis, first.keys, { allowPrivate: true }).create(G, { url: receiver.url, events: ['member.leveled_up'] })
  await first.writer.awardXp({ guildId: G, userId: '1', xp: 100 })
  await until(() => receiver.received.length === 1, 'the first attempt, hanging')
  const holder = await first.redis.get(first.keys.webhookLease(G))
  t.ok(holder, 'the first instance holds the lease')
  const second = await buildTestApp(t, server.url, { ...slow, redisPrefix: first.config.redisPrefix })
  await first.app.close() // drain, then close: the hanging attempt is cut
  t.not(await first.redis.get(first.keys.webhookLease(G)), holder, 'the lease was let go (or taken by the other instance)')
  await until(() => receiver.received.length === 2, 'the event, sent again by the other instance')
  t.equal(receiver.received[1]?.json.id, receiver.received[0]?.json.id, 'the same event')
  await until(async () => (await second.redis.llen(second.keys.webhookDeliveries(G, id))) > 0, 'the log')
  t.same((await second.redis.lrange(second.keys.webhookDeliveries(G, id), 0, -1)).map((a) => JSON.parse(a).outcome), ['delivered'],
    'the cut attempt is not recorded: its outcome is unknown')
})
