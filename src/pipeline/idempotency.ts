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
// A 5xx is not kept: the retry runs again, safely, by those operation ids. So that the retry
// finds no claim in its way, a request that fails frees its own claim (the claim names its owner;
// a compare-and-delete, release-claim-1.lua) in the background once Redis answers: also a claim
// whose SET timed out against a stalled Redis and ran only when Redis resumed (the release goes
// out after the SET on the same connection, and is tried again until Redis answers it).
//
// The hook serves the routes whose body is parsed before the handler (declared `idempotent`,
// src/pipeline/access.ts, which attaches it). The
// import's body is a stream, read only as it is handled, so that route takes the key itself
// (routes/admin/transfer.ts) with the functions the hook is made of, and sets
// request.idempotency once it has read its body, for onSend to store its answer here.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createHash, type Hash, randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError, InvalidParameterError } from '../errors.js'
import { IDEMPOTENCY_KEY_PATTERN } from '../schemas/admin.js'
import type { RedisClient } from '../redis/client.js'
import { redisUnavailability } from '../redis/errors.js'

/** How long a response is kept for a retry with the same key. */
export const IDEMPOTENCY_WINDOW_MS = 10 * 60_000
/** How long a claim without an answer holds (a process that died mid-request frees it then). */
const PENDING_MS = 60_000
const IN_USE_WAIT_MS = 5000
const POLL_MS = 25
/** Pauses between tries of a release while Redis does not answer: doubling from the first to the last. */
const RELEASE_FIRST_PAUSE_MS = 50
const RELEASE_MAX_PAUSE_MS = 1000
const KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN)

/** What a key holds: the first request's claim (no status yet), then its answer. */
interface Stored {
  /** Absent from the claim of a request whose body is read only as it is handled. */
  fingerprint?: string
  /** The claim's request (RequestKey.owner): only it frees the claim. */
  owner?: string
  status?: number
  contentType?: string
  body?: string
}

/** The answer stored under a key, to be sent again. */
export type StoredAnswer = Stored & { status: number }

/** A request's Idempotency-Key as it is kept: per token. */
export interface RequestKey {
  redisKey: string
  /** The base of the operation ids of this request's writes. */
  opBase: string
  /** This request's own id, written into its claim so that it frees only its own. */
  owner: string
}

