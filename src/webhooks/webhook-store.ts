// A server's webhooks: made (with a secret shown once, kept so that deliveries can be signed),
// listed (never the secret), removed, pinged, and their deliveries log. Each change is one script
// (src/redis/commands/webhook-*.lua) that also counts, for the write scripts, which event types
// the server's enabled webhooks want. Delivery is src/webhooks/delivery.ts's.
import { randomBytes } from 'node:crypto'
import type { RedisClient } from '../redis/client.js'
import type { KeyBuilder } from '../redis/keys.js'
import { defineCommands } from '../redis/scripts.js'
import * as scripts from '../redis/write-scripts.js'
import { WebhookCreateStatus, WebhookPingStatus } from '../redis/script-status.js'
import { InvalidParameterError, WebhookDisabledError, WebhookNotFoundError } from '../errors.js'
import { assertSnowflake } from '../validation.js'
import { EVENT_TYPES, eventId, type SubscribableEventType } from './events.js'
import { AddressRefusedError, checkedAddress, type Resolver, systemResolver } from './public-address.js'

/** Webhooks per server: each is a delivery loop of its own. */
export const MAX_WEBHOOKS_PER_SERVER = 10
export const MAX_WEBHOOK_URL_LENGTH = 2048
/** WEBHOOK_QUEUE_LIMIT's default: events kept per server while a webhook falls behind. */
export const DEFAULT_QUEUE_LIMIT = 100_000

/** A webhook as stored (includes/webhooks.lua). */
export interface WebhookRecord {
  url: string
  events: SubscribableEventType[]
  /** `whsec_…`, as the Standard Webhooks libraries take it. */
  secret: string
  created_at: number
  disabled_at?: number
  disabled_reason?: string
}

/** A webhook's delivery state (includes/webhooks.lua). */
export interface WebhookState {
  /** The stream id of the last event done with. */
  cursor: string
  seq: number
  /** Attempts failed in a row. */
  failures: number
  /** When the next attempt is due, Unix ms (0: at once). */
  retry_at: number
}

/** What a listing shows of a webhook: never its secret. */
export interface WebhookInfo {
  id: string
  url: string
  events: SubscribableEventType[]
  createdAt: Date
  /** Set when the receiver answered 410 Gone: nothing is sent to it any more. */
  disabledAt: Date | null
  disabledReason: string | null
  /** Deliveries failed in a row (0 when the last one succeeded). */
  failures: number
  /** When the next attempt of a failing delivery is due. */
  nextAttemptAt: Date | null
}

/** One delivery attempt in the log (JSON in the list; src/webhooks/delivery.ts writes them). */
export interface DeliveryAttempt {
  at: string
  event_id: string
  event_type: string
  /** The HTTP status the receiver answered, or null (no answer, or not sent). */
  status: number | null
  duration_ms: number
  /** Why it failed, or null. */
  error: string | null
  /** `delivered`, `failed` (tried again later), `disabled` (410), `gave_up` (24 h passed), `dropped` (trimmed from the queue). */
  outcome: 'delivered' | 'failed' | 'disabled' | 'gave_up' | 'dropped'
}

export interface WebhookStoreOptions {
  /** Allow receivers on private, loopback and link-local addresses (WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate?: boolean
  /** Events kept per server while a webhook falls behind (WEBHOOK_QUEUE_LIMIT). */
  queueLimit?: number
  resolver?: Resolver
}

/** A new webhook's secret: 24 random bytes, base64, with Standard Webhooks' `whsec_` prefix. */
function newSecret (): string {
  return `whsec_${randomBytes(24).toString('base64')}`
}

export class WebhookStore {
  readonly redis: RedisClient
  readonly keys: KeyBuilder
  readonly allowPrivate: boolean
  readonly queueLimit: number
  readonly #resolver: Resolver

  constructor (redis: RedisClient, keys: KeyBuilder, options: WebhookStoreOptions = {}) {
    defineCommands(redis)
    this.redis = redis
    this.keys = keys
    this.allowPrivate = options.allowPrivate ?? false
    this.queueLimit = options.queueLimit ?? DEFAULT_QUEUE_LIMIT
    this.#resolver = options.resolver ?? systemResolver
  }

