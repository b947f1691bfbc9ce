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

/** The fields of a request's line, after pino's own (level, time, pid, hostname), before `msg`. */
export interface RequestLine {
  reqId: string
  method: string
  /** Path and query as the client sent them (the value of a query parameter named like a secret masked). */
  url: string
  /** The route's pattern; undefined when no route matched. */
  route: string | undefined
  statusCode: number
  /** The contract's error code of an error answer (`invalid_api_key`, `rate_limited`…). */
  code: string | undefined
  ms: number
  /** The client's address (X-Forwarded-For only from TRUST_PROXY's proxies). */
  ip: string
  guild: string | undefined
  keyId: string | undefined
  /** The write API's token id (never the token), once authenticated. */
  tokenId: string | undefined
}

/** A query parameter whose name says it holds a secret: no endpoint takes one, but a client may send its key that way by mistake. */
const SECRET_PARAMETER = /([?&][^=&]*(?:key|token|secret|password)[^=&]*=)[^&]*/gi

/** `url` with the values of its secret-looking query parameters masked. */
export function loggableUrl (url: string): string {
  return url.includes('?') ? url.replace(SECRET_PARAMETER, '$1[redacted]') : url
}

/** The request's one log line, when it completes: what an operator filters on; a key's or token's id, never the key or token. */
export class RequestLogController extends LogController {
  override incomingRequest (): void {}

  override requestCompleted (error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    // Through the root logger, with the request id: the request's own child is made lazily.
    const log = request.server.log
    const failed = error !== null && error !== undefined
    if (!failed && !infoEnabled(log)) return
    const line: RequestLine = {
      reqId: request.id,
      method: request.method,
      url: loggableUrl(request.url),
      route: request.routeOptions.url,
      statusCode: reply.statusCode,
      code: request.errorCode ?? undefined,
      ms: Math.round(reply.elapsedTime * 100) / 100,
      ip: request.ip,
      guild: (request.params as { guild_id?: string } | undefined)?.guild_id,
      keyId: request.apiKey?.id,
      tokenId: request.token?.id
    }
    if (failed) log.error({ ...line, err: error }, 'request')
    else writeRequestLine(log, line)
  }
}

function infoEnabled (log: FastifyBaseLogger): boolean {
  return (pino.levels.values[log.level] ?? Infinity) <= (pino.levels.values.info as number)
}

/**
 * Writes a successful request's line to the root logger's stream: the line `log.info(line,
 * 'request')` writes, made as one string (the stream and the bindings are read through
 * `pino.symbols`, which pino documents for integrations). Its fields are fixed and none is
 * secret, so pino's `info` (object serialization, redaction's copy) would be work for nothing
 * on every request (docs/benchmarks-history.md has the figures).
 *
 * The lines of one event-loop turn go to the stream in one write, at the end of the turn
 * (after any other line written in that turn): sonic-boom measures its whole pending buffer at
 * each write and starts a file write when idle, so line by line it would start a file write
 * per request.
 */
export function writeRequestLine (root: FastifyBaseLogger, line: RequestLine): void {
  const logger = root as unknown as Record<symbol, unknown>
  const stream = logger[pino.symbols.streamSym] as pino.DestinationStream
  const bindings = logger[pino.symbols.chindingsSym] as string // ',"pid":…,"hostname":"…"'
  const text = `{"level":30,"time":${Date.now()}${bindings},"reqId":${JSON.stringify(line.reqId)},` +
    `"method":${JSON.stringify(line.method)},"url":${JSON.stringify(line.url)},${optional('route', line.route)}` +
    `"statusCode":${line.statusCode},${optional('code', line.code)}"ms":${line.ms},"ip":${JSON.stringify(line.ip)},` +
    `${optional('guild', line.guild)}${optional('keyId', line.keyId)}${optional('tokenId', line.tokenId)}"msg":"request"}\n`
  if (pendingLines.size === 0) setImmediate(writePendingLines)
  pendingLines.set(stream, (pendingLines.get(stream) ?? '') + text)
}

/** Request lines of the current turn, by stream. */
const pendingLines = new Map<pino.DestinationStream, string>()

function writePendingLines (): void {
  for (const [stream, lines] of pendingLines) stream.write(lines)
  pendingLines.clear()
}

// An exit within the turn (process.exit) still writes them, and has the stream write them now.
process.on('exit', () => {
  const streams = [...pendingLines.keys()]
  writePendingLines()
  for (const stream of streams) {
    try { (stream as { flushSync?: () => void }).flushSync?.() } catch { /* nothing more can be done at exit */ }
  }
})

/** `"name":value,` as JSON, or nothing for a field that is undefined (as pino leaves it out). */
function optional (name: string, value: string | undefined): string {
  return value === undefined ? '' : `"${name}":${JSON.stringify(value)},`
}

type Bindings = Parameters<FastifyBaseLogger['child']>[0]
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1]
type LevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

/**
 * A request's logger (`request.log`), made only when something logs through it. Most requests
 * log nothing but their one line, and a pino child per request would be made for nothing.
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
