// Configuration from the environment: defaults, conversions, and one clear line for bad values.
import t from 'tap'
import { ConfigError, ConfigSchema, loadConfig, loadRedisConfig } from '../src/config.js'

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
    authFailureWindowMs: 60_000,
    trustProxy: false,
    requestTimeoutMs: 10_000,
    shutdownDrainMs: 5000,
    maxEventLoopDelayMs: 50,
    maxHeapUsedPercent: 90,
    outageLogIntervalMs: 30_000,
    importBodyLimitMb: 256,
    corsOrigins: []
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
    TRUST_PROXY: '10.0.0.1, 10.1.0.0/16,loopback',
    SHUTDOWN_DRAIN_MS: '0',
    MAX_EVENT_LOOP_DELAY_MS: '0'
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
    trustProxy: ['10.0.0.1', '10.1.0.0/16', 'loopback'],
    shutdownDrainMs: 0,
    maxEventLoopDelayMs: 0
  })
})

t.test('TRUST_PROXY takes false, a hop count, or proxies\' addresses and CIDRs', async (t) => {
  t.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false)
  t.equal(loadConfig({ TRUST_PROXY: '0' }).trustProxy, false, 'no hops: trust nobody')
  t.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2)
  t.same(loadConfig({ TRUST_PROXY: '::1,2001:db8::/32' }).trustProxy, ['::1', '2001:db8::/32'])
})

