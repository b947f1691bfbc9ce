// The process around the app: configuration from the environment, the logger, timeouts,
// listen, and a graceful close on signals. Without REDIS_URL it is the newcomer's demo: it
// runs a local redis-server (data in ./.data), seeds a demo server and prints a key.
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { startLocalRedis } from './demo/local-redis.js'
import { prepareDemo } from './demo/prepare-demo.js'

function fail (message: string): never {
  process.stderr.write(`error: ${message}\n`)
  process.exit(1)
}

let config: Config
try {
  config = loadConfig()
} catch (err) {
  if (err instanceof ConfigError) fail(err.message)
  throw err
}

const localRedis = config.redisUrl === undefined
  ? await startLocalRedis({ dir: '.data' }).catch((err: Error) => fail(err.message))
  : undefined
if (localRedis !== undefined) config = { ...config, redisUrl: localRedis.url }

// Timeouts and limits come with the app (src/http/server-options.ts), the same in tests.
const app = buildApp(config)

closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
  if (err !== undefined) app.log.error({ err }, 'closing after an uncaught error')
  else app.log.info({ signal }, 'closing')
  await app.close()
  await localRedis?.stop()
})

try {
  await app.listen({ port: config.port, host: config.host })
} catch (err) {
  await localRedis?.stop()
  fail(`cannot listen on ${config.host}:${config.port}: ${(err as Error).message}`)
}

if (localRedis !== undefined) {
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : config.port
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host
  const baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  const demo = await prepareDemo({ redis: app.redisClient, keys: app.keys, baseUrl })
  // Plain text for the person at the terminal; the JSON logs never carry a key.
  process.stdout.write([
    '',
    `  Leaderboard API listening on ${baseUrl}/api/v1 (demo mode: no REDIS_URL)`,
    `  Local Redis: REDIS_URL=${localRedis.url}  (data in ./.data; use it with npm run cli)`,
    `  Demo server ${demo.guildId}${demo.seeded ? ' seeded' : ''}; a new demo API key: ${demo.key}`,
    '',
    `  ${demo.curl}`,
    '',
    ''
  ].join('\n'))
}
