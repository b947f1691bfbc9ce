// One watcher per instance behind every open stream. Streams that show the same body (same
// endpoint, server and parameters) share a topic. Once a second the watcher reads the data
// version of every server it watches (one batch: the reader's per-turn loader), reads each
// topic whose server's version (or, for a body that depends on it, the UTC day) moved, once,
// serializes it once, and offers the same bytes to every stream of the topic. So Redis work grows
// with the servers and pages watched, not with the streams: 10,000 streams on one page cost one
// version read a second and one read per change.
//
// A topic may also carry the server's events (the stats stream: `member.leveled_up`…, see
// ./server-events.ts): while one is watched the watcher keeps the server listening, and when its
// version moves reads the events added since the last read and writes them to the topic's streams.
//
// Polling the version, rather than Redis pub/sub, has nothing to lose: after a Redis restart, a
// failover or a dropped connection, the next tick compares versions again (a version is never
// reused, see includes/version.lua), so no stream stays silent on a change it missed.
import { STATUS_CODES } from 'node:http'
import type { Versioned } from '../reader/leaderboard-reader.js'
import { utcDay } from '../periods/periods.js'
import type { RedisClock } from '../redis/clock.js'
import { withDeadline } from '../redis/deadline.js'
import { entityTag, etagHeader } from '../http/etag.js'
import { LeaderboardError } from '../errors.js'
import { isErrorCode, statusOfCode } from '../http/error-codes.js'
import { formatEvent, type LiveEvent, type SseStream } from './sse-stream.js'
import { EVENTS_READ_BATCH, LISTEN_RENEW_MS, type TypedEvent } from './server-events.js'

/** What a stream shows: one endpoint's body for one server and set of parameters. */
export interface TopicSpec<T = unknown> {
  /** Names the body: the endpoint, the server and every parameter. */
  id: string
  guildId: string
  /** The event's name: `leaderboard`, `member`, `stats`. */
  event: string
  /** The body (so its ETag) depends on the UTC day. */
  perDay: boolean
  read: () => Promise<Versioned<T>>
  /** The endpoint's own serializer, so `data:` is exactly the endpoint's body. */
  serialize: (value: T) => string
  /** The server's events go to this topic's streams too, as typed events. */
  events?: boolean
}

/** Where a watched server's events come from (./server-events.ts). */
export interface EventSource {
  listen: (guildId: string) => Promise<string>
  read: (guildId: string, after: string) => Promise<TypedEvent[]>
}

/** A server whose events are watched: the last event read, and the version it was read at. */
interface Feed {
  after: string | undefined
  version: string | undefined
  listenedAt: number
  reading: boolean
}

interface Topic {
  spec: TopicSpec
  streams: Set<SseStream>
  /** The data version and UTC day of `event`. */
  version: string | undefined
  day: number | undefined
  event: LiveEvent | undefined
  reading: Promise<LiveEvent> | undefined
}

/** Why a stream ended, as its close is logged. */
export type StreamEndReason =
  /** The client closed it, or stopped reading it. */
  | 'client_closed'
  /** Its key was revoked, rotated, or no longer covers the server. */
  | 'key_refused'
  | 'key_expired'
  /** Its key is past its plan's limit. */
  | 'quota'
  /** Its body became an error (a member removed), sent as an `error` event. */
  | 'error_event'
  /** The instance is draining or closing: the client reconnects elsewhere. */
  | 'draining'

/** What the watcher asks of an open stream's request, each false when the stream must end. */
export interface StreamChecks {
  /** Counts the stream's next minute against its key; false when the key is past its limit. */
  charge: () => Promise<boolean>
  /** Whether the key is still valid and still covers the server (a revocation ends the stream). */
  allowed: () => Promise<boolean>
  /** When the key expires (local clock), or null: checked each tick, with no Redis call. */
  expiresAt: number | null
  /** Called once when the stream leaves the watcher, with why and the events the watcher wrote to it. */
  ended?: (reason: StreamEndReason, events: number) => void
}

interface Subscription extends StreamChecks {
  topic: Topic
  events: number
}