t.test('CORS_ORIGINS takes comma-separated origins, or *; unset or empty means CORS off', async (t) => {
  t.same(loadConfig({ CORS_ORIGINS: 'https://dash.example.com, http://localhost:5173,' }).corsOrigins, ['https://dash.example.com', 'http://localhost:5173'])
  t.same(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins, ['*'])
  t.same(loadConfig({ CORS_ORIGINS: '' }).corsOrigins, [])
  t.same(loadConfig({ CORS_ORIGINS: ' , ' }).corsOrigins, [])
  for (const origin of ['https://dash.example.com/', 'https://dash.example.com/app', 'HTTPS://Dash.example.com', 'https://dash.example.com:443', 'dash.example.com', 'ftp://files.example.com', 'null']) {
    t.throws(() => loadConfig({ CORS_ORIGINS: `http://localhost:5173,${origin}` }), {
      message: `invalid configuration: CORS_ORIGINS must be * or comma-separated origins such as https://dash.example.com: scheme and host, in lowercase, and a port only if not the default; no path, no trailing slash (not ${JSON.stringify(origin)})`
    }, origin)
  }
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
    [{ REDIS_CLUSTER: 'maybe' }, /REDIS_CLUSTER must be boolean/],
    [{ REDIS_URL: 'http://x' }, /^invalid configuration: REDIS_URL must be redis:\/\/\[user:password@\]host:port\[\/db\] or rediss:\/\//],
    [{ REDIS_URL: 'redis://a:1,localhost:2', REDIS_CLUSTER: 'true' }, /REDIS_URL must be redis:\/\//],
    [{ TRUST_PROXY: 'true' }, /^invalid configuration: TRUST_PROXY=true is refused as unsafe: any client could choose its own address through X-Forwarded-For\. Give the number of proxies/],
    [{ TRUST_PROXY: '10.0.0.1,proxy.internal' }, /TRUST_PROXY must be false, a hop count, or comma-separated addresses and CIDRs of proxies \(not "proxy\.internal"\)/],
    [{ TRUST_PROXY: '10.0.0.0/33' }, /TRUST_PROXY must be false, a hop count/],
    [{ SHUTDOWN_DRAIN_MS: '-1' }, /SHUTDOWN_DRAIN_MS must be >= 0/],
    [{ REQUEST_TIMEOUT_MS: '10' }, /REQUEST_TIMEOUT_MS must be >= 1000/],
    [{ MAX_HEAP_USED_PERCENT: '120' }, /MAX_HEAP_USED_PERCENT must be <= 100/],
    [{ IMPORT_BODY_LIMIT_MB: '257' }, /IMPORT_BODY_LIMIT_MB must be <= 256/]
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
  // The CLI reads these three without TypeBox (src/redis-settings.ts): every spelling, good or
  // bad, gets the server's answer, or the server's message.
  const outcome = (read: () => unknown): unknown => { try { return read() } catch (err) { return (err as Error).message } }
  const spellings: NodeJS.ProcessEnv[] = [
    {}, { REDIS_CLUSTER: '' }, { REDIS_CLUSTER: 'tRuE' }, { REDIS_CLUSTER: 'yes' }, { REDIS_CLUSTER: ' true' }, { REDIS_CLUSTER: '2' },
    { REDIS_PREFIX: '' }, { REDIS_PREFIX: 'a:b.c_d-9' }, { REDIS_PREFIX: 'x'.repeat(64) }, { REDIS_PREFIX: 'x'.repeat(65) }, { REDIS_PREFIX: 'a b' },
    { REDIS_CLUSTER: 'maybe', REDIS_PREFIX: 'a{b}' }, { REDIS_URL: 'redis://h:1', REDIS_PREFIX: 'ok' }, { REDIS_URL: 'http://h:1', REDIS_CLUSTER: 'maybe' },
    { REDIS_URL: 'redis://a:1, redis://b:2', REDIS_CLUSTER: '1' }, { REDIS_URL: 'rediss://u:p@h:1/2' }, { REDIS_URL: '' }
  ]
  for (const env of spellings) {
    const server = outcome(() => { const { redisUrl, redisCluster, redisPrefix } = loadConfig(env); return { redisUrl, redisCluster, redisPrefix } })
    t.same(outcome(() => loadRedisConfig(env)), server, `${JSON.stringify(env)}: ${JSON.stringify(server)}`)
  }
  t.equal(loadRedisConfig({ REDIS_CLUSTER: 'TRUE' }).redisCluster, true, 'TRUE is true, to the CLI too')
  t.same(loadRedisConfig({}), { redisUrl: undefined, redisCluster: false, redisPrefix: 'lb' }, 'defaults')
  t.throws(() => loadRedisConfig({ REDIS_CLUSTER: 'maybe' }), { message: 'invalid configuration: REDIS_CLUSTER must be boolean' })
  t.throws(() => loadRedisConfig({ REDIS_PREFIX: 'a{b}' }), { message: /^invalid configuration: REDIS_PREFIX must match pattern/ })
  t.same(loadRedisConfig({ PORT: 'abc', PLAN_LIMITS: 'nonsense', REDIS_PREFIX: 'q' }).redisPrefix, 'q',
    'a bad value of a setting only the server reads does not stop the CLI')
})

t.test('METRICS_PORT: unset is off; a port number turns the metrics listener on; anything else is refused', async (t) => {
  t.equal(loadConfig({}).metricsPort, undefined)
  t.equal(loadConfig({ METRICS_PORT: '9464' }).metricsPort, 9464)
  t.throws(() => loadConfig({ METRICS_PORT: '70000' }), /METRICS_PORT/)
  t.throws(() => loadConfig({ METRICS_PORT: 'metrics' }), /METRICS_PORT/)
})

t.test('a number setting allows 0 only where 0 means something, and its description says what', async (t) => {
  interface IntegerSchema { type?: string, minimum?: number, description?: string, properties?: Record<string, IntegerSchema> }
  const integers: Array<[string, IntegerSchema]> = []
  for (const [name, schema] of Object.entries(ConfigSchema.properties) as Array<[string, IntegerSchema]>) {
    if (schema.type === 'integer') integers.push([name, schema])
    for (const [inner, p] of Object.entries(schema.properties ?? {})) if (p.type === 'integer') integers.push([`${name}.${inner}`, p])
  }
  t.ok(integers.length >= 15, `${integers.length} integer settings`)
  for (const [name, schema] of integers) {
    if (schema.minimum === 0) t.match(schema.description, /; 0: \S/, `${name}: 0 is allowed and the description says what it means`)
    else t.ok((schema.minimum ?? 0) >= 1, `${name}: from ${String(schema.minimum)}, not 0`)
  }
  t.equal(loadConfig({}).metricsPort, undefined, 'METRICS_PORT stays off unless set')
  t.equal(loadConfig({ METRICS_PORT: '0' }).metricsPort, 0, 'METRICS_PORT=0: any free port')
})

t.test('ADMIN_PORT: unset is off (no write API); a port turns it on, on ADMIN_HOST (default 127.0.0.1)', async (t) => {
  t.equal(loadConfig({}).adminPort, undefined)
  t.equal(loadConfig({}).adminHost, '127.0.0.1')
  t.match(loadConfig({ ADMIN_PORT: '3001', ADMIN_HOST: '10.0.0.5' }), { adminPort: 3001, adminHost: '10.0.0.5' })
  t.throws(() => loadConfig({ ADMIN_PORT: '65536' }), /ADMIN_PORT/)
  t.throws(() => loadConfig({ ADMIN_PORT: 'admin' }), /ADMIN_PORT/)
})
