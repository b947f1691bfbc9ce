// Load shedding: past what the instance can serve (requests in progress, mean event-loop delay
// over the last second, or heap in use), requests are answered at once with 503
// service_unavailable and retry-after, instead of every client's latency growing. /healthz is
// exempt (see routes/health.ts).
//
// Requests in progress are what catches a flood of connections: under one, the event loop's delay
// stays low while requests queue, because the waiting happens in socket buffers and in Redis
// round trips, not in the loop (docs/benchmarks-history.md).
import fp from 'fastify-plugin'
import underPressure from '@fastify/under-pressure'
import type { FastifyInstance } from 'fastify'
import { getHeapStatistics } from 'node:v8'
import { OVERLOAD_RETRY_AFTER_SECONDS } from '../plugins/error-handler.js'

/** Why a request was shed: the signal past its threshold. */
export type ShedReason = 'in_flight' | 'event_loop_delay' | 'heap'
export const SHED_REASONS: readonly ShedReason[] = ['in_flight', 'event_loop_delay', 'heap']

/** A request refused by load shedding, with the signal that refused it (error-handler.ts answers it). */
export class OverloadedError extends Error {
  readonly code = 'FST_UNDER_PRESSURE'
  readonly statusCode = 503
  readonly reason: ShedReason

  constructor (reason: ShedReason) {
    super(`overloaded: ${reason}`)
    this.reason = reason
  }
}

const SHED_REASON_BY_TYPE: Readonly<Record<string, ShedReason>> = {
  [underPressure.TYPE_EVENT_LOOP_DELAY]: 'event_loop_delay',
  [underPressure.TYPE_HEAP_USED_BYTES]: 'heap'
}

export default fp(async function underPressurePlugin (fastify: FastifyInstance) {
  const { maxEventLoopDelayMs, maxHeapUsedPercent, maxInFlight } = fastify.config
  if (maxInFlight > 0) {
    let inFlight = 0
    fastify.addHook('onRequest', (request, reply, done) => {
      const route = request.routeOptions // a getter that builds an object at each read
      if (route.url === '/healthz') { done(); return }
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
  }
  await fastify.register(underPressure, {
    maxEventLoopDelay: maxEventLoopDelayMs,
    maxHeapUsedBytes: Math.floor(getHeapStatistics().heap_size_limit * maxHeapUsedPercent / 100),
    // The refusal goes through the error handler (FST_UNDER_PRESSURE), in the contract's shape,
    // naming the signal (for the metrics).
    retryAfter: OVERLOAD_RETRY_AFTER_SECONDS,
    pressureHandler: async (_request, _reply, type) => {
      throw new OverloadedError(SHED_REASON_BY_TYPE[type] ?? 'event_loop_delay')
    }
  })
}, { name: 'under-pressure', dependencies: ['config', 'error-handler'] })
