// The service's configuration: one TypeBox schema, its type derived from it, read from the
// environment and validated at start. Tests build a Config directly and never read `.env`.
import { type Static, Type } from 'typebox'
import { Value } from 'typebox/value'
import { isIP } from 'node:net'
import { DEFAULT_PLAN_LIMITS } from './plans.js'
import { ConfigError, DEFAULT_REDIS_PREFIX, envBoolean, REDIS_PREFIX_PATTERN, redisUrlProblem } from './redis-settings.js'

// The Redis settings are read by rules of their own module, which the CLI loads without TypeBox.
export { ConfigError, loadRedisConfig, type RedisConfig } from './redis-settings.js'

/** A whole number from `minimum` (1 or more) to `maximum`. */
function PositiveInteger (description: string, defaultValue: number, minimum = 1, maximum = 2 ** 31) {
  if (minimum < 1) throw new Error(`${description}: a positive integer starts at 1; where 0 means something, use ZeroOrPositive`)
  return Type.Integer({ minimum, maximum, default: defaultValue, description })
}

/** 0 to `maximum`, for a setting where 0 has a meaning of its own, which the description states. */
function ZeroOrPositive (description: string, defaultValue: number | undefined, maximum: number, zeroMeans: string) {
  return Type.Integer({ minimum: 0, maximum, ...(defaultValue === undefined ? {} : { default: defaultValue }), description: `${description}; 0: ${zeroMeans}` })
}

