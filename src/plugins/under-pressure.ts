// Load shedding: past what the instance can serve (mean event-loop delay over the last second,
// or heap in use), requests are answered at once with 503 service_unavailable and retry-after,
// instead of every client's latency growing. /healthz is exempt (see routes/health.ts).
import fp from 'fastify-plugin'
import underPressure from '@fastify/under-pressure'
import type { FastifyInstance } from 'fastify'
import { getHeapStatistics } from 'node:v8'
import { OVERLOAD_RETRY_AFTER_SECONDS } from './error-handler.js'

export default fp(async function underPressurePlugin (fastify: FastifyInstance) {
  const { maxEventLoopDelayMs, maxHeapUsedPercent } = fastify.config
  await fastify.register(underPressure, {
    maxEventLoopDelay: maxEventLoopDelayMs,
    maxHeapUsedBytes: Math.floor(getHeapStatistics().heap_size_limit * maxHeapUsedPercent / 100),
    // The refusal goes through the error handler (FST_UNDER_PRESSURE), in the contract's shape.
    retryAfter: OVERLOAD_RETRY_AFTER_SECONDS
  })
}, { name: 'under-pressure', dependencies: ['config', 'error-handler'] })
