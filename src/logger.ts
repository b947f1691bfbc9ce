// pino options shared by the server and tests: JSON lines, request ids, no secret ever logged.
import type { FastifyServerOptions } from 'fastify'

export function loggerOptions (level: string): FastifyServerOptions['logger'] {
  return {
    level,
    // Fastify's request serializer logs no headers; these paths guard anything that would.
    redact: {
      paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', 'request.headers["x-api-key"]', 'key', '*.key'],
      censor: '[redacted]'
    }
  }
}
