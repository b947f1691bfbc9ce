// The HTTP server's limits and timeouts, derived from the config: buildApp applies them, so the
// server and the tests run with the same ones. docs/operating.md states them.
import type { Server } from 'node:http'
import type { FastifyHttpOptions } from 'fastify'
import type { Config } from '../config.js'
import { clientErrorHandler } from './client-errors.js'

/** Request line plus headers; Node answers 431 past it. */
export const MAX_HEADER_BYTES = 16 * 1024
/** Request bodies: the read API takes none, and the write API's routes that take more set their own; 413 past it. */
export const BODY_LIMIT_BYTES = 16 * 1024
/** Above common load balancers' 60 s idle timeout, so the balancer closes first. */
export const KEEP_ALIVE_TIMEOUT_MS = 75_000
/** How often Node looks for requests past their timeout (its default of 30 s cut late). */
export const TIMEOUT_CHECK_INTERVAL_MS = 500

export function httpServerOptions (config: Config): FastifyHttpOptions<Server> {
  return {
    connectionTimeout: config.requestTimeoutMs, // a connection silent this long is dropped
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    bodyLimit: BODY_LIMIT_BYTES,
    http: {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: config.requestTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS
    },
    clientErrorHandler,
    forceCloseConnections: 'idle',
    // pipeline/lifecycle.ts answers requests that arrive while closing, in the contract's shape.
    return503OnClosing: false
  }
}
