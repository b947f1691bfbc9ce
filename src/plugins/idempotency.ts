// `Idempotency-Key` for the write API's requests: the same key with the same body (same method
// and URL too) within 10 minutes gets the first request's response, and nothing is applied
// again; the same key with another body is 422 idempotency_key_reused.
//
// The first request claims the key in Redis (SET NX, under the token that sent it) before its
// handler runs, and stores its response there in onSend, before a byte is written to the
// socket: so a request whose client was cut off after sending the body still leaves its answer
// for the retry. A retry that finds the claim still pending waits for the answer (up to
// IN_USE_WAIT_MS; then 409 idempotency_key_in_use). Member writes also name their operations
// after the key (opIdFor), so even a retry past a lost claim is applied once by the writer.
// A 5xx is not kept: the retry runs again, safely, by those operation ids.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError, InvalidParameterError } from '../errors.js'
import { IDEMPOTENCY_KEY_PATTERN } from '../schemas/admin.js'

/** How long a response is kept for a retry with the same key. */
export const IDEMPOTENCY_WINDOW_MS = 10 * 60_000
/** How long a claim without an answer holds (a process that died mid-request frees it then). */
const PENDING_MS = 60_000
const IN_USE_WAIT_MS = 5000
const POLL_MS = 25
const KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN)

interface Stored {
  fingerprint: string
  status?: number
  contentType?: string
  body?: string
}

interface Claim {
  redisKey: string
  fingerprint: string
  /** The base of the operation ids of this request's writes. */
  opBase: string
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: Claim | null
  }
  interface FastifyContextConfig {
    /** The route takes Idempotency-Key. */
    idempotent?: boolean
  }
}

/**
 * The operation id for write `index` of a request: the caller's own `given`, else one derived
 * from the request's Idempotency-Key (so a retry names the same operations), else undefined
 * (the writer makes one).
 */
export function opIdFor (request: FastifyRequest, index: number, given?: string): string | undefined {
  if (given !== undefined) return given
  return request.idempotency === null ? undefined : `${request.idempotency.opBase}.${index}`
}

export default fp(async function idempotencyPlugin (fastify: FastifyInstance) {
  const { redisClient: redis, keys } = fastify
  fastify.decorateRequest('idempotency', null)

  fastify.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['idempotency-key']
    if (header === undefined || request.routeOptions.config.idempotent !== true || request.token === null) return
    if (typeof header !== 'string' || !KEY.test(header)) {
      throw new InvalidParameterError('Idempotency-Key must be 1 to 128 characters of A-Z a-z 0-9 . _ : -')
    }
    const fingerprint = createHash('sha256').update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`).digest('base64url')
    const redisKey = keys.idempotency(request.token.id, header)
    const deadline = Date.now() + IN_USE_WAIT_MS
    for (;;) {
      if (await redis.set(redisKey, JSON.stringify({ fingerprint }), 'PX', PENDING_MS, 'NX') === 'OK') {
        const opBase = createHash('sha256').update(`${request.token.id}:${header}`).digest('base64url').slice(0, 24)
        request.idempotency = { redisKey, fingerprint, opBase }
        return
      }
      const raw = await redis.get(redisKey)
      if (raw === null) continue // expired in between: claim it
      const stored = JSON.parse(raw) as Stored
      if (stored.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError()
      if (stored.status !== undefined) {
        reply.code(stored.status).header('idempotent-replayed', 'true')
        if (stored.contentType !== undefined) reply.type(stored.contentType)
        return await reply.send(stored.body)
      }
      if (Date.now() >= deadline) throw new IdempotencyKeyInUseError()
      await sleep(POLL_MS)
    }
  })

  fastify.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const claim = request.idempotency
    if (claim === null) return payload
    request.idempotency = null // once
    if (reply.statusCode >= 500) {
      await redis.del(claim.redisKey)
      return payload
    }
    const contentType = reply.getHeader('content-type')
    const stored: Stored = {
      fingerprint: claim.fingerprint,
      status: reply.statusCode,
      contentType: typeof contentType === 'string' ? contentType : undefined,
      body: typeof payload === 'string' ? payload : undefined
    }
    await redis.set(claim.redisKey, JSON.stringify(stored), 'PX', IDEMPOTENCY_WINDOW_MS)
    return payload
  })
}, { name: 'idempotency', dependencies: ['redis', 'token-auth'] })