  /**
   * `text` as a receiver's URL: http or https, no credentials in it, and a host that resolves to
   * public addresses only (unless allowPrivate). Throws InvalidParameterError naming `url`.
   */
  async checkUrl (text: string): Promise<URL> {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      throw new InvalidParameterError('url must be an absolute http or https URL')
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new InvalidParameterError('url must be an http or https URL')
    if (url.username !== '' || url.password !== '') throw new InvalidParameterError('url must not carry credentials: the receiver checks the signature instead')
    if (text.length > MAX_WEBHOOK_URL_LENGTH) throw new InvalidParameterError(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`)
    try {
      await checkedAddress(url.hostname, this.allowPrivate, this.#resolver)
    } catch (err) {
      if (err instanceof AddressRefusedError) throw new InvalidParameterError(`url: ${err.message}`)
      throw err
    }
    return url
  }

  /** A new webhook for `events` of the server; its secret is in the result, and nowhere else shown again. */
  async create (guildId: string, input: { url: string, events: readonly string[] }): Promise<WebhookInfo & { secret: string }> {
    assertSnowflake('guild_id', guildId)
    const events = [...new Set(input.events)]
    const unknown = events.find((e) => !(EVENT_TYPES as readonly string[]).includes(e))
    if (events.length === 0 || unknown !== undefined) {
      throw new InvalidParameterError(`events must list 1 to ${EVENT_TYPES.length} of ${EVENT_TYPES.join(', ')}${unknown === undefined ? '' : ` (not ${unknown})`}`)
    }
    const url = (await this.checkUrl(input.url)).href
    const id = randomBytes(8).toString('hex')
    const record: WebhookRecord = { url, events: events as SubscribableEventType[], secret: newSecret(), created_at: Date.now() }
    const k = this.keys.guild(guildId)
    // Listed for the workers' sweep before it exists, and again after (see remove).
    const servers = this.keys.webhookServers()
    await this.redis.sadd(servers, guildId)
    const status = await scripts.webhookCreate(this.redis, {
      webhooks: this.keys.webhooks(guildId),
      webhookState: this.keys.webhookState(guildId),
      eventSubscriptions: k.eventSubscriptions,
      events: k.events,
      webhookId: id,
      record: JSON.stringify(record),
      queueLimit: this.queueLimit,
      channel: this.keys.webhookChannel(),
      maxWebhooks: MAX_WEBHOOKS_PER_SERVER
    })
    if (status === WebhookCreateStatus.tooMany) {
      throw new InvalidParameterError(`a server has at most ${MAX_WEBHOOKS_PER_SERVER} webhooks; delete one first`)
    }
    await this.redis.sadd(servers, guildId)
    return { ...info(id, record, undefined), secret: record.secret }
  }

  /** The server's webhooks, oldest first. */
  async list (guildId: string): Promise<WebhookInfo[]> {
    assertSnowflake('guild_id', guildId)
    const [records, states] = await Promise.all([
      this.redis.hgetall(this.keys.webhooks(guildId)),
      this.redis.hgetall(this.keys.webhookState(guildId))
    ])
    return Object.entries(records)
      .map(([id, json]) => info(id, JSON.parse(json) as WebhookRecord, parseState(states[id])))
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id))
  }

  /** The webhook and its secret (for signing), or null. */
  async record (guildId: string, id: string): Promise<WebhookRecord | null> {
    const json = await this.redis.hget(this.keys.webhooks(guildId), id)
    return json === null ? null : JSON.parse(json) as WebhookRecord
  }

  /** Removes the webhook, its state and its log. False when the server has no such webhook. */
  async remove (guildId: string, id: string): Promise<boolean> {
    assertSnowflake('guild_id', guildId)
    const removed = await scripts.webhookDelete(this.redis, {
      webhooks: this.keys.webhooks(guildId),
      webhookState: this.keys.webhookState(guildId),
      deliveries: this.keys.webhookDeliveries(guildId, id),
      eventSubscriptions: this.keys.guild(guildId).eventSubscriptions,
      webhookId: id
    }) === 1
    // Off the sweep's list when it was the last; listed again when one was made meanwhile
    // (create lists the server after its script too, so one of the two sees the other).
    if (removed && await this.redis.hlen(this.keys.webhooks(guildId)) === 0) {
      await this.redis.srem(this.keys.webhookServers(), guildId)
      if (await this.redis.hlen(this.keys.webhooks(guildId)) > 0) await this.redis.sadd(this.keys.webhookServers(), guildId)
    }
    return removed
  }

  /** Queues a `ping` for the webhook, behind the events queued before it; returns its event id. */
  async ping (guildId: string, id: string): Promise<string> {
    assertSnowflake('guild_id', guildId)
    const k = this.keys.guild(guildId)
    const [status, value] = await scripts.webhookPing(this.redis, {
      webhooks: this.keys.webhooks(guildId), eventSubscriptions: k.eventSubscriptions, events: k.events, webhookId: id
    })
    if (status === WebhookPingStatus.notFound) throw new WebhookNotFoundError(guildId, id)
    if (status === WebhookPingStatus.disabled) throw new WebhookDisabledError(id, new Date(Number(value)))
    return eventId(guildId, String(value))
  }

  /** The webhook's last 100 delivery attempts, newest first. */
  async deliveries (guildId: string, id: string): Promise<DeliveryAttempt[]> {
    assertSnowflake('guild_id', guildId)
    const [exists, entries] = await Promise.all([
      this.redis.hexists(this.keys.webhooks(guildId), id),
      this.redis.lrange(this.keys.webhookDeliveries(guildId, id), 0, 99)
    ])
    if (exists === 0) throw new WebhookNotFoundError(guildId, id)
    return entries.map((json) => JSON.parse(json) as DeliveryAttempt)
  }
}

export function parseState (json: string | undefined): WebhookState | undefined {
  return json === undefined ? undefined : JSON.parse(json) as WebhookState
}

function info (id: string, record: WebhookRecord, state: WebhookState | undefined): WebhookInfo {
  return {
    id,
    url: record.url,
    events: record.events,
    createdAt: new Date(record.created_at),
    disabledAt: record.disabled_at === undefined ? null : new Date(record.disabled_at),
    disabledReason: record.disabled_reason ?? null,
    failures: state?.failures ?? 0,
    nextAttemptAt: state === undefined || state.failures === 0 || state.retry_at === 0 ? null : new Date(state.retry_at)
  }
}
