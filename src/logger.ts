// pino options shared by the server and tests: JSON lines, request ids, no secret ever logged;
// and one line per request (Fastify's default is two, and the second has no route).
import { pino } from 'pino'
import {
  type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions, LogController
} from 'fastify'

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
    // Through the root logger, with the request id: the request's own child is made lazily.
    const log = request.server.log
    const failed = error !== null && error !== undefined
    if (!failed && !infoEnabled(log)) return
    const line = {
      reqId: request.id,
      method: request.method,
      route: request.routeOptions.url,
      statusCode: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100,
      guild: (request.params as { guild_id?: string } | undefined)?.guild_id,
      keyId: request.apiKey?.id
    }
    if (failed) log.error({ ...line, err: error }, 'request')
    else accessLogger(log).info(line, 'request')
  }
}

function infoEnabled (log: FastifyBaseLogger): boolean {
  return (pino.levels.values[log.level] ?? Infinity) <= (pino.levels.values.info as number)
}

const accessLoggers = new WeakMap<FastifyBaseLogger, pino.Logger>()

/**
 * The logger of a successful request's line: the root's stream, without its redaction. The
 * line's fields are fixed and none is secret, and pino's redaction copies every object it is
 * given: in a CPU profile of cached reads, about a third of the line's cost, which is itself
 * about a tenth of the busy time.
 */
function accessLogger (root: FastifyBaseLogger): pino.Logger {
  let logger = accessLoggers.get(root)
  if (logger === undefined) {
    const stream = (root as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym]
    logger = pino({ level: 'info' }, stream)
    accessLoggers.set(root, logger)
  }
  return logger
}

type Bindings = Parameters<FastifyBaseLogger['child']>[0]
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1]
type LevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

/**
 * A request's logger (`request.log`), made only when something logs through it. Most requests
 * log nothing but their one line, and a pino child per request cost 2 % of the busy time.
 */
class LazyChildLogger {
  readonly #parent: FastifyBaseLogger
  readonly #bindings: Bindings
  readonly #options: ChildOptions
  #made: FastifyBaseLogger | undefined

  constructor (parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }

  #child (): FastifyBaseLogger {
    this.#made ??= this.#parent.child(this.#bindings, this.#options)
    return this.#made
  }

  #log (level: LevelName, args: unknown[]): void {
    Reflect.apply(this.#child()[level], this.#made, args)
  }

  get level (): string { return this.#made?.level ?? this.#options?.level ?? this.#parent.level }
  set level (level: string) { this.#child().level = level }
  fatal (...args: unknown[]): void { this.#log('fatal', args) }
  error (...args: unknown[]): void { this.#log('error', args) }
  warn (...args: unknown[]): void { this.#log('warn', args) }
  info (...args: unknown[]): void { this.#log('info', args) }
  debug (...args: unknown[]): void { this.#log('debug', args) }
  trace (...args: unknown[]): void { this.#log('trace', args) }
  silent (...args: unknown[]): void { this.#log('silent', args) }
  child (bindings: Bindings, options?: ChildOptions): FastifyBaseLogger { return this.#child().child(bindings, options) }
}

export function lazyChildLoggerFactory (logger: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger
}
