// Webhooks: the store the write API's routes use (webhookStorePlugin, on the write API's
// listener), and the delivery worker (webhookDeliveryPlugin, on the read API's app, which every
// process runs: the library's writes queue events too, so delivery cannot wait for ADMIN_PORT).
// The worker starts when the app is ready, stops taking work when the drain begins (its lease
// goes to another instance at once), and cuts attempts still in flight when the app closes.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Counter, Gauge } from 'prom-client'
import { createRedis } from '../redis/client.js'
import { WebhookStore } from '../webhooks/webhook-store.js'
import { WebhookDelivery } from '../webhooks/delivery.js'
import type { Config } from '../config.js'
import type { RetrySchedule } from '../webhooks/retry-schedule.js'

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhookStore
  }
}

export function retrySchedule (config: Config): RetrySchedule {
  return { firstMs: config.webhookRetryFirstMs, maxMs: config.webhookRetryMaxMs, forMs: config.webhookRetryForMs }
}

export const webhookStorePlugin = fp(async function webhookStorePlugin (fastify: FastifyInstance) {
  fastify.decorate('webhooks', new WebhookStore(fastify.redisClient, fastify.keys, {
    allowPrivate: fastify.config.webhookAllowPrivate,
    queueLimit: fastify.config.webhookQueueLimit
  }))
}, { name: 'webhook-store', dependencies: ['config', 'redis'] })

/** The webhooks' subscribed connection, as CLIENT LIST names it. */
export const WEBHOOKS_CONNECTION_NAME = 'leaderboard-webhooks'

export const webhookDeliveryPlugin = fp(async function webhookDeliveryPlugin (fastify: FastifyInstance) {
  const { config } = fastify
  if (!config.webhookDelivery) return
  // A subscribed connection runs nothing else; ioredis subscribes again after a reconnection.
  const subscriber = createRedis({ url: config.redisUrl ?? '', cluster: config.redisCluster, commandTimeoutMs: config.redisCommandTimeoutMs, offlineQueue: true, name: WEBHOOKS_CONNECTION_NAME })
  subscriber.on('error', () => {}) // the app's own connection reports Redis's health
  const attempts = fastify.metricsRegistry === null
    ? undefined
    : new Counter({ name: 'leaderboard_webhook_attempts_total', help: 'Webhook delivery attempts by outcome', labelNames: ['outcome'], registers: [fastify.metricsRegistry] })
  const delivery = new WebhookDelivery({
    redis: fastify.redisClient,
    subscriber,
    keys: fastify.keys,
    allowPrivate: config.webhookAllowPrivate,
    schedule: retrySchedule(config),
    timeoutMs: config.webhookTimeoutMs,
    log: fastify.log.child({ component: 'webhooks' }),
    onAttempt: (outcome) => { attempts?.inc({ outcome }) }
  })
  if (fastify.metricsRegistry !== null) {
    // eslint-disable-next-line no-new -- registered with the registry, read through collect()
    new Gauge({ name: 'leaderboard_webhook_servers', help: 'Servers whose webhooks this instance delivers now (holds the lease of)', registers: [fastify.metricsRegistry], collect () { this.set(delivery.activeServers) } })
  }
  fastify.addHook('onReady', async () => { await delivery.start() })
  let stopping: Promise<void> | undefined
  // Attempts in flight may finish during the drain; the close cuts what is left.
  fastify.lifecycle.onDrain(() => { stopping = delivery.stop(config.shutdownDrainMs) })
  fastify.addHook('onClose', async () => {
    await Promise.all([stopping, delivery.stop(0)])
    subscriber.disconnect()
  })
}, { name: 'webhook-delivery', dependencies: ['config', 'redis', 'lifecycle', 'metrics'] })
