// The process around the app: configuration from the environment, the logger, timeouts,
// listen, and a graceful close on signals. Without REDIS_URL it is the newcomer's demo: it
// runs a local redis-server (data in ./.data), seeds a demo server and prints a key; the port
// and the key are kept in ./.data/demo.json and reused by the next start.
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { demoStatePath, readDemoState, writeDemoState } from './demo/demo-state.js'
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

const DEMO_DIR = '.data'
const demoState = config.redisUrl === undefined ? readDemoState(DEMO_DIR) : undefined
const localRedis = demoState !== undefined
  ? await startLocalRedis({ dir: DEMO_DIR, port: demoState.redisPort }).catch((err: Error) => fail(err.message))
  : undefined
if (localRedis !== undefined) config = { ...config, redisUrl: localRedis.url }

const app = buildApp(config, {
  connectionTimeout: 10_000, // a client that sends nothing is dropped
  requestTimeout: 10_000,
  keepAliveTimeout: 75_000, // above common load balancers' 60 s idle timeout
  forceCloseConnections: 'idle',
  return503OnClosing: true
})

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
  const demo = await prepareDemo({ redis: app.redisClient, keys: app.keys, baseUrl, reuseKey: demoState?.apiKey })
  writeDemoState(DEMO_DIR, { redisPort: localRedis.port, apiKey: demo.key })
  const stateFile = demoStatePath(DEMO_DIR)
  const stale = { revoked: 'was revoked', expired: 'has expired', unknown: 'no longer works (rotated, or made for another Redis)', other_server: 'reads another server' }
  // Plain text for the person at the terminal; the JSON logs never carry a key.
  process.stdout.write([
    '',
    `  Leaderboard API listening on ${baseUrl}/api/v1 (demo mode: no REDIS_URL)`,
    ...(localRedis.portTaken === undefined
      ? []
      : [`  Port ${localRedis.portTaken}, the local Redis's port last time, is taken: it now listens on ${localRedis.port}, so REDIS_URL has changed.`]),
    `  Local Redis: REDIS_URL=${localRedis.url}  (data in ./${DEMO_DIR}; use it with npm run cli)`,
    `  Demo server ${demo.guildId}${demo.seeded ? ' seeded' : ''}; ${demo.keyReused ? 'the' : 'a new'} demo API key (kept in ${stateFile}): ${demo.key}`,
    ...(demo.staleKey === undefined ? [] : [`  (the key kept from last time ${stale[demo.staleKey]}, so a new one was made)`]),
    '',
    `  ${demo.curl}`,
    '',
    ''
  ].join('\n'))
}
