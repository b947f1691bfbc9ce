// The Redis settings (REDIS_URL, REDIS_CLUSTER, REDIS_PREFIX) as both the server (config.ts) and
// the CLI read them. This module does not import TypeBox: the CLI reads these settings on every
// start, and loading `typebox` and `typebox/value` (hundreds of small ES modules) was a noticeable
// share of each command's time (docs/benchmarks.md). config.ts takes its rules for these three
// from here, so the two cannot read one spelling two ways; test/config.test.ts holds them to the
// same answers.

/** A configuration that cannot be used; the message names the variable and what it must be. */
export class ConfigError extends Error {}

/** What REDIS_PREFIX must match (the schema in config.ts checks it with this very pattern). */
export const REDIS_PREFIX_PATTERN = '^[A-Za-z0-9:._-]{1,64}$'
export const DEFAULT_REDIS_PREFIX = 'lb'
const PREFIX = new RegExp(REDIS_PREFIX_PATTERN)

/** Why a REDIS_URL value cannot be used, or undefined when it can. */
export function redisUrlProblem (redisUrl: unknown): string | undefined {
  if (typeof redisUrl !== 'string' || redisUrl.split(',').every((url) => /^rediss?:\/\/[^\s/]/.test(url.trim()))) return undefined
  return 'REDIS_URL must be redis://[user:password@]host:port[/db] or rediss://… (comma-separated seeds for a cluster)'
}

/**
 * A boolean variable's text as a boolean: true, false (in any case), 1 or 0. Anything else is
 * returned as it is, for the caller to refuse as "must be boolean".
 */
export function envBoolean (text: string): boolean | string {
  const lower = text.toLowerCase()
  if (lower === 'true' || text === '1') return true
  if (lower === 'false' || text === '0') return false
  return text
}

export interface RedisConfig {
  redisUrl?: string
  redisCluster: boolean
  redisPrefix: string
}

/**
 * The Redis settings alone, by the server's rules (`REDIS_CLUSTER=TRUE` is true to both), so a
 * setting only the server uses cannot stop the CLI. Refused values give loadConfig's message.
 */
export function loadRedisConfig (env: NodeJS.ProcessEnv = process.env): RedisConfig {
  const set = (name: string): string | undefined => env[name] === '' ? undefined : env[name]
  const redisUrl = set('REDIS_URL')
  const urlProblem = redisUrlProblem(redisUrl)
  if (urlProblem !== undefined) throw new ConfigError(`invalid configuration: ${urlProblem}`)
  const cluster = envBoolean(set('REDIS_CLUSTER') ?? 'false')
  const redisPrefix = set('REDIS_PREFIX') ?? DEFAULT_REDIS_PREFIX
  const problems: string[] = []
  if (typeof cluster !== 'boolean') problems.push('REDIS_CLUSTER must be boolean')
  if (!PREFIX.test(redisPrefix)) problems.push(`REDIS_PREFIX must match pattern "${REDIS_PREFIX_PATTERN}"`)
  if (problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`)
  return { redisUrl, redisCluster: cluster === true, redisPrefix }
}
