// Shutdown in two steps, driven by server.ts. Drain: /readyz answers 503 so load balancers
// stop sending, every response says `connection: close` so clients open their next connection
// elsewhere, and requests are still served. Close (Fastify's close): no new connections,
// requests in flight finish, and a request that still arrives on an open connection is answered
// 503 service_unavailable in the contract's shape (Fastify's own 503 has no code).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Server as NetServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { ServiceUnavailableError } from '../errors.js'

export interface Lifecycle {
  /** True from drain() (or close) on: readiness fails, connections are not kept alive. */
  readonly draining: boolean
  /** True once Fastify is closing: new requests are refused. */
  readonly closing: boolean
  drain: () => void
  /** Calls `listener` once, when the drain begins (at once if it has begun): open streams end then. */
  onDrain: (listener: () => void) => void
}

declare module 'fastify' {
  interface FastifyInstance {
    lifecycle: Lifecycle
  }
}

/**
 * After the drain, how long requests in flight get to finish before the process gives up and
 * exits 1 (server.ts). Requests are bounded by REDIS_COMMAND_TIMEOUT_MS, so this is ample; the
 * default drain plus this is 9 s, within Docker's default 10 s stop grace (docker-compose.yml
 * sets a longer one).
 */
export const CLOSE_GRACE_MS = 4000

/** Seconds a client refused by a closing instance is told to wait (another instance serves). */
const CLOSING_RETRY_AFTER_SECONDS = 1
/** How often a closing instance closes the connections that went idle since it last looked. */
const CLOSING_SWEEP_MS = 50
/**
 * How long a closing instance, no longer accepting connections, still serves those it has
 * accepted before it closes the idle ones: a client's request can be on its way on a
 * connection accepted a moment before (its bytes not yet read), and would be reset.
 */
const ACCEPTED_GRACE_MS = 250

export default fp(async function lifecyclePlugin (fastify: FastifyInstance) {
  let draining = false
  let closing = false
  const drainListeners: Array<() => void> = []
  function drain (): void {
    if (draining) return
    draining = true
    for (const listener of drainListeners.splice(0)) listener()
  }
  fastify.decorate('lifecycle', {
    get draining () { return draining },
    get closing () { return closing },
    drain,
    onDrain (listener: () => void) {
      if (draining) listener()
      else drainListeners.push(listener)
    }
  })

  // Callback hooks: every request passes here, and an async hook costs a promise each.
  // One onRequest hook (no onSend): a request that comes while draining is answered with
  // `connection: close`, so the client opens its next connection elsewhere.
  fastify.addHook('onRequest', (_request, reply, done) => {
    if (!draining) { done(); return }
    reply.header('connection', 'close')
    done(closing ? new ServiceUnavailableError('this instance is shutting down; retry', CLOSING_RETRY_AFTER_SECONDS) : undefined)
  })
  // Fastify closes the connections that are idle when the close begins; one whose request was
  // still in flight turns idle only when its answer is sent, and would then stay open until its
  // keep-alive timeout (a minute), holding the close. So idle connections are closed again every
  // CLOSING_SWEEP_MS until the server has closed.
  //
  // Node's http close closes the listener and the idle connections at once, and to Node a
  // connection accepted whose request has not been read yet is idle: under pollers that
  // reconnect (as every client does while draining), a request already on its way was cut, or
  // answered 503 as a request arriving during the close. (Connections still in the kernel's
  // accept queue when the listener closes are reset by the kernel: that, no server avoids.)
  // So the listener closes first (net.Server's close: the http one would close the idle
  // connections too), the connections already accepted are served for ACCEPTED_GRACE_MS
  // as during the drain, and only then are idle connections closed and new requests refused.
  let sweep: NodeJS.Timeout | undefined
  fastify.addHook('preClose', async () => {
    drain()
    if (fastify.server.listening) {
      NetServer.prototype.close.call(fastify.server)
      await sleep(ACCEPTED_GRACE_MS)
    }
    closing = true
    sweep = setInterval(() => { fastify.server.closeIdleConnections() }, CLOSING_SWEEP_MS).unref()
  })
  fastify.addHook('onClose', async () => { clearInterval(sweep) })
}, { name: 'lifecycle' })