export interface LiveWatcherOptions {
  /** The server's current data version (batched per event-loop turn). */
  versionOf: (guildId: string) => Promise<string>
  /** The API keys' change counter (keys.apiKeyChanges), read with the versions. */
  keyChanges: () => Promise<string | null>
  /** After the counter moves, how long every stream's key is checked at each tick (the key cache's life and a tick). */
  keyRecheckMs: number
  /**
   * Called when the counter moves (not at its first read), before every stream's key is checked
   * at once (then at each tick for keyRecheckMs): the key cache forgets what it holds, so a
   * revoked key's streams end as soon as the move is read, not a cache's life later.
   */
  onKeysChanged?: () => void
  clock: RedisClock
  /** A read or a version batch not answered this long after it was sent fails (and is tried again next tick). */
  commandTimeoutMs: number
  keepAliveMs: number
  /** A stream counts against its key's quota once more each time this passes. */
  chargeEveryMs: number
  /** Called with the number of events written, at each fan-out. */
  onEventsSent?: (count: number) => void
  /** A failed read (`spec`) or tick (undefined): logged; the next tick tries again. */
  onError?: (err: unknown, spec: TopicSpec | undefined) => void
  /** The servers' events, for topics that carry them. */
  events?: EventSource
}

export const TICK_MS = 1000
const TIMER_MARGIN_MS = 3

export class LiveWatcher {
  readonly #options: LiveWatcherOptions
  readonly #topics = new Map<string, Topic>()
  /** Topics by server: the servers watched. */
  readonly #byGuild = new Map<string, Set<Topic>>()
  readonly #subscriptions = new Map<SseStream, Subscription>()
  readonly #feeds = new Map<string, Feed>()
  #timer: NodeJS.Timeout | undefined
  #stopped = false
  /** The key-change counter last read (undefined before the first read). */
  #keyChanges: string | null | undefined
  /** Until when every stream's key is checked at each tick, after a key change. */
  #recheckUntil = 0

  constructor (options: LiveWatcherOptions) {
    this.#options = options
  }

  get openStreams (): number {
    return this.#subscriptions.size
  }

  get watchedServers (): number {
    return this.#byGuild.size
  }

