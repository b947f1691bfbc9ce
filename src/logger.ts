// pino options shared by the server and tests: JSON lines, request ids, no secret ever logged;
// and one line per request (Fastify's default is two, and the second has no route).
import { pino } from 'pino'
import { type FastifyReply, type FastifyRequest, type FastifyServerOptions, LogController } from 'fastify'

export function loggerOptions (level: string): FastifyServerOptions['logger'] {
  return {
    level,
    // Asynchronous writes: under load, lines that come while a write is in flight go out
    // together with the next one, instead of a system call per line on the event loop.
    stream: pino.destination({ dest: 1, sync: false }),
    // Fastify's request serializer logs no headers; these paths guard anything that would.
    redact: {
      paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', 'request.headers["x-api-key"]', 'key', '*.key'],
      censor: '[redacted]'
    }
  }
}

/** The request's one log line, when it completes: what an operator filters on; a key's id, never the key. */
export class RequestLogController extends LogController {
  override incomingRequest (): void {}

  override requestCompleted (error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: request.method,
      route: request.routeOptions.url,
      statusCode: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100,
      guild: (request.params as { guild_id?: string } | undefined)?.guild_id,
      keyId: request.apiKey?.id
    }
    if (error !== null && error !== undefined) reply.log.error({ ...line, err: error }, 'request')
    else reply.log.info(line, 'request')
  }
}
