// Node's `clientError`: the requests that never reach Fastify (a malformed request line or
// header, headers over the size limit, a client too slow to send its request). They get a raw
// HTTP response in the contract's error shape when the socket can still take one.
import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { SECURITY_HEADERS } from './security-headers.js'
import { type PublicErrorCode as ErrorCode, STATUS_BY_CODE } from './error-codes.js'

interface ClientError extends Error {
  code?: string
}

function classify (err: ClientError): { code: ErrorCode, message: string } {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { code: 'request_timeout', message: 'the request was not received in time' }
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    return { code: 'headers_too_large', message: 'the request line and headers exceed 16 KiB' }
  }
  return { code: 'bad_request', message: 'malformed HTTP request' }
}

/** The raw response: status line, headers and the JSON body, then the connection closes. */
export function rawErrorResponse (code: ErrorCode, message: string): string {
  const status = STATUS_BY_CODE[code]
  const error = STATUS_CODES[status] ?? 'Error'
  const body = JSON.stringify({ statusCode: status, error, code, message })
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
    'x-request-id': randomUUID(),
    ...SECURITY_HEADERS
  }
  return `HTTP/1.1 ${status} ${error}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`
}

export function clientErrorHandler (this: FastifyInstance, err: ClientError, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const { code, message } = classify(err)
  const status = STATUS_BY_CODE[code]
  // Debug only: these are cheap for anyone to cause, and a line each would be a log flood.
  this.log.debug({ code: err.code, status }, 'client error')
  if (socket.writable) socket.write(rawErrorResponse(code, message))
  socket.destroy()
}
