// The process around the app: configuration from the environment, listen, and a graceful
// shutdown on signals (drain, then close; see pipeline/lifecycle.ts). Without REDIS_URL it is
// the newcomer's demo: it runs a local redis-server (data in ./.data), seeds a demo server and
// prints a key; the port and the key are kept in ./.data/demo.json and reused by the next start.
// The demo also serves a live leaderboard page at / and runs a simulated bot awarding XP.
import closeWithGrace from 'close-with-grace'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp } from './app.js'
import { buildAdminApp } from './admin/admin-app.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { demoStatePath, readDemoState, writeDemoState } from './demo/demo-state.js'
import { startLocalRedis } from './demo/local-redis.js'
import { DEMO_SLUG, prepareDemo } from './demo/prepare-demo.js'
import { startDemoBot } from './demo/demo-bot.js'
import demoPagePlugin from './plugins/demo-page.js'
import { LeaderboardWriter } from './writer/leaderboard-writer.js'

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

// Timeouts and limits come with the app (src/http/server-options.ts), the same in tests.
const app = buildApp(config)
// The demo's page at / (its server's public board), and its simulated bot, started below.
if (localRedis !== undefined) app.register(demoPagePlugin, { slug: DEMO_SLUG })
let demoBot: { stop: () => void } | undefined
// The write API, on its own listener when ADMIN_PORT is set: the public port never serves a write.
const admin = config.adminPort === undefined ? undefined : buildAdminApp(config)

/**
 * After the drain, how long requests in flight get to finish before the process gives up and
 * exits 1. Requests are bounded by REDIS_COMMAND_TIMEOUT_MS, so this is ample; with the
 * default drain of 5 s the exit comes well within Docker's 10 s stop grace.
 */
const CLOSE_GRACE_MS = 4000

closeWithGrace({
  delay: config.shutdownDrainMs + CLOSE_GRACE_MS,
  logger: { error: (message: unknown) => { app.log.error(message) } }
}, async ({ err, signal }) => {
  if (err !== undefined) {
    app.log.error({ err }, 'closing after an uncaught error')
  } else {
    // Readiness fails at once; requests are still served, each telling its client to reconnect.
    app.lifecycle.drain()
    admin?.lifecycle.drain()
    app.log.info({ signal, drainMs: config.shutdownDrainMs }, 'draining: /readyz answers 503, requests still served')
    await sleep(config.shutdownDrainMs)
    app.log.info('closing: no new connections, finishing requests in flight')
  }
  demoBot?.stop()
  await Promise.all([app.close(), admin?.close()])
  await localRedis?.stop()
})

// Apart from listen, so that a failure while starting (the metrics listener's port taken, say)
// is not reported as the API's port.
try {
  await app.ready()
  await admin?.ready()
} catch (err) {
  await localRedis?.stop()
  fail((err as Error).message)
}
try {
  await app.listen({ port: config.port, host: config.host })
} catch (err) {
  await localRedis?.stop()
  fail(`cannot listen on ${config.host}:${config.port}: ${(err as Error).message}`)
}
if (admin !== undefined) {
  try {
    await admin.listen({ port: config.adminPort, host: config.adminHost })
  } catch (err) {
    await app.close()
    await localRedis?.stop()
    fail(`cannot listen on ${config.adminHost}:${String(config.adminPort)} (ADMIN_PORT): ${(err as Error).message}`)
  }
}

if (localRedis !== undefined) {
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : config.port
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host
  const baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  const demo = await prepareDemo({ redis: app.redisClient, keys: app.keys, baseUrl, reuseKey: demoState?.apiKey })
  writeDemoState(DEMO_DIR, { redisPort: localRedis.port, apiKey: demo.key })
  demoBot = startDemoBot({
    reader: app.leaderboard,
    writer: new LeaderboardWriter(app.redisClient, app.keys),
    guildId: demo.guildId,
    onError: (err) => { app.log.debug({ err }, 'demo bot: award failed') }
  })
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
    `  Live leaderboard page (the demo server's public board; a simulated bot awards XP every second): ${demo.pageUrl}`,
    '',
    ''
  ].join('\n'))
}