export const ConfigSchema = Type.Object({
  port: ZeroOrPositive('PORT: TCP port to listen on', 3000, 65535, 'any free port'),
  host: Type.String({ minLength: 1, default: '127.0.0.1', description: 'HOST: address to listen on' }),
  redisUrl: Type.Optional(Type.String({ minLength: 1, description: 'REDIS_URL: unset means the local demo Redis' })),
  redisCluster: Type.Boolean({ default: false, description: 'REDIS_CLUSTER: REDIS_URL lists Redis Cluster seed nodes' }),
  redisPrefix: Type.String({ pattern: REDIS_PREFIX_PATTERN, default: DEFAULT_REDIS_PREFIX, description: 'REDIS_PREFIX: prefix of every key' }),
  redisCommandTimeoutMs: PositiveInteger('REDIS_COMMAND_TIMEOUT_MS: slowest Redis answer before 503', 500, 10, 60_000),
  logLevel: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info', description: 'LOG_LEVEL' }),
  planLimits: Type.Object({
    free: PositiveInteger('requests per window, free plan', DEFAULT_PLAN_LIMITS.free),
    starter: PositiveInteger('requests per window, starter plan', DEFAULT_PLAN_LIMITS.starter),
    professional: PositiveInteger('requests per window, professional plan', DEFAULT_PLAN_LIMITS.professional)
  }, { default: {}, additionalProperties: false, description: 'PLAN_LIMITS: JSON, plan -> requests per window' }),
  rateLimitWindowMs: PositiveInteger('RATE_LIMIT_WINDOW_MS: sliding window length', 3_600_000, 1000),
  authFailureLimit: PositiveInteger('AUTH_FAILURE_LIMIT: failed authentications per client address per window', 30),
  authFailureWindowMs: PositiveInteger('AUTH_FAILURE_WINDOW_MS', 60_000, 1000),
  apiKeyCacheTtlMs: ZeroOrPositive('API_KEY_CACHE_TTL_MS: how long an instance trusts a key lookup (revocation delay)', 3000, 5000,
    'every request looks its key up'),
  responseCacheMb: ZeroOrPositive('RESPONSE_CACHE_MB: memory for cached read responses per instance', 64, 65536, 'off'),
  revalidationsPerSecond: ZeroOrPositive('REVALIDATIONS_PER_SECOND: free 304 revalidations per key per second per instance', 10, 1_000_000,
    'every 304 counts against the quota'),
  // What Fastify's trustProxy takes, less `true` (any client could then pick its address).
  trustProxy: Type.Union([
    Type.Literal(false),
    Type.Integer({ minimum: 1, maximum: 100, description: 'proxy hops in front of the service' }),
    Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, description: 'trusted proxies: addresses, CIDRs, loopback, linklocal, uniquelocal' })
  ], { default: false, description: 'TRUST_PROXY: which proxies may set X-Forwarded-For' }),
  requestTimeoutMs: PositiveInteger('REQUEST_TIMEOUT_MS: longest a client may take to send a request (headers included)', 10_000, 1000, 300_000),
  shutdownDrainMs: ZeroOrPositive('SHUTDOWN_DRAIN_MS: on SIGTERM, how long to keep serving with /readyz at 503 before closing', 5000, 60_000,
    'close at once'),
  maxEventLoopDelayMs: ZeroOrPositive("MAX_EVENT_LOOP_DELAY_MS: shed load (503) past this mean event-loop delay, over a second in which the loop was 90% busy with the instance's own work (on a CPU a quarter of that time)", 50, 60_000, 'never'),
  maxInFlight: ZeroOrPositive('MAX_IN_FLIGHT: shed load (503) while more requests than this are in progress on the instance', 256, 1_000_000, 'never'),
  maxHeapUsedPercent: ZeroOrPositive("MAX_HEAP_USED_PERCENT: shed load (503) past this share of V8's heap limit", 90, 100, 'never'),
  outageLogIntervalMs: PositiveInteger('OUTAGE_LOG_INTERVAL_MS: how often an outage is summarised in the log', 30_000, 100, 3_600_000),
  maxStreamsPerKey: PositiveInteger('MAX_STREAMS_PER_KEY: open live-update streams per API key per instance; past it 429', 5, 1, 100_000),
  publicLimitPerMinute: PositiveInteger('PUBLIC_LIMIT_PER_MINUTE: requests to public boards per client address per minute (sliding window); past it 429', 120, 1, 1_000_000),
  publicStreamsPerAddress: PositiveInteger('PUBLIC_STREAMS_PER_ADDRESS: open public live-update streams per client address per instance; past it 429', 20, 1, 100_000),
  streamKeepAliveMs: PositiveInteger('STREAM_KEEPALIVE_MS: longest an open stream stays silent before a keep-alive comment', 15_000, 100, 15_000),
  metricsPort: Type.Optional(ZeroOrPositive('METRICS_PORT: serve Prometheus metrics on this port (on HOST); unset: off', undefined, 65535,
    'any free port (the address is logged)')),
  adminPort: Type.Optional(ZeroOrPositive('ADMIN_PORT: serve the write API (/admin/v1) on this port (on ADMIN_HOST); unset: off', undefined, 65535,
    'any free port (the address is logged)')),
  adminHost: Type.String({ minLength: 1, default: '127.0.0.1', description: 'ADMIN_HOST: address the write API listens on' }),
  // At most the contract's 256 MiB: a MEE6 file is held whole as text while it is parsed.
  importBodyLimitMb: PositiveInteger('IMPORT_BODY_LIMIT_MB: largest body of a write-API import, in MiB; past it 413', 256, 1, 256),
  webhookDelivery: Type.Boolean({ default: true, description: 'WEBHOOK_DELIVERY: this process delivers webhooks (one instance at a time per server, by a lease in Redis)' }),
  webhookAllowPrivate: Type.Boolean({ default: false, description: 'WEBHOOK_ALLOW_PRIVATE: webhooks may be sent to private, loopback and link-local addresses' }),
  webhookTimeoutMs: PositiveInteger("WEBHOOK_TIMEOUT_MS: longest wait for a webhook receiver's answer", 10_000, 100, 60_000),
  webhookQueueLimit: PositiveInteger('WEBHOOK_QUEUE_LIMIT: events kept per server while a webhook is behind; older ones are dropped', 100_000, 100, 10_000_000),
  webhookRetryFirstMs: PositiveInteger('WEBHOOK_RETRY_FIRST_MS: delay before retrying a failed delivery; it doubles with each failure', 5000, 1, 3_600_000),
  webhookRetryMaxMs: PositiveInteger('WEBHOOK_RETRY_MAX_MS: longest delay between retries', 3_600_000, 1, 86_400_000),
  webhookRetryForMs: PositiveInteger('WEBHOOK_RETRY_FOR_MS: how long after its creation an event is still retried', 86_400_000, 1000, 7 * 86_400_000),
  calendarTickMs: ZeroOrPositive('CALENDAR_TICK_MS: how often the instance ends the seasons due and closes the days that ended, for every server', 1000, 3_600_000,
    'never here (another instance must, or the servers\' history stops at their last closed day)'),
  corsOrigins: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
    default: [], maxItems: 100, description: 'CORS_ORIGINS: origins whose pages may call the API (`*`: any); none means CORS off'
  })
}, { additionalProperties: false })

