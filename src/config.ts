// The service's configuration: one TypeBox schema, its type derived from it, read from the
// environment and validated at start. Tests build a Config directly and never read `.env`.
import { type Static, Type } from 'typebox'
import { Value } from 'typebox/value'
import { DEFAULT_PLAN_LIMITS } from './api-keys/plans.js'

const PositiveInteger = (description: string, defaultValue: number, minimum = 1, maximum = 2 ** 31) =>
  Type.Integer({ minimum, maximum, default: defaultValue, description })

export const ConfigSchema = Type.Object({
  port: PositiveInteger('PORT: TCP port to listen on', 3000, 0, 65535),
  host: Type.String({ minLength: 1, default: '127.0.0.1', description: 'HOST: address to listen on' }),
  redisUrl: Type.Optional(Type.String({ minLength: 1, description: 'REDIS_URL: unset means the local demo Redis' })),
  redisCluster: Type.Boolean({ default: false, description: 'REDIS_CLUSTER: REDIS_URL lists Redis Cluster seed nodes' }),
  redisPrefix: Type.String({ pattern: '^[A-Za-z0-9:._-]{1,64}$', default: 'lb', description: 'REDIS_PREFIX: prefix of every key' }),
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
  apiKeyCacheTtlMs: PositiveInteger('API_KEY_CACHE_TTL_MS: how long an instance trusts a key lookup (revocation delay)', 3000, 0, 5000),
  trustProxy: Type.Boolean({ default: false, description: 'TRUST_PROXY: take the client address from X-Forwarded-For' })
}, { additionalProperties: false })

export type Config = Static<typeof ConfigSchema>

const ENV_NAMES: Record<keyof Config, string> = {
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
  trustProxy: 'TRUST_PROXY'
}

export class ConfigError extends Error {}

/** A complete Config from partial settings: defaults filled in, every value checked. */
export function parseConfig (input: Record<string, unknown>): Config {
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

/** The Config described by environment variables (see README, "Configuration"). */
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
    } else {
      input[field] = raw
    }
  }
  return parseConfig(input)
}

/** What the CLI needs: the Redis settings, read by the same rules as the server's. */
export type RedisConfig = Pick<Config, 'redisUrl' | 'redisCluster' | 'redisPrefix'>

/**
 * The Redis settings (REDIS_URL, REDIS_CLUSTER, REDIS_PREFIX) alone, through loadConfig, so the
 * CLI and the server read them alike (`REDIS_CLUSTER=TRUE` is true to both) and a setting only
 * the server uses cannot stop the CLI.
 */
export function loadRedisConfig (env: NodeJS.ProcessEnv = process.env): RedisConfig {
  const { redisUrl, redisCluster, redisPrefix } = loadConfig({
    REDIS_URL: env.REDIS_URL, REDIS_CLUSTER: env.REDIS_CLUSTER, REDIS_PREFIX: env.REDIS_PREFIX
  })
  return { redisUrl, redisCluster, redisPrefix }
}
