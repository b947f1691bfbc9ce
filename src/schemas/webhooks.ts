// Webhooks over the write API (src/routes/admin/webhooks.ts), and the events they send (the same
// bodies go to the stats stream as typed events): request, response and event schemas, in the
// write API's OpenAPI document.
import { Type } from 'typebox'
import { GuildParams, named, ref } from './common.js'
import { adminErrors, errorResponse, headers, idempotencyErrors, replayHeaders } from './admin.js'
import { response } from './responses.js'
import { EVENT_TYPES } from '../webhooks/events.js'
import { MAX_WEBHOOK_URL_LENGTH, MAX_WEBHOOKS_PER_SERVER } from '../webhooks/webhook-store.js'
import { WEBHOOK_ID_PATTERN } from '../redis/keys.js'

const Iso = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' })
const EventType = Type.Enum([...EVENT_TYPES], { type: 'string' })

export const WebhookParams = Type.Object({
  ...GuildParams.properties,
  id: Type.String({ pattern: WEBHOOK_ID_PATTERN, description: 'The webhook id' })
})

export const NewWebhookBody = Type.Object({
  url: Type.String({
    minLength: 1,
    maxLength: MAX_WEBHOOK_URL_LENGTH,
    description: 'http or https; its host must resolve to public addresses (unless the service sets WEBHOOK_ALLOW_PRIVATE)'
  }),
  events: Type.Array(EventType, { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true, description: 'The events to receive (`ping` comes on request, whatever this says)' })
}, { additionalProperties: false })

export const Webhook = named('Webhook', Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(EventType),
  created_at: Iso,
  disabled_at: Type.Union([Iso, Type.Null()], { description: 'When the receiver answered 410 Gone: nothing is sent to it any more' }),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  failures: Type.Integer({ minimum: 0, description: 'Deliveries failed in a row (0 after a success)' }),
  next_attempt_at: Type.Union([Iso, Type.Null()], { description: 'When the failing delivery is tried again' })
}, { description: 'A webhook, never its secret' }))

export const CreatedWebhook = named('CreatedWebhook', Type.Object({
  ...Webhook.properties,
  secret: Type.String({ description: 'The signing secret (`whsec_…`), as Standard Webhooks libraries take it: shown this once' })
}, { description: 'A new webhook, with its secret' }))

export const WebhookList = named('WebhookList', Type.Object({
  data: Type.Array(ref(Webhook), { description: `Oldest first, disabled ones included (at most ${MAX_WEBHOOKS_PER_SERVER})` })
}, { description: "A server's webhooks" }))

