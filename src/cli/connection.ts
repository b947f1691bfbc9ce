// The CLI's Redis connection, from REDIS_URL, REDIS_PREFIX and REDIS_CLUSTER read by the
// server's own parser: awaited with a deadline first so an unreachable Redis is one clear line
// after seconds, not a hang, and always disconnected so the process can exit.
import { ConfigError, loadRedisConfig } from '../redis-settings.js'
import { createRedis, type RedisClient } from '../redis/client.js'
import { KeyBuilder } from '../redis/keys.js'

/** A failure to report as one line (the CLI's own, beside the library's LeaderboardError). */
export class CliError extends Error {}

export interface CliEnv {
  url: string
  prefix: string
  cluster: boolean
}

export interface CliContext {
  redis: RedisClient
  keys: KeyBuilder
  env: CliEnv
}

const CONNECT_DEADLINE_MS = 3000
// Longer than the API's: a CLI user prefers a slow answer to a failed seed.
const COMMAND_TIMEOUT_MS = 10_000

/** Unlike the server, which runs a demo Redis without REDIS_URL, the CLI looks where Redis usually is. */
export const DEFAULT_CLI_REDIS_URL = 'redis://127.0.0.1:6379'

export function readEnv (env: NodeJS.ProcessEnv = process.env): CliEnv {
  let config
  try {
    config = loadRedisConfig(env)
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message)
    throw err
  }
  return { url: config.redisUrl ?? DEFAULT_CLI_REDIS_URL, prefix: config.redisPrefix, cluster: config.redisCluster }
}

/** Runs `fn` with a connected client and disconnects afterwards, whatever happens. */
export async function withRedis<T> (fn: (ctx: CliContext) => Promise<T>): Promise<T> {
  const env = readEnv()
  const keys = new KeyBuilder(env.prefix)
  let redis: RedisClient
  try {
    redis = createRedis({ url: env.url, cluster: env.cluster, offlineQueue: true, commandTimeoutMs: COMMAND_TIMEOUT_MS, name: 'leaderboard-cli' })
  } catch (err) {
    throw new CliError(`REDIS_URL ${redact(env.url)} is not usable: ${(err as Error).message}`)
  }
  // Without a listener ioredis prints every failed reconnection; keep the last for the message.
  let lastError: Error | undefined
  redis.on('error', (err: Error) => { lastError = err })
  try {
    await reachable(redis, CONNECT_DEADLINE_MS, () => lastError, env)
    return await fn({ redis, keys, env })
  } finally {
    redis.disconnect()
  }
}

/**
 * Waits for the client to be ready rather than sending a probe: a command queued while Redis
 * is away keeps its timeout timer alive after disconnect, and the process with it.
 */
async function reachable (redis: RedisClient, deadlineMs: number, lastError: () => Error | undefined, env: CliEnv): Promise<void> {
  if (redis.status === 'ready') return
  await new Promise<void>((resolve, reject) => {
    const onReady = (): void => {
      clearTimeout(timer)
      resolve()
    }
    const timer = setTimeout(() => {
      redis.off('ready', onReady)
      const what = env.cluster ? 'Redis Cluster' : 'Redis'
      const cause = lastError()?.message ?? `no answer within ${deadlineMs / 1000} s`
      reject(new CliError(`cannot reach ${what} at ${redact(env.url)} (${cause}); set REDIS_URL`))
    }, deadlineMs)
    redis.once('ready', onReady)
  })
}

/** The URL without its password, fit for an error message. */
export function redact (url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/g, '//$1:***@')
}