export type Config = Static<typeof ConfigSchema>

/** Each setting's environment variable. */
export const ENV_NAMES: Record<keyof Config, string> = {
  port: 'PORT',
  host: 'HOST',
  redisUrl: 'REDIS_URL',
  redisCluster: 'REDIS_CLUSTER',
  redisPrefix: 'REDIS_PREFIX',
  redisCommandTimeoutMs: 'REDIS_COMMAND_TIMEOUT_MS',
  logLevel: 'LOG_LEVEL',
  planLimits: 'PLAN_LIMITS',
  rateLimitWindowMs: 'RATE_LIMIT_WINDOW_MS',
  authFailureLimit: 'AUTH_FAILURE_LIMIT',
  authFailureWindowMs: 'AUTH_FAILURE_WINDOW_MS',
  apiKeyCacheTtlMs: 'API_KEY_CACHE_TTL_MS',
  responseCacheMb: 'RESPONSE_CACHE_MB',
  revalidationsPerSecond: 'REVALIDATIONS_PER_SECOND',
  trustProxy: 'TRUST_PROXY',
  requestTimeoutMs: 'REQUEST_TIMEOUT_MS',
  shutdownDrainMs: 'SHUTDOWN_DRAIN_MS',
  maxEventLoopDelayMs: 'MAX_EVENT_LOOP_DELAY_MS',
  maxInFlight: 'MAX_IN_FLIGHT',
  maxHeapUsedPercent: 'MAX_HEAP_USED_PERCENT',
  outageLogIntervalMs: 'OUTAGE_LOG_INTERVAL_MS',
  maxStreamsPerKey: 'MAX_STREAMS_PER_KEY',
  publicLimitPerMinute: 'PUBLIC_LIMIT_PER_MINUTE',
  publicStreamsPerAddress: 'PUBLIC_STREAMS_PER_ADDRESS',
  streamKeepAliveMs: 'STREAM_KEEPALIVE_MS',
  metricsPort: 'METRICS_PORT',
  adminPort: 'ADMIN_PORT',
  adminHost: 'ADMIN_HOST',
  importBodyLimitMb: 'IMPORT_BODY_LIMIT_MB',
  webhookDelivery: 'WEBHOOK_DELIVERY',
  webhookAllowPrivate: 'WEBHOOK_ALLOW_PRIVATE',
  webhookTimeoutMs: 'WEBHOOK_TIMEOUT_MS',
  webhookQueueLimit: 'WEBHOOK_QUEUE_LIMIT',
  webhookRetryFirstMs: 'WEBHOOK_RETRY_FIRST_MS',
  webhookRetryMaxMs: 'WEBHOOK_RETRY_MAX_MS',
  webhookRetryForMs: 'WEBHOOK_RETRY_FOR_MS',
  calendarTickMs: 'CALENDAR_TICK_MS',
  corsOrigins: 'CORS_ORIGINS'
}

const UNSAFE_TRUST_PROXY = 'TRUST_PROXY=true is refused as unsafe: any client could choose its own address ' +
  'through X-Forwarded-For. Give the number of proxies in front of the service (TRUST_PROXY=1) or their ' +
  'addresses and CIDRs (TRUST_PROXY=10.0.0.0/8,192.168.1.7)'
const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/** An address, an address/prefix length, or one of proxy-addr's names for ranges. */
function isProxySpec (text: string): boolean {
  if (PROXY_NAMES.has(text)) return true
  const [address = '', bits, ...rest] = text.split('/')
  const family = isIP(address)
  if (family === 0 || rest.length > 0 || address.includes('%')) return false
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128))
}

