// The one place errors become responses, in the contract's shape
// `{ statusCode, error, code, message }`, whatever their source.
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { STATUS_CODES } from 'node:http'
import { DailyAlreadyClaimedError, IdempotencyKeyInUseError, LeaderboardError, RateLimitedError, ServiceUnavailableError } from '../errors.js'
import { redisUnavailability } from '../redis/errors.js'
import { validationMessage } from '../schemas/messages.js'
import { type ErrorCode, isErrorCode, statusOfCode } from '../http/error-codes.js'

/** The contract's code for an HTTP-layer status Fastify or Node raised. */
const CODE_BY_STATUS: Readonly<Record<number, ErrorCode>> = {
  404: 'not_found',
  408: 'request_timeout',
  413: 'payload_too_large',
  431: 'headers_too_large',
  503: 'service_unavailable'
}

/** Seconds a client is told to wait when the instance sheds load (see pipeline/shedding.ts). */
const OVERLOAD_RETRY_AFTER_SECONDS = 2

declare module 'fastify' {
  interface FastifyRequest {
    /** The contract's error code of the answer, when it is an error (for the request's log line). */
    errorCode: ErrorCode | null
  }
}

/** Sends the contract's error body for `code`. */
export function sendError (reply: FastifyReply, code: ErrorCode, message: string, extra?: Record<string, string>): FastifyReply {
  const statusCode = statusOfCode(code)
  reply.request.errorCode = code
  return reply.code(statusCode).type('application/json; charset=utf-8').send({
    statusCode, error: STATUS_CODES[statusCode] ?? 'Error', code, message, ...extra
  })
}

export default fp(async function errorHandlerPlugin (fastify: FastifyInstance) {
  fastify.decorateRequest('errorCode', null)
  fastify.setErrorHandler(function (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    if (error.validation !== undefined) {
      return sendError(reply, 'invalid_parameter', validationMessage(error, request))
    }
    if (error instanceof RateLimitedError || error instanceof ServiceUnavailableError ||
        error instanceof DailyAlreadyClaimedError || error instanceof IdempotencyKeyInUseError) {
      reply.header('retry-after', error.retryAfterSeconds)
    }
    if (error instanceof DailyAlreadyClaimedError) {
      return sendError(reply, error.code as ErrorCode, error.message, { next_claim_at: error.nextClaimAt.toISOString() })
    }
    if (error instanceof LeaderboardError && isErrorCode(error.code)) {
      return sendError(reply, error.code, error.message)
    }
    const unavailable = redisUnavailability(error, fastify.redisClient)
    if (unavailable !== null) {
      // Counted, not logged: the outage log (redis/health.ts) reports failures by the interval.
      fastify.redisHealth.failed(unavailable, { request: true })
      reply.header('retry-after', unavailable.retryAfterSeconds)
      return sendError(reply, 'service_unavailable', `the data store cannot serve now; retry in ${unavailable.retryAfterSeconds} s`)
    }
    if (error.code === 'OVERLOADED') { // pipeline/shedding.ts
      reply.header('retry-after', OVERLOAD_RETRY_AFTER_SECONDS)
      return sendError(reply, 'service_unavailable', `this instance is overloaded; retry in ${OVERLOAD_RETRY_AFTER_SECONDS} s`)
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      const given = request.headers['content-type']
      return sendError(reply, 'unsupported_media_type', 'the body must be JSON, sent with content-type: application/json' +
        (given === undefined ? ' (none was given)' : ` (given: ${JSON.stringify(given.slice(0, 100))})`))
    }
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) {
      // Fastify's own client errors (malformed URL, body too large, unsupported body…).
      return sendError(reply, CODE_BY_STATUS[status] ?? 'invalid_parameter', error.message)
    }
    request.log.error({ err: error }, 'unexpected error')
    return sendError(reply, 'internal_error', 'an unexpected error occurred')
  })

  fastify.setNotFoundHandler(function (request: FastifyRequest, reply: FastifyReply) {
    return sendError(reply, 'not_found', `no route for ${request.method} ${request.url.split('?')[0] ?? ''}`)
  })
}, { name: 'error-handler', dependencies: ['redis'] })
