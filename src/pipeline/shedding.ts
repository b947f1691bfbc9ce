// Load shedding: past what the instance can serve, requests are answered at once with 503
// service_unavailable and retry-after, instead of every client's latency growing. Each signal is
// the instance's own load: requests in progress, an event loop kept late by the instance's own
// work, heap in use. /healthz is exempt (an overloaded instance is alive).
//
// Requests in progress are what catches a flood of connections: under one, the event loop's delay
// stays low while requests queue, because the waiting happens in socket buffers and in Redis
// round trips, not in the loop (docs/benchmarks-history.md).
//
// The event loop counts only when it was late and busy with the instance's own work: a loop that
// is late while mostly idle, or busy mostly waiting for a CPU in the middle of its callbacks (a
// machine whose other processes take the cores), waits for a CPU that the host gives to others,
// which refusing requests does not give back. And it counts only from the moment the instance
// listens: the work of its own start (loading and compiling code, connecting, the demo's
// seeding) is not load from its traffic, and its first requests must not be refused for it.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'

/** Why a request was shed: the signal past its threshold. */
export type ShedReason = 'in_flight' | 'event_loop_delay' | 'heap'
export const SHED_REASONS: readonly ShedReason[] = ['in_flight', 'event_loop_delay', 'heap']

/** A request refused by load shedding, with the signal that refused it (error-handler.ts answers it). */
export class OverloadedError extends Error {
  readonly code = 'OVERLOADED'
  readonly statusCode = 503
  readonly reason: ShedReason

  constructor (reason: ShedReason) {
    super(`overloaded: ${reason}`)
    this.reason = reason
  }
}

/** How often the event loop and the heap are sampled, and the window the loop's figures cover. */
const SAMPLE_MS = 1000
/** The delay monitor's timer (ms): a delay is counted past it. */
const RESOLUTION_MS = 10
/**
 * The share of a window the loop must have been busy (in a callback, not waiting for I/O) for its
 * delay to count. Below it the loop had room, and its delay was the wait for a CPU the host gave
 * to others.
 */
export const BUSY_SHARE = 0.9
/**
 * The share of the loop's busy time the process must have spent on a CPU (its CPU time against
 * the busy time) for that busy time to be the instance's work. On a machine whose cores other
 * processes take, a callback's wall time is mostly a wait for a CPU: an idle instance's loop looks
 * busy and late there while it runs on a CPU for a small share of that time, and an instance busy
 * with its own work still gets a larger share (docs/operating.md, "Load shedding").
 */
export const ON_CPU_SHARE = 0.25

/**
 * The event loop over windows: its mean delay past the resolution, the share of the window it was
 * busy, and the share of that busy time the process ran on a CPU.
 */
export class LoopWindow {
  readonly #delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  #since = performance.eventLoopUtilization()
  #cpu = process.cpuUsage()

  constructor () {
    this.#delay.enable()
  }

  /** Starts a new window, forgetting the current one. */
  restart (): void {
    this.#delay.reset()
    this.#since = performance.eventLoopUtilization()
    this.#cpu = process.cpuUsage()
  }

  /** The figures of the window since the last call (or restart), and a new window. */
  take (): { delayMs: number, busy: number, onCpu: number } {
    const mean = this.#delay.mean / 1e6
    // No sample at all: the loop was held for the whole window.
    const delayMs = Number.isNaN(mean) ? Infinity : Math.max(0, mean - RESOLUTION_MS)
    const now = performance.eventLoopUtilization()
    const { utilization: busy, active: activeMs } = performance.eventLoopUtilization(now, this.#since)
    // The process's CPU time: its other threads' (GC helpers) too, a small share beside the loop's.
    const { user, system } = process.cpuUsage(this.#cpu)
    const onCpu = activeMs > 0 ? (user + system) / 1000 / activeMs : 0
    this.#delay.reset()
    this.#since = now
    this.#cpu = process.cpuUsage()
    return { delayMs, busy, onCpu }
  }

  stop (): void {
    this.#delay.disable()
  }
}

export default fp(async function sheddingPlugin (fastify: FastifyInstance) {
  const { maxEventLoopDelayMs, maxHeapUsedPercent, maxInFlight } = fastify.config
  const maxHeapUsedBytes = Math.floor(getHeapStatistics().heap_size_limit * maxHeapUsedPercent / 100)
  /** The sampled signal past its threshold in the last window, if any: every request is shed while it is. */
  let sampled: ShedReason | null = null
  let inFlight = 0
  /** Whether the start is over: the instance listens, or (never listening: inject) got its first request. */
  let serving = false
  /** The event loop's figures and the sampling timer, while sampling is on. */
  let loop: LoopWindow | undefined
  let timer: NodeJS.Timeout | undefined
  // The start ends here: what the loop did before (the demo's seeding comes between ready and
  // listen) is not the traffic's.
  const startServing = (): void => {
    serving = true
    loop?.restart()
    timer?.refresh()
    sampled = null
  }

  if (maxEventLoopDelayMs > 0 || maxHeapUsedBytes > 0) {
    const sample = (): void => {
      if (!serving) return
      const was = sampled
      const { delayMs, busy, onCpu } = loop?.take() ?? { delayMs: 0, busy: 0, onCpu: 0 }
      if (maxEventLoopDelayMs > 0 && delayMs > maxEventLoopDelayMs && busy >= BUSY_SHARE && onCpu >= ON_CPU_SHARE) sampled = 'event_loop_delay'
      else if (maxHeapUsedBytes > 0 && getHeapStatistics().used_heap_size > maxHeapUsedBytes) sampled = 'heap'
      else sampled = null
      if (sampled !== was) {
        const figures = { reason: sampled ?? was, delayMs: Math.round(delayMs), busyPercent: Math.round(busy * 100), onCpuPercent: Math.round(onCpu * 100) }
        if (sampled !== null) fastify.log.warn(figures, 'load shedding: every request is refused 503 until the next sample')
        else fastify.log.info(figures, 'load shedding ended')
      }
    }
    fastify.addHook('onReady', (done) => {
      if (maxEventLoopDelayMs > 0) loop = new LoopWindow()
      timer = setInterval(sample, SAMPLE_MS).unref()
      done()
    })
    fastify.addHook('onListen', (done) => {
      startServing()
      done()
    })
    fastify.addHook('onClose', (_instance, done) => {
      clearInterval(timer)
      loop?.stop()
      done()
    })
  }

  fastify.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions // a getter that builds an object at each read
    if (!serving) startServing()
    if (route.url === '/healthz') { done(); return }
    if (sampled !== null) { done(new OverloadedError(sampled)); return }
    if (maxInFlight === 0) { done(); return }
    // An open stream is not a request in progress (it would hold the count for hours), but a
    // new one is refused like any request while the instance is past the bound.
    const access = route.config.access
    if (access?.kind === 'key' && access.stream === true) {
      done(inFlight >= maxInFlight ? new OverloadedError('in_flight') : undefined)
      return
    }
    inFlight++
    // 'close' comes once the response is sent and also when the client goes away first.
    reply.raw.once('close', () => { inFlight-- })
    done(inFlight > maxInFlight ? new OverloadedError('in_flight') : undefined)
  })
}, { name: 'shedding', dependencies: ['config', 'error-handler'] })