/** An origin as browsers send it: scheme, host and port (when not the default), lowercase, nothing more. */
function isOrigin (text: string): boolean {
  if (text === '*') return true
  try {
    const url = new URL(text)
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === text
  } catch {
    return false
  }
}

/** Problems the schema cannot express, each a sentence naming the variable. */
function semanticProblems (input: Record<string, unknown>): string[] {
  const problems: string[] = []
  const { redisUrl, trustProxy, corsOrigins } = input
  const urlProblem = redisUrlProblem(redisUrl)
  if (urlProblem !== undefined) problems.push(urlProblem)
  if (trustProxy === true || trustProxy === 'true') problems.push(UNSAFE_TRUST_PROXY)
  if (Array.isArray(trustProxy)) {
    const bad = trustProxy.filter((entry) => typeof entry !== 'string' || !isProxySpec(entry))
    if (bad.length > 0) {
      problems.push(`TRUST_PROXY must be false, a hop count, or comma-separated addresses and CIDRs of proxies (not ${bad.map((b) => JSON.stringify(b)).join(', ')})`)
    }
  }
  if (Array.isArray(corsOrigins)) {
    const bad = corsOrigins.filter((entry) => typeof entry !== 'string' || !isOrigin(entry))
    if (bad.length > 0) {
      problems.push('CORS_ORIGINS must be * or comma-separated origins such as https://dash.example.com: scheme and host, ' +
        `in lowercase, and a port only if not the default; no path, no trailing slash (not ${bad.map((b) => JSON.stringify(b)).join(', ')})`)
    }
  }
  return problems
}

/** TRUST_PROXY's text as Fastify's trustProxy takes it: false, a hop count, or a list. */
function parseTrustProxy (raw: string): unknown {
  const text = raw.trim()
  if (text === 'false' || text === '0') return false
  if (text === 'true') return true // refused by parseConfig, with the reason
  if (/^\d+$/.test(text)) return Number(text)
  return text.split(',').map((entry) => entry.trim())
}

/** A complete Config from partial settings: defaults filled in, every value checked. */
export function parseConfig (input: Record<string, unknown>): Config {
  const semantic = semanticProblems(input)
  if (semantic.length > 0) throw new ConfigError(`invalid configuration: ${semantic.join('; ')}`)
  const value = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, structuredClone(input)))
  if (Value.Check(ConfigSchema, value)) return value
  const problems = Value.Errors(ConfigSchema, value)
    .filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'boolean')
    .map((e) => {
      const [, field, ...rest] = e.instancePath.split('/')
      const name = field === undefined || field === '' ? 'config' : ENV_NAMES[field as keyof Config] + rest.map((p) => `.${p}`).join('')
      const allowed = e.keyword === 'enum' ? ` (${(e.params as { allowedValues: string[] }).allowedValues.join(', ')})` : ''
      return `${name} ${e.message}${allowed}`
    })
  throw new ConfigError(`invalid configuration: ${[...new Set(problems)].join('; ')}`)
}

/** The Config described by environment variables (see docs/operating.md, "Configuration"). */
export function loadConfig (env: NodeJS.ProcessEnv = process.env): Config {
  const input: Record<string, unknown> = {}
  for (const [field, name] of Object.entries(ENV_NAMES)) {
    const raw = env[name]
    if (raw === undefined || raw === '') continue
    if (field === 'planLimits') {
      try {
        input[field] = JSON.parse(raw)
      } catch {
        throw new ConfigError('invalid configuration: PLAN_LIMITS must be JSON such as {"free":100,"starter":1000,"professional":10000}')
      }
    } else if (field === 'redisCluster' || field === 'webhookDelivery' || field === 'webhookAllowPrivate') {
      input[field] = envBoolean(raw)
    } else if (field === 'trustProxy') {
      input[field] = parseTrustProxy(raw)
    } else if (field === 'corsOrigins') {
      input[field] = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
    } else {
      input[field] = raw
    }
  }
  return parseConfig(input)
}
