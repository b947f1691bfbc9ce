// Whether Redis serves now, judged by a probe, and the outage log: one line when Redis stops
// serving, one when it is back, and a summary every interval in between. Never a line per
// failing request: during an outage every request fails, and a line each would bury the log.
import type { Logger } from 'pino'
import { redisUnavailability, type Unavailability } from './errors.js'

export interface RedisHealthOptions {
  /** Resolves when Redis serves, rejects otherwise (it should write: OOM refuses only writes). */
  probe: () => Promise<void>
  log: Pick<Logger, 'info' | 'warn' | 'error'>
  /** How often a summary of failed requests is logged during an outage (ms). */
  summaryIntervalMs: number
  /** How often Redis is probed during an outage, to notice it is back (ms). */
  probeIntervalMs?: number
}

/** Least time between two probes that failures trigger while Redis is thought up. */
const FAILURE_PROBE_GAP_MS = 100

export class RedisHealth {
  readonly #options: Required<RedisHealthOptions>
  #down: { since: number, reason: string, retryAfterSeconds: number } | null = null
  /** Requests answered 503 since the last line that reported them. */
  #failedRequests = 0
  #probing: Promise<boolean> | null = null
  #lastProbeAt = 0
  #probeTimer: NodeJS.Timeout | undefined
  readonly #summaryTimer: NodeJS.Timeout
  #closed = false

  constructor (options: RedisHealthOptions) {
    this.#options = { probeIntervalMs: 1000, ...options }
    this.#summaryTimer = setInterval(() => { this.#summary() }, this.#options.summaryIntervalMs).unref()
  }

  /** The current outage, or null while Redis serves (as far as the last probe knows). */
  get outage (): Readonly<{ since: number, reason: string, retryAfterSeconds: number }> | null {
    return this.#down
  }

  /**
   * Records a "not now" failure. A request's failure (`request: true`) is counted for the
   * summaries. A failure while Redis is thought up triggers a probe (a few a second at most),
   * and only a failed probe declares an outage: one slow command does not.
   */
  failed (unavailability: Unavailability, { request }: { request: boolean }): void {
    if (this.#closed) return
    if (request) this.#failedRequests++
    if (this.#down === null && Date.now() - this.#lastProbeAt >= FAILURE_PROBE_GAP_MS) {
      this.#checkInBackground(unavailability)
    }
  }

  /** Probes Redis now (one probe at a time) and updates the state; resolves true if it serves. */
  async check (cause?: Unavailability): Promise<boolean> {
    this.#lastProbeAt = Date.now()
    this.#probing ??= this.#options.probe().then(
      () => { this.#up(); return true },
      (err: Error) => {
        this.#goDown(cause ?? redisUnavailability(err) ?? { reason: 'error', retryAfterSeconds: 1 }, err)
        return false
      }
    ).finally(() => { this.#probing = null })
    return await this.#probing
  }

  /** Probes now without waiting (after a reconnection, say). */
  recheck (): void {
    this.#checkInBackground()
  }

  #checkInBackground (cause?: Unavailability): void {
    this.check(cause).catch(() => {}) // check() settles both ways itself; nothing to catch
  }

  close (): void {
    this.#closed = true
    clearInterval(this.#probeTimer)
    clearInterval(this.#summaryTimer)
  }

  #goDown (cause: Unavailability, err: Error): void {
    if (this.#down !== null || this.#closed) return
    this.#down = { since: Date.now(), reason: cause.reason, retryAfterSeconds: cause.retryAfterSeconds }
    this.#options.log.error({ reason: cause.reason, err: { message: err.message }, failedRequests: this.#takeFailed() },
      'redis unavailable: answering 503 until it is back')
    this.#probeTimer = setInterval(() => { this.#checkInBackground() }, this.#options.probeIntervalMs).unref()
  }

  #up (): void {
    const down = this.#down
    if (down === null) return
    this.#down = null
    clearInterval(this.#probeTimer)
    this.#options.log.info({ downForMs: Date.now() - down.since, failedRequests: this.#takeFailed() }, 'redis available again')
  }

  #summary (): void {
    const down = this.#down
    if (down !== null) {
      this.#options.log.warn({ reason: down.reason, downForMs: Date.now() - down.since, failedRequests: this.#takeFailed() },
        'redis still unavailable')
    } else if (this.#failedRequests > 0) {
      // Failures while probes pass (a slow command, a short blip): one line per interval.
      this.#options.log.warn({ failedRequests: this.#takeFailed() }, 'redis refused or timed out some requests, but answered probes')
    }
  }

  #takeFailed (): number {
    const failed = this.#failedRequests
    this.#failedRequests = 0
    return failed
  }
}
