// Configuration from the environment: defaults, conversions, and one clear line for bad values.
import t from 'tap'
import { ConfigError, loadConfig, loadRedisConfig } from '../src/config.js'

t.test('defaults when nothing is set', async (t) => {
  const config = loadConfig({})
  t.match(config, {
    port: 3000,
    host: '127.0.0.1',
    redisCluster: false,
    redisPrefix: 'lb',
    logLevel: 'info',
    planLimits: { free: 100, starter: 1000, professional: 10000 },
    rateLimitWindowMs: 3_600_000,
    authFailureLimit: 30,
    authFailureWindowMs: 60_000
  })
  t.equal(config.redisUrl, undefined, 'no REDIS_URL means the local demo Redis')
})

t.test('environment values are converted, and PLAN_LIMITS merges over the defaults', async (t) => {
  const config = loadConfig({
    PORT: '8080',
    HOST: '0.0.0.0',
    REDIS_URL: 'redis://r:6379',
    REDIS_CLUSTER: 'true',
    REDIS_PREFIX: 'x:y',
    LOG_LEVEL: 'warn',
    PLAN_LIMITS: '{"free":5}',
    RATE_LIMIT_WINDOW_MS: '2000',
    TRUST_PROXY: 'true'
  })
  t.match(config, {
    port: 8080,
    host: '0.0.0.0',
    redisUrl: 'redis://r:6379',
    redisCluster: true,
    redisPrefix: 'x:y',
    logLevel: 'warn',
    planLimits: { free: 5, starter: 1000, professional: 10000 },
    rateLimitWindowMs: 2000,
    trustProxy: true
  })
})

t.test('a bad value stops the start with a message naming the variable', async (t) => {
  const cases: Array<[NodeJS.ProcessEnv, RegExp]> = [
    [{ PORT: 'abc' }, /^invalid configuration: PORT must be integer$/],
    [{ PORT: '70000' }, /PORT must be <= 65535/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be equal to one of the allowed values \(fatal, error, warn, info, debug, trace, silent\)/],
    [{ PLAN_LIMITS: 'free=5' }, /PLAN_LIMITS must be JSON/],
    [{ PLAN_LIMITS: '{"gold":5}' }, /PLAN_LIMITS must not have additional properties/],
    [{ PLAN_LIMITS: '{"free":0}' }, /PLAN_LIMITS\.free must be >= 1/],
    [{ REDIS_PREFIX: 'a{b}' }, /REDIS_PREFIX must match pattern/],
    [{ RATE_LIMIT_WINDOW_MS: '10' }, /RATE_LIMIT_WINDOW_MS must be >= 1000/],
    [{ API_KEY_CACHE_TTL_MS: '6000' }, /API_KEY_CACHE_TTL_MS must be <= 5000/],
    [{ REDIS_CLUSTER: 'maybe' }, /REDIS_CLUSTER must be boolean/]
  ]
  for (const [env, message] of cases) {
    t.throws(() => loadConfig(env), { name: 'Error', message }, JSON.stringify(env))
    try { loadConfig(env) } catch (err) { t.ok(err instanceof ConfigError) }
  }
})

t.test('the CLI\'s Redis settings are read by the server\'s rules: the same spelling means the same thing', async (t) => {
  for (const value of ['TRUE', 'true', 'True', '1', 'FALSE', 'false', '0']) {
    const env = { REDIS_CLUSTER: value, REDIS_URL: 'redis://r:7000', REDIS_PREFIX: 'p' }
    const server = loadConfig(env)
    t.same(loadRedisConfig(env), { redisUrl: server.redisUrl, redisCluster: server.redisCluster, redisPrefix: 'p' }, `REDIS_CLUSTER=${value}`)
  }
  t.equal(loadRedisConfig({ REDIS_CLUSTER: 'TRUE' }).redisCluster, true, 'TRUE is true, to the CLI too')
  t.same(loadRedisConfig({}), { redisUrl: undefined, redisCluster: false, redisPrefix: 'lb' }, 'defaults')
  t.throws(() => loadRedisConfig({ REDIS_CLUSTER: 'maybe' }), { message: 'invalid configuration: REDIS_CLUSTER must be boolean' })
  t.throws(() => loadRedisConfig({ REDIS_PREFIX: 'a{b}' }), { message: /^invalid configuration: REDIS_PREFIX must match pattern/ })
  t.same(loadRedisConfig({ PORT: 'abc', PLAN_LIMITS: 'nonsense', REDIS_PREFIX: 'q' }).redisPrefix, 'q',
    'a bad value of a setting only the server reads does not stop the CLI')
})