export const WebhookDeliveries = named('WebhookDeliveries', Type.Object({
  data: Type.Array(Type.Object({
    at: Iso,
    event_id: Type.String(),
    event_type: Type.String(),
    status: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status, or null (no answer, or not sent)" }),
    duration_ms: Type.Integer({ minimum: 0 }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed, or null' }),
    outcome: Type.Enum(['delivered', 'failed', 'disabled', 'gave_up', 'dropped'], {
      type: 'string',
      description: '`delivered` (2xx), `failed` (tried again later), `disabled` (410), `gave_up` (not delivered within 24 h), `dropped` (trimmed from a full queue)'
    })
  }), { description: 'The last 100 attempts, newest first' })
}, { description: "A webhook's deliveries log" }))

export const WebhookPing = named('WebhookPing', Type.Object({
  event_id: Type.String({ description: "The ping's event id: its attempts show in the deliveries log" })
}, { description: 'A ping queued for the webhook, behind the events queued before it' }))

// The events, as a webhook's body and a stats stream's typed event carry them.
const EventHead = {
  id: Type.String({ description: 'Unique in the installation; the `webhook-id` header holds it too: drop a repeat by it' }),
  created_at: Iso,
  server_id: Type.String()
}
const Username = Type.Union([Type.String(), Type.Null()])

export const MemberLeveledUpEvent = named('MemberLeveledUpEvent', Type.Object({
  ...EventHead,
  type: Type.Literal('member.leveled_up'),
  data: Type.Object({
    user_id: Type.String(),
    username: Username,
    old_level: Type.Integer({ minimum: 0 }),
    new_level: Type.Integer({ minimum: 1, description: "Under the server's curve at the time of the write" }),
    xp: Type.Integer({ minimum: 0 }),
    roles: Type.Object({ add: Type.Array(Type.String()), remove: Type.Array(Type.String()) }, { description: 'Role ids the bot must add and remove (role rewards)' })
  })
}, { description: 'An award or a set lifted a member to a higher level' }))

export const MemberRankEnteredTopEvent = named('MemberRankEnteredTopEvent', Type.Object({
  ...EventHead,
  type: Type.Literal('member.rank_entered_top'),
  data: Type.Object({
    user_id: Type.String(),
    username: Username,
    rank: Type.Integer({ minimum: 1, maximum: 10 }),
    xp: Type.Integer({ minimum: 0 })
  })
}, { description: 'A member entered the top 10 of the all-time board' }))

export const SeasonEndedEvent = named('SeasonEndedEvent', Type.Object({
  ...EventHead,
  type: Type.Literal('season.ended'),
  data: Type.Object({
    season: Type.Object({ id: Type.Integer({ minimum: 1 }), name: Type.String(), started_at: Iso, ended_at: Iso }),
    top: Type.Array(Type.Object({ rank: Type.Integer({ minimum: 1 }), user_id: Type.String(), username: Username, xp: Type.Integer({ minimum: 0 }) }),
      { maxItems: 10, description: "The season's final top 10" })
  })
}, { description: 'A season ended' }))

export const PingEvent = named('PingEvent', Type.Object({
  ...EventHead,
  type: Type.Literal('ping'),
  data: Type.Object({ webhook_id: Type.String() })
}, { description: 'Sent to one webhook on request (`POST …/webhooks/{id}/test`)' }))

export const webhookNamedSchemas = [Webhook, CreatedWebhook, WebhookList, WebhookDeliveries, WebhookPing,
  MemberLeveledUpEvent, MemberRankEnteredTopEvent, SeasonEndedEvent, PingEvent]

const notFound = { 404: errorResponse('`webhook_not_found`') }

export const webhookResponses = {
  created: { 201: response(CreatedWebhook, 'The new webhook, with its secret shown this once', replayHeaders), ...idempotencyErrors, ...adminErrors },
  list: { 200: response(WebhookList, 'The webhooks', headers), ...adminErrors },
  removed: {
    204: Type.Unsafe<undefined>({ type: 'null', description: 'Removed, with its queue position and log', headers: replayHeaders }),
    ...notFound,
    ...idempotencyErrors,
    ...adminErrors
  },
  pinged: {
    202: response(WebhookPing, 'Queued', replayHeaders),
    ...notFound,
    409: errorResponse('`webhook_disabled` (its receiver answered 410 Gone: delete it and create it again), or `idempotency_key_in_use`'),
    422: idempotencyErrors[422],
    ...adminErrors
  },
  deliveries: { 200: response(WebhookDeliveries, 'The last 100 attempts, newest first', headers), ...notFound, ...adminErrors }
}

/** OpenAPI 3.1's `webhooks`: each event as the request the service sends to a webhook's URL. */
export const webhookEventsDocument = Object.fromEntries([MemberLeveledUpEvent, MemberRankEnteredTopEvent, SeasonEndedEvent, PingEvent].map((schema) => {
  const type = schema.properties.type.const
  return [type, {
    post: {
      operationId: `webhook_${type.replace('.', '_')}`,
      summary: (schema as { description?: string }).description,
      description: 'Signed as Standard Webhooks specifies: verify `webhook-signature` (`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the secret) before acting on it, and drop a repeat by `webhook-id`.',
      security: [],
      parameters: ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => ({ name, in: 'header', required: true, schema: { type: 'string' } })),
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema.$id}` } } } },
      responses: {
        '2XX': { description: 'Delivered: the next event follows' },
        410: { description: 'Gone: the webhook is disabled, nothing more is sent' },
        default: { description: 'Not delivered: sent again with exponential backoff, for 24 h after the event was made' }
      }
    }
  }]
}))