  /**
   * The topic's current event: the one it holds when it was read at `version` (and today, for a
   * body that depends on the day), else a fresh read (shared with any read of the topic under way).
   * Throws what the read throws (a 404 for a non-member, a 503 for Redis).
   */
  async current (spec: TopicSpec, version: string | undefined): Promise<LiveEvent> {
    const topic = this.#topicOf(spec)
    const { event } = topic
    if (event !== undefined && version !== undefined && topic.version === version &&
        (!spec.perDay || topic.day === utcDay(this.#options.clock.now()))) return event
    try {
      return await this.#read(topic)
    } catch (err) {
      this.#dropIfIdle(topic)
      throw err
    } finally {
      // Kept for the stream about to subscribe; dropped by a tick if none does.
      this.#schedule()
    }
  }

  /** Adds an open stream to its topic's fan-out; ends it with stop(). */
  subscribe (spec: TopicSpec, stream: SseStream, checks: StreamChecks): void {
    const topic = this.#topicOf(spec)
    topic.streams.add(stream)
    const subscription: Subscription = { topic, events: 0, ...checks }
    this.#subscriptions.set(stream, subscription)
    if (spec.events === true && this.#options.events !== undefined && !this.#feeds.has(spec.guildId)) {
      const feed: Feed = { after: undefined, version: undefined, listenedAt: 0, reading: false }
      this.#feeds.set(spec.guildId, feed)
      this.#listen(spec.guildId, feed, Date.now())
    }
    // A change read between this stream's first event and now reaches it too.
    if (topic.event !== undefined && stream.offer(topic.event, Date.now())) {
      subscription.events++
      this.#options.onEventsSent?.(1)
    }
    this.#schedule()
  }

  /** Takes the stream out of its topic (`reason`: why it ended, for its `ended`). */
  unsubscribe (stream: SseStream, reason: StreamEndReason = 'client_closed'): void {
    const subscription = this.#subscriptions.get(stream)
    if (subscription === undefined) return
    this.#subscriptions.delete(stream)
    subscription.topic.streams.delete(stream)
    this.#dropIfIdle(subscription.topic)
    subscription.ended?.(reason, subscription.events)
  }

  /** Ends every open stream (cleanly: the client sees the response end and reconnects). */
  endAll (): void {
    for (const stream of [...this.#subscriptions.keys()]) this.#close(stream, 'draining')
  }

  /** Ends every stream and stops ticking. */
  stop (): void {
    this.#stopped = true
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.endAll()
  }

  #topicOf (spec: TopicSpec): Topic {
    let topic = this.#topics.get(spec.id)
    if (topic === undefined) {
      topic = { spec, streams: new Set(), version: undefined, day: undefined, event: undefined, reading: undefined }
      this.#topics.set(spec.id, topic)
      let ofGuild = this.#byGuild.get(spec.guildId)
      if (ofGuild === undefined) this.#byGuild.set(spec.guildId, ofGuild = new Set())
      ofGuild.add(topic)
    }
    return topic
  }

  #dropIfIdle (topic: Topic): void {
    if (topic.streams.size > 0 || topic.reading !== undefined || this.#topics.get(topic.spec.id) !== topic) return
    this.#topics.delete(topic.spec.id)
    const ofGuild = this.#byGuild.get(topic.spec.guildId)
    ofGuild?.delete(topic)
    if (ofGuild?.size === 0) this.#byGuild.delete(topic.spec.guildId)
    if (topic.spec.events === true && ![...ofGuild ?? []].some((t) => t.spec.events === true)) this.#feeds.delete(topic.spec.guildId)
  }

  /** Keeps the write scripts adding the server's events; the first call says where reading starts. */
  #listen (guildId: string, feed: Feed, now: number): void {
    feed.listenedAt = now
    this.#options.events?.listen(guildId).then((last) => { feed.after ??= last }, (err: unknown) => {
      feed.listenedAt = 0 // tried again next tick
      this.#options.onError?.(err, undefined)
    })
  }

  /** The events added since the last read, to the streams of the server's topics that carry them. */
  async #readEvents (guildId: string, feed: Feed, version: string): Promise<void> {
    const after = feed.after
    if (after === undefined || feed.reading || this.#options.events === undefined) return
    feed.reading = true
    try {
      const events = await withDeadline(this.#options.events.read(guildId, after), this.#options.commandTimeoutMs)
      const last = events.at(-1)
      if (last === undefined) { feed.version = version; return }
      feed.after = last.streamId
      // More than one read's worth: the rest next tick, whatever the version says.
      if (events.length < EVENTS_READ_BATCH) feed.version = version
      const now = Date.now()
      let sent = 0
      for (const topic of this.#byGuild.get(guildId) ?? []) {
        if (topic.spec.events !== true) continue
        for (const stream of topic.streams) {
          const subscription = this.#subscriptions.get(stream)
          for (const { bytes } of events) {
            if (bytes.length === 0) continue
            stream.writeRaw(bytes, now)
            sent++
            if (subscription !== undefined) subscription.events++
          }
        }
      }
      if (sent > 0) this.#options.onEventsSent?.(sent)
    } finally {
      feed.reading = false
    }
  }

  /** Reads the topic (one read at a time per topic) and offers a changed body to its streams. */
  async #read (topic: Topic, at?: number): Promise<LiveEvent> {
    if (topic.reading !== undefined) return await topic.reading
    const { spec } = topic
    const reading = (async () => {
      const result = await withDeadline(spec.read(), this.#options.commandTimeoutMs)
      const nowMs = spec.perDay ? result.nowMs ?? this.#options.clock.now() : undefined
      const etag = etagHeader(entityTag(result.version, nowMs), 'identity')
      topic.version = result.version
      topic.day = nowMs === undefined ? undefined : utcDay(nowMs)
      if (topic.event?.etag !== etag) {
        topic.event = { etag, bytes: formatEvent(spec.event, etag, spec.serialize(result.value)) }
        this.#fanOut(topic, topic.event, at ?? Date.now())
      }
      return topic.event
    })()
    topic.reading = reading
    try {
      return await reading
    } finally {
      topic.reading = undefined
    }
  }

  /** `now`: a tick's start, for a read the tick made (ticks start a second apart, so their events do too). */
  #fanOut (topic: Topic, event: LiveEvent, now: number): void {
    let sent = 0
    for (const stream of topic.streams) {
      if (stream.offer(event, now)) {
        sent++
        const subscription = this.#subscriptions.get(stream)
        if (subscription !== undefined) subscription.events++
      }
    }
    if (sent > 0) this.#options.onEventsSent?.(sent)
  }

  /** Starts the tick chain when it is not running; it runs while any topic is watched. */
  #schedule (delay = TICK_MS): void {
    if (this.#timer !== undefined || this.#stopped) return
    this.#timer = setTimeout(() => {
      const started = Date.now()
      this.#tick().catch((err: unknown) => { this.#options.onError?.(err, undefined) }).finally(() => {
        this.#timer = undefined
        // A timer may fire a millisecond early by Date.now(): the margin keeps ticks a full second apart.
        if (this.#topics.size > 0) this.#schedule(Math.max(0, started + TICK_MS + TIMER_MARGIN_MS - Date.now()))
      })
    }, delay)
    this.#timer.unref()
  }

  async #tick (): Promise<void> {
    const started = Date.now()
    this.#tendStreams(started)
    const guilds = [...this.#byGuild.keys()]
    // Loaded in one turn, so sent as one batch.
    // Settled at once (a rejection left waiting on the versions would be reported as unhandled).
    const keyChanges = withDeadline(this.#options.keyChanges(), this.#options.commandTimeoutMs)
      .then((value) => ({ value }), () => undefined) // Redis away: read again next tick
    const versions = await Promise.allSettled(guilds.map(async (id) =>
      await withDeadline(this.#options.versionOf(id), this.#options.commandTimeoutMs)))
    const changes = await keyChanges
    // (The first read too: a key may have changed between a stream's opening and it.)
    if (changes !== undefined && changes.value !== this.#keyChanges) {
      this.#recheckUntil = Date.now() + this.#options.keyRecheckMs
      if (this.#keyChanges !== undefined) { // a change seen, not the first read
        this.#options.onKeysChanged?.()
        // At once, not only at the ticks of the window (which a busy instance may reach late):
        // the cache is empty now, so the keys are looked up afresh.
        for (const [stream, subscription] of this.#subscriptions) this.#checkKey(stream, subscription)
      }
    }
    if (changes !== undefined) this.#keyChanges = changes.value
    const today = utcDay(this.#options.clock.now())
    const reads: Array<Promise<unknown>> = []
    guilds.forEach((guildId, i) => {
      const outcome = versions[i]
      if (outcome === undefined || outcome.status === 'rejected') return // Redis will be asked again next tick
      const feed = this.#feeds.get(guildId)
      if (feed !== undefined) {
        if (started - feed.listenedAt >= LISTEN_RENEW_MS) this.#listen(guildId, feed, started)
        if (feed.version !== outcome.value) reads.push(this.#readEvents(guildId, feed, outcome.value).catch((err: unknown) => { this.#options.onError?.(err, undefined) }))
      }
      for (const topic of this.#byGuild.get(guildId) ?? []) {
        if (topic.streams.size === 0) { this.#dropIfIdle(topic); continue }
        if (topic.version !== outcome.value || (topic.spec.perDay && topic.day !== today)) {
          reads.push(this.#read(topic, started).catch((err: unknown) => { this.#failed(topic, err) }))
        }
      }
    })
    await Promise.all(reads)
  }

  /**
   * Held events, keep-alive comments, each stream's minute of quota, and its key: its expiry each
   * tick (locally), and a full check (authentication again) at each minute and at every tick for
   * a while after any key changed, so Redis is asked about keys only then, not per stream.
   */
  #tendStreams (now: number): void {
    let sent = 0
    const recheck = now < this.#recheckUntil
    for (const [stream, subscription] of this.#subscriptions) {
      if (stream.ended) { this.unsubscribe(stream); continue }
      if (stream.flush(now)) {
        sent++
        subscription.events++
      }
      // Checked once a tick, so a stream is never silent for longer than keepAliveMs.
      stream.keepAlive(now, Math.max(0, this.#options.keepAliveMs - TICK_MS))
      if (subscription.expiresAt !== null && now >= subscription.expiresAt) { this.#close(stream, 'key_expired'); continue }
      // A refusal ends the stream; Redis away does not (the checks resolve true or throw then).
      const charge = now >= stream.nextChargeAt
      if (charge) {
        stream.nextChargeAt += this.#options.chargeEveryMs
        subscription.charge().then((ok) => { if (!ok) this.#close(stream, 'quota') }, () => {})
      }
      if (recheck || charge) this.#checkKey(stream, subscription)
    }
    if (sent > 0) this.#options.onEventsSent?.(sent)
  }

  /** The stream's key checked again: refused, the stream ends; Redis away, it goes on. */
  #checkKey (stream: SseStream, subscription: Subscription): void {
    subscription.allowed().then((ok) => { if (!ok) this.#close(stream, 'key_refused') }, () => {})
  }

  #close (stream: SseStream, reason: StreamEndReason): void {
    stream.end()
    this.unsubscribe(stream, reason)
  }

  /**
   * A read that failed: a domain error (a member removed since the stream opened) is the
   * endpoint's answer now, so it goes to the topic's streams as an `error` event with the error
   * body, and they end; anything else (Redis down) is tried again next tick.
   */
  #failed (topic: Topic, err: unknown): void {
    const statusCode = err instanceof LeaderboardError && isErrorCode(err.code) ? statusOfCode(err.code) : 500
    if (statusCode >= 500) {
      this.#options.onError?.(err, topic.spec)
      return
    }
    const { code, message } = err as LeaderboardError
    const body = JSON.stringify({ statusCode, error: STATUS_CODES[statusCode] ?? 'Error', code, message })
    const bytes = Buffer.from(`event: error\ndata: ${body}\n\n`)
    const now = Date.now()
    for (const stream of [...topic.streams]) {
      stream.writeRaw(bytes, now)
      this.#close(stream, 'error_event')
    }
  }
}
