// Builds the real app (the same buildApp the server uses) against a test Redis, plus the
// writer-side handles a test needs to arrange data. Everything is released in t.teardown.
import type { Test } from 'tap'
import { setImmediate } from 'node:timers/promises'
import { buildApp } from '../../src/app.js'
import { type Config, parseConfig } from '../../src/config.js'
import { createRedis, type RedisClient } from '../../src/redis/client.js'
import { KeyBuilder } from '../../src/redis/keys.js'
import { LeaderboardWriter } from '../../src/writer/leaderboard-writer.js'
import { ApiKeyStore } from '../../src/api-keys/api-keys.js'

export interface TestApp {
  app: ReturnType<typeof buildApp>
  config: Config
  redis: RedisClient
  keys: KeyBuilder
  writer: LeaderboardWriter
  apiKeys: ApiKeyStore
}

let prefixes = 0
let queue: Promise<unknown> = Promise.resolve()

/**
 * Runs `work` once the work given before it (in this test process) is done, after a turn of the
 * event loop. A test file whose subtests run side by side (`t.jobs`) builds its apps through this
 * (buildTestApp and buildTestAdmin do): a build is a burst of CPU, and several at once held the
 * event loop for up to 1.5 s. A subtest also runs through it the part that a build beside it must
 * not delay (a bound of a second or two), which must not itself build an app through this.
 */
export async function oneAtATime<T> (work: () => Promise<T>): Promise<T> {
  const turn = queue.then(async () => { await setImmediate(); return await work() })
  queue = turn.catch(() => {})
  return await turn
}

/**
 * The app on `redisUrl`, under a key prefix of its own unless one is given; `prepare` may add
 * hooks before it is ready (so they reach every route).
 */
export async function buildTestApp (t: Test, redisUrl: string, overrides: Partial<Config> = {},
  prepare?: (app: ReturnType<typeof buildApp>) => void): Promise<TestApp> {
  // No load shedding unless a test asks for it (test/load-shedding.test.ts): on a busy CI machine
  // the event loop of a test process can lag past the production threshold. For the same reason
  // Redis has 10 s to answer (the production default, 500 ms, is passed by a loaded machine's
  // Redis at times, which would make a 503); tests of a slow Redis set their own. No calendar
  // ticker unless a test asks for it (test/seasons.test.ts, test/history.test.ts): its calls
  // would count in the tests that count Redis's commands.
  const config = parseConfig({
    redisUrl,
    logLevel: 'silent',
    redisPrefix: `t${process.pid}-${prefixes++}`,
    maxEventLoopDelayMs: 0,
    maxInFlight: 0,
    redisCommandTimeoutMs: 10_000,
    calendarTickMs: 0,
    ...overrides
  })
  const app = buildApp(config)
  t.teardown(async () => { await app.close() })
  prepare?.(app)
  await oneAtATime(async () => { await app.ready() })
  // The test's own connection (seeding, keys, checks) waits as long as a loaded machine needs:
  // 10 s, whatever the app's own timeout.
  const redis = createRedis({ url: redisUrl, cluster: config.redisCluster, offlineQueue: true, commandTimeoutMs: 10_000 })
  redis.on('error', () => {}) // tests that stop Redis expect this connection to fail
  t.teardown(() => { redis.disconnect() })
  const keys = new KeyBuilder(config.redisPrefix)
  return { app, config, redis, keys, writer: new LeaderboardWriter(redis, keys), apiKeys: new ApiKeyStore(redis, keys) }
}
