// Webhooks over the write API (scope `write`): each route is one operation of the webhook store
// (src/webhooks/webhook-store.ts); delivery is the worker's (src/webhooks/delivery.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { GuildParams } from '../../schemas/common.js'
import { WriteRequestHeaders } from '../../schemas/admin.js'
import { NewWebhookBody, WebhookParams, webhookResponses } from '../../schemas/webhooks.js'
import type { WebhookInfo } from '../../webhooks/webhook-store.js'
import { WebhookNotFoundError } from '../../errors.js'
import { guildOf } from '../../pipeline/access.js'

function record (info: WebhookInfo) {
  return {
    id: info.id,
    url: info.url,
    events: info.events,
    created_at: info.createdAt.toISOString(),
    disabled_at: info.disabledAt?.toISOString() ?? null,
    disabled_reason: info.disabledReason,
    failures: info.failures,
    next_attempt_at: info.nextAttemptAt?.toISOString() ?? null
  }
}

const webhookRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { webhooks } = fastify
  const write = { access: { kind: 'token', scope: 'write', server: guildOf, idempotent: true } } as const
  const read = { access: { kind: 'token', scope: 'write', server: guildOf } } as const

  fastify.post('/servers/:guild_id/webhooks', {
    schema: {
      operationId: 'createWebhook',
      tags: ['webhooks'],
      summary: "Send the server's events to a URL, signed as Standard Webhooks specifies; the secret is shown once",
      params: GuildParams,
      headers: WriteRequestHeaders,
      body: NewWebhookBody,
      response: webhookResponses.created
    },
    config: write
  }, async (request, reply) => {
    const created = await webhooks.create(request.params.guild_id, request.body)
    return await reply.code(201).send({ ...record(created), secret: created.secret })
  })

  fastify.get('/servers/:guild_id/webhooks', {
    schema: {
      operationId: 'listWebhooks',
      tags: ['webhooks'],
      summary: "The server's webhooks (never a secret)",
      params: GuildParams,
      response: webhookResponses.list
    },
    config: read
  }, async (request) => ({ data: (await webhooks.list(request.params.guild_id)).map(record) }))

  fastify.delete('/servers/:guild_id/webhooks/:id', {
    schema: {
      operationId: 'deleteWebhook',
      tags: ['webhooks'],
      summary: 'Remove a webhook: nothing more is sent to it',
      params: WebhookParams,
      headers: WriteRequestHeaders,
      response: webhookResponses.removed
    },
    config: write
  }, async (request, reply) => {
    const { guild_id: guildId, id } = request.params
    if (!await webhooks.remove(guildId, id)) throw new WebhookNotFoundError(guildId, id)
    return await reply.code(204).send()
  })

  fastify.post('/servers/:guild_id/webhooks/:id/test', {
    schema: {
      operationId: 'pingWebhook',
      tags: ['webhooks'],
      summary: 'Queue a `ping` event for the webhook; its attempts show in the deliveries log',
      params: WebhookParams,
      headers: WriteRequestHeaders,
      response: webhookResponses.pinged
    },
    config: write
  }, async (request, reply) => {
    const eventId = await webhooks.ping(request.params.guild_id, request.params.id)
    return await reply.code(202).send({ event_id: eventId })
  })

  fastify.get('/servers/:guild_id/webhooks/:id/deliveries', {
    schema: {
      operationId: 'listWebhookDeliveries',
      tags: ['webhooks'],
      summary: "The webhook's last 100 delivery attempts, newest first",
      params: WebhookParams,
      response: webhookResponses.deliveries
    },
    config: read
  }, async (request) => ({ data: await webhooks.deliveries(request.params.guild_id, request.params.id) }))
}

export default webhookRoutes