interface Claim extends RequestKey {
  fingerprint: string
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The key this request claimed, with its fingerprint: onSend stores the answer under it. */
    idempotency: Claim | null
    /** The fingerprint of the request as sent, taken before validation (with an Idempotency-Key only). */
    fingerprint: string | null
  }
  interface FastifyInstance {
    /** preHandler hook of an idempotent route: replays the answer kept under the request's Idempotency-Key, or claims the key. */
    claimIdempotencyKey: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>
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

/**
 * The request's Idempotency-Key, checked (400 invalid_parameter if malformed); undefined when it
 * sends none, or has no token to keep it under.
 */
export function requestKeyOf (request: FastifyRequest): RequestKey | undefined {
  const header = request.headers['idempotency-key']
  if (header === undefined || request.token === null) return undefined
  if (typeof header !== 'string' || !KEY.test(header)) {
    throw new InvalidParameterError('Idempotency-Key must be 1 to 128 characters of A-Z a-z 0-9 . _ : -')
  }
  return {
    redisKey: request.server.keys.idempotency(request.token.id, header),
    opBase: createHash('sha256').update(`${request.token.id}:${header}`).digest('base64url').slice(0, 24),
    owner: randomBytes(12).toString('base64url')
  }
}

/**
 * The hash of a request's fingerprint, begun with its method and URL: the caller adds the body
 * (as parsed, or its bytes as they stream in) and takes the digest (base64url).
 */
export function fingerprintHash (request: FastifyRequest): Hash {
  return createHash('sha256').update(`${request.method} ${request.url}\n`)
}

/**
 * `value` as JSON with every object's names in order (UTF-16 code units, as RFC 8785 sorts them;
 * its numbers are JSON.stringify's too): the same body with its names in another order reads
 * the same, while `"7"` and `7` differ. Numbers are taken as JSON.parse read them: two bodies
 * that differ only past a double's precision are applied alike too (an id, where that would
 * matter, is refused as a number by validation, before any claim).
 */
export function canonicalJson (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>
    return `{${Object.keys(record).sort().map((name) => `${JSON.stringify(name)}:${canonicalJson(record[name])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/**
 * Claims `key` for this request (null: it now holds it, as pending for PENDING_MS), or finds the
 * answer of the first request that did. A claim still pending is waited for (IN_USE_WAIT_MS,
 * then 409 idempotency_key_in_use). `fingerprint` is compared at once, with a pending claim too
 * (another request: 422 idempotency_key_reused); a route that has not read its body yet passes
 * none, claims without one, and compares the answer's fingerprint itself once it has. When the
 * claim's SET fails (Redis stalled past the command timeout, say: it may still run once Redis
 * resumes), the claim is freed in the background (releaseClaim) and the error thrown.
 */
export async function claimOrFind (redis: RedisClient, key: RequestKey, fingerprint?: string): Promise<StoredAnswer | null> {
  const deadline = Date.now() + IN_USE_WAIT_MS
  for (;;) {
    let claimed: string | null
    try {
      claimed = await redis.set(key.redisKey, JSON.stringify({ fingerprint, owner: key.owner }), 'PX', PENDING_MS, 'NX')
    } catch (err) {
      releaseClaim(redis, key)
      throw err
    }
    if (claimed === 'OK') return null
    const raw = await redis.get(key.redisKey)
    if (raw === null) continue // expired in between: claim it
    const stored = JSON.parse(raw) as Stored
    if (fingerprint !== undefined && stored.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError()
    if (stored.status !== undefined) return { ...stored, status: stored.status }
    if (Date.now() >= deadline) throw new IdempotencyKeyInUseError()
    await sleep(POLL_MS)
  }
}

/** Sends a stored answer again, marked `idempotent-replayed: true`. */
export async function replay (reply: FastifyReply, answer: StoredAnswer): Promise<FastifyReply> {
  reply.code(answer.status).header('idempotent-replayed', 'true')
  if (answer.contentType !== undefined) reply.type(answer.contentType)
  return await reply.send(answer.body)
}

/**
 * Frees this request's claim, which will get no answer, so that a retry runs as a first request.
 * In the background, never throwing: tried again while Redis does not answer (the claim's own
 * SET may be waiting in the same connection's queue, or be resent after a reconnect: the release
 * goes out after it), until it is answered or the claim has expired by itself (PENDING_MS).
 */
export function releaseClaim (redis: RedisClient, key: RequestKey): void {
  const giveUpAt = Date.now() + PENDING_MS
  const release = async (): Promise<void> => {
    for (let pause = RELEASE_FIRST_PAUSE_MS; ; pause = Math.min(2 * pause, RELEASE_MAX_PAUSE_MS)) {
      try {
        await redis.releaseClaim(key.redisKey, key.owner)
        return
      } catch (err) {
        if (redisUnavailability(err, redis) === null || Date.now() + pause >= giveUpAt) return
      }
      await sleep(pause)
    }
  }
  release().catch(() => {})
}

export default fp(async function idempotencyPlugin (fastify: FastifyInstance) {
  const { redisClient: redis } = fastify
  fastify.decorateRequest('idempotency', null)
  fastify.decorateRequest('fingerprint', null)

  // The body as sent: validation may fill in defaults.
  fastify.addHook('preValidation', async (request: FastifyRequest) => {
    const access = request.routeOptions.config.access
    if (access?.kind !== 'token' || access.idempotent !== true || request.headers['idempotency-key'] === undefined) return
    request.fingerprint = fingerprintHash(request).update(canonicalJson(request.body ?? null)).digest('base64url')
  })

  fastify.decorate('claimIdempotencyKey', async function claimIdempotencyKey (request: FastifyRequest, reply: FastifyReply) {
    const key = requestKeyOf(request)
    const fingerprint = request.fingerprint
    if (key === undefined || fingerprint === null) return
    const answer = await claimOrFind(redis, key, fingerprint)
    if (answer !== null) return await replay(reply, answer)
    request.idempotency = { ...key, fingerprint }
  })

  fastify.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const claim = request.idempotency
    if (claim === null) return payload
    request.idempotency = null // once
    if (reply.statusCode >= 500) {
      releaseClaim(redis, claim)
      return payload
    }
    const contentType = reply.getHeader('content-type')
    const stored: Stored = {
      fingerprint: claim.fingerprint,
      status: reply.statusCode,
      contentType: typeof contentType === 'string' ? contentType : undefined,
      body: typeof payload === 'string' ? payload : undefined
    }
    try {
      await redis.set(claim.redisKey, JSON.stringify(stored), 'PX', IDEMPOTENCY_WINDOW_MS)
    } catch (err) {
      // The write is done and its answer goes out; a retry that finds no answer runs again,
      // applied once by the operation ids it names (opIdFor).
      if (redisUnavailability(err, redis) === null) throw err
      releaseClaim(redis, claim)
    }
    return payload
  })
}, { name: 'idempotency', dependencies: ['redis', 'token-auth'] })
