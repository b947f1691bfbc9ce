// The delivery worker of one process: it sends each server's events to its webhooks, in order,
// from the server's event stream in Redis (the queue: it outlives every instance). One instance
// at a time delivers a server's events: the one that holds its lease (a key with a TTL, renewed
// while it works); every record of an attempt checks the lease, so an instance that lost it
// (paused past its TTL) changes nothing.
//
// What starts work: a write script names the server on a pub/sub channel when it adds an event a
// webhook wants (a hint: the instance that holds the lease, or takes it, delivers), and a sweep
// every few seconds over the servers that have webhooks (a lost hint, a retry that is due, the
// work left by an instance that stopped). Each webhook of a server goes on by itself: its next
// event is tried until it is delivered (2xx), the receiver is gone (410: the webhook is
// disabled), or the event is 24 h old (given up); a failure waits the retry schedule's delay, and
// the events behind it wait with it, so a receiver sees a server's events in order.
import { randomUUID } from 'node:crypto'
import type { LookupAddress } from 'node:dns'
import type { RedisClient } from '../redis/client.js'
import type { KeyBuilder } from '../redis/keys.js'
import * as scripts from '../redis/write-scripts.js'
import { WebhookRecordStatus } from '../redis/script-status.js'
import { redisUnavailability } from '../redis/errors.js'
import { type QueuedEvent, queuedEvent, streamIdBefore } from './events.js'
import { type DeliveryAttempt, parseState, type WebhookRecord, type WebhookState } from './webhook-store.js'
import { AddressRefusedError, checkedAddress, type Resolver, systemResolver } from './public-address.js'
import { givenUp, type RetrySchedule, retryDelayMs } from './retry-schedule.js'
import { WebhookSender } from './sender.js'

export interface DeliveryOptions {
  redis: RedisClient
  /** A connection of its own for the hints' channel (a subscribed connection runs no other command). */
  subscriber: RedisClient
  keys: KeyBuilder
  allowPrivate: boolean
  schedule: RetrySchedule
  /** Longest wait for a receiver's answer. */
  timeoutMs: number
  /** Where failures other than Redis being away are reported (pino's shape). */
  log: { error: (details: object, message: string) => void }
  /** The lease's length; renewed every third of it (default 10 s). */
  leaseMs?: number
  /** How often the servers with webhooks are swept for work (default 5 s). */
  sweepMs?: number
  resolver?: Resolver
  /** Called after every attempt (metrics). */
  onAttempt?: (outcome: DeliveryAttempt['outcome']) => void
}

/** Events read from a webhook's queue at a time. */
const READ_BATCH = 100
/** How long a server's worker keeps its lease with nothing to send before letting it go. */
const IDLE_HOLD_MS = 30_000
/** How long a checked address is reused for a host: the connection still goes to the checked one. */
const ADDRESS_TTL_MS = 5000

interface Pump {
  /** Wakes the pump from its wait (a hint came, or the worker stops). */
  wake: () => void
  woken: boolean
  done: Promise<void>
  abort: AbortController
}

export class WebhookDelivery {
  readonly instanceId = randomUUID()
  readonly #o: Required<Omit<DeliveryOptions, 'onAttempt'>> & Pick<DeliveryOptions, 'onAttempt'>
  readonly #sender: WebhookSender
  readonly #pumps = new Map<string, Pump>()
  /** Servers whose lease another instance holds, until when (local clock): their hints are left to it. */
  readonly #othersUntil = new Map<string, number>()
  readonly #addresses = new Map<string, { address: LookupAddress, until: number }>()
  #sweepTimer: NodeJS.Timeout | undefined
  #sweeping: Promise<void> | undefined
  #stopped = false

  constructor (options: DeliveryOptions) {
    this.#o = { leaseMs: 10_000, sweepMs: 5000, resolver: systemResolver, ...options }
    this.#sender = new WebhookSender(options.timeoutMs)
  }

  /** Servers this instance delivers for now. */
  get activeServers (): number {
    return this.#pumps.size
  }

  async start (): Promise<void> {
    const { subscriber, keys } = this.#o
    subscriber.on('message', (_channel: string, eventsKey: string) => {
      const guildId = keys.guildOfEvents(eventsKey)
      if (guildId !== null) this.#hint(guildId)
    })
    // A failed subscription (Redis away at start) is retried by ioredis on reconnect; the sweep covers the gap.
    await subscriber.subscribe(keys.webhookChannel()).catch((err: unknown) => { this.#failed(err, 'subscribe') })
    this.#sweep()
  }

  /**
   * Stops taking work and lets each server's worker finish its attempt in flight, then gives
   * up its lease (another instance goes on at once). `abortAfterMs`: attempts still running
   * then are cut (their outcome unknown, they are sent again by the next holder: at least once).
   */
  async stop (abortAfterMs: number): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true
      clearTimeout(this.#sweepTimer)
      this.#o.subscriber.disconnect()
    }
    const pumps = [...this.#pumps.values()]
    for (const pump of pumps) pump.wake()
    const cut = setTimeout(() => { for (const pump of pumps) pump.abort.abort() }, abortAfterMs)
    await Promise.all([...pumps.map(async (p) => { await p.done }), this.#sweeping])
    clearTimeout(cut)
    this.#sender.close()
  }

  #hint (guildId: string): void {
    if (this.#stopped) return
    const pump = this.#pumps.get(guildId)
    if (pump !== undefined) { pump.wake(); return }
    if ((this.#othersUntil.get(guildId) ?? 0) > Date.now()) return
    this.#take(guildId).catch((err: unknown) => { this.#failed(err, 'lease', guildId) })
  }

  async #take (guildId: string): Promise<void> {
    const [held, ms] = await this.#lease(guildId, 'take')
    if (held !== 1) {
      if (ms > 0) this.#othersUntil.set(guildId, Date.now() + ms)
      return
    }
    this.#othersUntil.delete(guildId)
    if (this.#stopped || this.#pumps.has(guildId)) {
      if (!this.#pumps.has(guildId)) await this.#lease(guildId, 'release')
      return
    }
    let wake = (): void => {}
    const pump: Pump = { wake: () => { pump.woken = true; wake() }, woken: false, done: Promise.resolve(), abort: new AbortController() }
    const wait = async (ms: number): Promise<boolean> => {
      if (pump.woken || this.#stopped) { pump.woken = false; return true }
      return await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => { resolve(false) }, Math.max(0, ms))
        wake = () => { clearTimeout(timer); resolve(true) }
      }).finally(() => { pump.woken = false; wake = () => {} })
    }
    this.#pumps.set(guildId, pump)
    pump.done = this.#pump(guildId, pump, wait)
      .catch((err: unknown) => { this.#failed(err, 'delivery', guildId) })
      .finally(async () => {
        // Let go before it is off the list: a hint meanwhile wakes this pump (and is taken up
        // below), not a new one that would take the lease this release then drops.
        await this.#lease(guildId, 'release').catch(() => {}) // expires by itself otherwise
        this.#pumps.delete(guildId)
        if (pump.woken && !this.#stopped) this.#hint(guildId) // a hint came as it was letting go
      })
  }

  async #lease (guildId: string, action: 'take' | 'renew' | 'release'): Promise<[number, number]> {
    return await scripts.webhookLease(this.#o.redis, {
      lease: this.#o.keys.webhookLease(guildId), holder: this.instanceId, leaseMs: this.#o.leaseMs, action
    })
  }

  /** Delivers the server's events while it holds the lease and has work, or has had some lately. */
  async #pump (guildId: string, pump: Pump, wait: (ms: number) => Promise<boolean>): Promise<void> {
    const lease = { held: true }
    const renewal = setInterval(() => {
      this.#lease(guildId, 'renew').then(([still]) => {
        if (still !== 1) { lease.held = false; pump.wake() }
      }, (err: unknown) => { this.#failed(err, 'lease', guildId) })
    }, Math.floor(this.#o.leaseMs / 3))
    let idleSince = Date.now()
    try {
      while (lease.held && !this.#stopped) {
        const [records, states] = await Promise.all([
          this.#o.redis.hgetall(this.#o.keys.webhooks(guildId)),
          this.#o.redis.hgetall(this.#o.keys.webhookState(guildId))
        ])
        const hooks = Object.entries(records).map(([id, json]) => ({ id, record: JSON.parse(json) as WebhookRecord, state: parseState(states[id]) }))
          .filter((h): h is { id: string, record: WebhookRecord, state: WebhookState } => h.record.disabled_at === undefined && h.state !== undefined)
        const outcomes = await Promise.all(hooks.map(async (h) => await this.#advance(guildId, h.id, h.record, h.state, pump.abort.signal)))
        if (outcomes.some((o) => o === 'lease_lost')) break
        if (outcomes.some((o) => o === 'more')) { idleSince = Date.now(); continue }
        const due = outcomes.filter((o): o is number => typeof o === 'number')
        if (due.length === 0 && Date.now() - idleSince >= IDLE_HOLD_MS) break
        const until = due.length > 0 ? Math.min(...due) : idleSince + IDLE_HOLD_MS
        if (await wait(until - Date.now())) idleSince = Date.now()
      }
    } finally {
      clearInterval(renewal)
    }
  }

  /**
   * Sends a webhook's next events, one at a time, until one fails or none is left. Returns 'more'
   * when it moved on (there may be more), the time its next retry is due, 'idle' when it has
   * nothing to send, or 'lease_lost'.
   */
  async #advance (guildId: string, id: string, hook: WebhookRecord, state: WebhookState, signal: AbortSignal): Promise<'more' | 'idle' | 'lease_lost' | number> {
    if (state.failures > 0 && state.retry_at > Date.now()) return state.retry_at
    const keys = this.#o.keys
    const entries = await this.#o.redis.xrange(keys.guild(guildId).events, `(${state.cursor}`, '+', 'COUNT', READ_BATCH)
    if (entries.length === 0) return 'idle'
    let cursor = state.cursor
    let seq = state.seq
    const log: DeliveryAttempt[] = []
    // A delivery's record goes out without holding up the next delivery (one connection keeps
    // their order, and each checks the cursor the one before set); they are all awaited before a
    // failure is recorded and at the end of the batch.
    const pending: Array<Promise<number>> = []
    const record = (attempt: DeliveryAttempt | undefined, failures: number, retryAt: number, disable = ''): Promise<number> => {
      if (attempt !== undefined) log.push(attempt)
      const call = scripts.webhookRecord(this.#o.redis, {
        lease: keys.webhookLease(guildId),
        webhooks: keys.webhooks(guildId),
        webhookState: keys.webhookState(guildId),
        deliveries: keys.webhookDeliveries(guildId, id),
        eventSubscriptions: keys.guild(guildId).eventSubscriptions,
        events: keys.guild(guildId).events,
        holder: this.instanceId,
        webhookId: id,
        readCursor: state.cursor,
        cursor,
        seq,
        failures,
        retryAt,
        disableReason: disable
      }, log.map((a) => JSON.stringify(a)))
      call.catch(() => {}) // awaited through `pending` (settled)
      for (const a of log) this.#o.onAttempt?.(a.outcome)
      log.length = 0
      state = { cursor, seq, failures, retry_at: retryAt }
      pending.push(call)
      return call
    }
    /** Every record sent so far, answered: 'recorded', or the first other status. */
    const settled = async (): Promise<number> =>
      (await Promise.all(pending.splice(0))).find((status) => status !== WebhookRecordStatus.recorded) ?? WebhookRecordStatus.recorded
    const outcome = (status: number): 'lease_lost' | 'more' | undefined =>
      status === WebhookRecordStatus.leaseLost ? 'lease_lost' : status === WebhookRecordStatus.recorded ? undefined : 'more' // gone or moved: read the state again
    for (const [streamId, fields] of entries) {
      const queued = queuedEvent(guildId, streamId, fields)
      const number = queued?.seq ?? seq + 1
      if (number > seq + 1) log.push(dropped(number - seq - 1, queued))
      cursor = streamId
      seq = number
      if (queued === undefined || !wanted(queued, id, hook)) continue
      const { event } = queued
      if (givenUp(this.#o.schedule, Date.parse(event.created_at), Date.now())) {
        log.push({ at: new Date().toISOString(), event_id: event.id, event_type: event.type, status: null, duration_ms: 0, error: 'not delivered within the retry period (24 h)', outcome: 'gave_up' })
        continue
      }
      const result = await this.#attempt(hook.url, hook.secret, queued, signal)
      if (signal.aborted) { await settled(); return 'lease_lost' } // cut by stop(): the outcome is unknown, the next holder sends it again
      const attempt: DeliveryAttempt = { at: new Date().toISOString(), event_id: event.id, event_type: event.type, status: result.status, duration_ms: result.durationMs, error: result.error, outcome: 'delivered' }
      if (result.error === null) {
        record(attempt, 0, 0)
        continue
      }
      const before = outcome(await settled())
      if (before !== undefined) return before
      if (result.status === 410) {
        attempt.outcome = 'disabled'
        record(attempt, 0, 0, 'the receiver answered 410 Gone')
      } else {
        attempt.outcome = 'failed'
        // The event stays next: the cursor stops just before it.
        cursor = previousOf(entries, streamId, state.cursor)
        seq = number - 1
        const failures = state.failures + 1
        record(attempt, failures, Date.now() + retryDelayMs(this.#o.schedule, failures))
      }
      return outcome(await settled()) ?? (result.status === 410 ? 'idle' : state.retry_at)
    }
    if (cursor !== state.cursor || log.length > 0) record(undefined, state.failures, state.retry_at)
    return outcome(await settled()) ?? 'more'
  }

  async #attempt (url: string, secret: string, queued: QueuedEvent, signal: AbortSignal): Promise<{ status: number | null, durationMs: number, error: string | null }> {
    const target = new URL(url)
    let address: LookupAddress
    try {
      address = await this.#address(target.hostname)
    } catch (err) {
      if (err instanceof AddressRefusedError) return { status: null, durationMs: 0, error: `refused: ${err.message}` }
      throw err
    }
    return await this.#sender.send(target, address, secret, queued.event.id, JSON.stringify(queued.event), signal)
  }

  /** The host's checked address, for a few seconds once checked. */
  async #address (hostname: string): Promise<LookupAddress> {
    const now = Date.now()
    const known = this.#addresses.get(hostname)
    if (known !== undefined && known.until > now) return known.address
    const address = await checkedAddress(hostname, this.#o.allowPrivate, this.#o.resolver)
    if (this.#addresses.size > 10_000) this.#addresses.clear()
    this.#addresses.set(hostname, { address, until: now + ADDRESS_TTL_MS })
    return address
  }

  /** Every few seconds: the servers with webhooks whose queue holds events for an enabled webhook, and no holder. */
  #sweep (): void {
    if (this.#stopped) return
    this.#sweeping = this.#sweepOnce().catch((err: unknown) => { this.#failed(err, 'sweep') }).finally(() => {
      this.#sweeping = undefined
      if (!this.#stopped) this.#sweepTimer = setTimeout(() => { this.#sweep() }, this.#o.sweepMs).unref()
    })
  }

  async #sweepOnce (): Promise<void> {
    const { redis, keys } = this.#o
    let cursor = '0'
    do {
      const [next, guilds] = await redis.sscan(keys.webhookServers(), cursor, 'COUNT', 500)
      cursor = next
      await Promise.all(guilds.map(async (guildId) => {
        if (this.#pumps.has(guildId) || (this.#othersUntil.get(guildId) ?? 0) > Date.now()) return
        const [records, states, last] = await Promise.all([
          redis.hgetall(keys.webhooks(guildId)),
          redis.hgetall(keys.webhookState(guildId)),
          redis.xrevrange(keys.guild(guildId).events, '+', '-', 'COUNT', 1)
        ])
        const lastId = last[0]?.[0]
        if (lastId === undefined) return
        const behind = Object.entries(records).some(([id, json]) => {
          const state = parseState(states[id])
          return (JSON.parse(json) as WebhookRecord).disabled_at === undefined && state !== undefined && streamIdBefore(state.cursor, lastId)
        })
        if (behind) this.#hint(guildId)
      }))
    } while (cursor !== '0' && !this.#stopped)
  }

  #failed (err: unknown, what: string, guildId?: string): void {
    if (redisUnavailability(err, this.#o.redis) !== null) return // the outage log reports it; the next sweep tries again
    this.#o.log.error({ err, guildId }, `webhook ${what} failed`)
  }
}

/** Whether the event goes to webhook `id`: a type it asked for, or a ping for it. */
function wanted (queued: QueuedEvent, id: string, record: WebhookRecord): boolean {
  if (queued.event.type === 'ping') return queued.to === id
  return (record.events as string[]).includes(queued.event.type)
}

/** The entry before `streamId` in `entries`, or `first` when it is the first. */
function previousOf (entries: Array<[string, string[]]>, streamId: string, first: string): string {
  const i = entries.findIndex(([id]) => id === streamId)
  return i > 0 ? (entries[i - 1] as [string, string[]])[0] : first
}

function dropped (count: number, next: QueuedEvent | undefined): DeliveryAttempt {
  return {
    at: new Date().toISOString(),
    event_id: next?.event.id ?? '',
    event_type: next?.event.type ?? '',
    status: null,
    duration_ms: 0,
    error: `${count} event${count === 1 ? ' was' : 's were'} dropped from the queue before this one (WEBHOOK_QUEUE_LIMIT reached while the receiver was behind)`,
    outcome: 'dropped'
  }
}
