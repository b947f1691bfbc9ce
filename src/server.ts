// The process around the app: configuration from the environment, listen, and a graceful
// shutdown on signals (drain, then close; see pipeline/lifecycle.ts). Without REDIS_URL it is
// the newcomer's demo: it runs a local redis-server (data in ./.data), seeds a demo server and
// prints a key; the port and the key are kept in ./.data/demo.json and reused by the next start.
// The demo also serves a live leaderboard page at / and runs a simulated bot awarding XP, and
// the write API on 127.0.0.1 (ADMIN_PORT, else PORT + 1), so a bot can write to it at once.
import closeWithGrace from 'close-with-grace'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp } from './app.js'
import { buildAdminApp } from './admin/admin-app.js'
import { CLOSE_GRACE_MS } from './pipeline/lifecycle.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { demoStatePath, readDemoState, writeDemoState } from './demo/demo-state.js'
import { startLocalRedis } from './demo/local-redis.js'
import { DEMO_SLUG, prepareDemo, seasonCurlLines, seedDemo } from './demo/prepare-demo.js'
import { startDemoBot } from './demo/demo-bot.js'
import demoPagePlugin from './plugins/demo-page.js'
import { LeaderboardWriter } from './writer/leaderboard-writer.js'
import { installIoredisGcFix } from './redis/ioredis-gc-fix.js'
import { createRedis } from './redis/client.js'

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

// This process is the service's own: ioredis's per-command objects are made young here (before
// any client exists), not in a process that merely imports the library (see the module).
const gcFix = installIoredisGcFix()

const DEMO_DIR = '.data'
const demoState = config.redisUrl === undefined ? readDemoState(DEMO_DIR) : undefined
const localRedis = demoState !== undefined
  ? await startLocalRedis({ dir: DEMO_DIR, port: demoState.redisPort }).catch((err: Error) => fail(err.message))
  : undefined
/** True when the demo chose the write API's port (ADMIN_PORT unset). */
const demoAdminPort = localRedis !== undefined && config.adminPort === undefined
if (localRedis !== undefined) {
  config = { ...config, redisUrl: localRedis.url, adminPort: config.adminPort ?? (config.port > 0 && config.port < 65535 ? config.port + 1 : 0) }
}

// Timeouts and limits come with the app (src/http/server-options.ts), the same in tests.
const app = buildApp(config)
app.log.info({ ioredisGcFix: gcFix }, gcFix.applied
  ? 'ioredis young-collection fix applied'
  : `ioredis young-collection fix not applied (${gcFix.reason ?? ''}): correct, with longer young-collection pauses`)
// The demo's page at / (its server's public board), and its simulated bot, started below.
if (localRedis !== undefined) app.register(demoPagePlugin, { slug: DEMO_SLUG })
let demoBot: { stop: () => void } | undefined
// The write API, on its own listener when ADMIN_PORT is set: the public port never serves a write.
// With METRICS_PORT, its requests are measured in the API's metrics, which exist once the API is ready.
const admin = config.adminPort === undefined
  ? undefined
  : buildAdminApp(config, {}, config.metricsPort === undefined ? undefined : () => app.metricsRegistry)

/** How long the demo's start waits for one answer of its local Redis. */
const DEMO_START_COMMAND_TIMEOUT_MS = 120_000

/** Plain text for the person at the demo's terminal (the JSON log lines are for machines). */
function say (...lines: string[]): void {
  if (localRedis !== undefined) process.stdout.write(lines.map((line) => `${line}\n`).join(''))
}

/** Whether the API listens: a signal before that stops the start, with nothing served to drain. */
let listening = false
/** Set by a signal while starting: the close ends the process, and the start's steps under way wait for it. */
let stoppingWhileStarting = false
/**
 * Whether the write API's start has begun: Fastify starts an app that is closed before it was
 * started (connecting to Redis, loading every plugin) only to close it, so a stop before then
 * leaves it alone.
 */
let adminStarted = false
const untilStopped = async (): Promise<never> => await new Promise<never>(() => {})

closeWithGrace({
  delay: config.shutdownDrainMs + CLOSE_GRACE_MS,
  logger: { error: (message: unknown) => { app.log.error(message) } },
  onSecondSignal: (signal) => {
    app.log.error({ signal }, 'a second signal: exiting at once')
    say('', '  Stopped at once.')
  }
}, async ({ err, signal }) => {
  if (err !== undefined) {
    app.log.error({ err }, 'closing after an uncaught error')
  } else if (!listening) {
    stoppingWhileStarting = true
    app.log.info({ signal }, 'stopping while starting: nothing served yet, nothing to drain')
    say('', '  Stopping while starting.')
  } else {
    // Readiness fails at once; requests are still served, each telling its client to reconnect.
    app.lifecycle.drain()
    admin?.lifecycle.drain()
    app.log.info({ signal, drainMs: config.shutdownDrainMs }, 'draining: /readyz answers 503, requests still served')
    say('', `  Stopping: draining for ${formatSeconds(config.shutdownDrainMs)} (SHUTDOWN_DRAIN_MS), requests still served. ${signal === 'SIGINT' ? 'Ctrl-C' : signal} again stops at once.`)
    await sleep(config.shutdownDrainMs)
    app.log.info('closing: no new connections, finishing requests in flight')
  }
  demoBot?.stop()
  await Promise.all([app.close(), adminStarted ? admin?.close() : undefined])
  await localRedis?.stop()
  say('  Stopped.')
  // The start's steps under way (readiness, the demo's seeding) would go on against what is closed.
  if (stoppingWhileStarting) process.exit(0)
})

// Apart from listen, so that a failure while starting (the metrics listener's port taken, say)
// is not reported as the API's port.
try {
  await app.ready()
  if (stoppingWhileStarting) await untilStopped()
  adminStarted = true
  await admin?.ready()
} catch (err) {
  if (stoppingWhileStarting) await untilStopped()
  await localRedis?.stop()
  fail((err as Error).message)
}
// The demo's data is seeded before the listener opens: it is the start's work, and an instance
// that answers /readyz serves.
// The start's one-off work has a client of its own that waits for Redis: the local redis-server
// of a busy laptop can take seconds to answer, and a request's short command timeout would end
// the start with an uncaught error instead of a slower start.
const demoStartRedis = localRedis === undefined ? undefined : createRedis({ url: localRedis.url, commandTimeoutMs: DEMO_START_COMMAND_TIMEOUT_MS, offlineQueue: true, name: 'leaderboard-demo-start' })
// Its connection's errors are retried, and a command that cannot wait longer fails the start; one
// that drops as the local Redis stops (a Ctrl-C while seeding) is no news.
demoStartRedis?.on('error', (err: Error) => { app.log.debug({ err }, 'demo start: redis connection error') })
const demoSeed = demoStartRedis === undefined ? undefined : await seedDemo({ redis: demoStartRedis, keys: app.keys })
try {
  if (stoppingWhileStarting) await untilStopped()
  await app.listen({ port: config.port, host: config.host })
  listening = true
} catch (err) {
  if (stoppingWhileStarting) await untilStopped()
  await localRedis?.stop()
  fail(`cannot listen on ${config.host}:${config.port}: ${(err as Error).message}`)
}
if (admin !== undefined) {
  try {
    await admin.listen({ port: config.adminPort, host: config.adminHost })
  } catch (err) {
    await app.close()
    await localRedis?.stop()
    const which = demoAdminPort ? 'ADMIN_PORT, which the demo sets to PORT + 1 when it is unset: set ADMIN_PORT to a free port' : 'ADMIN_PORT'
    fail(`cannot listen on ${config.adminHost}:${String(config.adminPort)} (${which}): ${(err as Error).message}`)
  }
}

/** The URL a local client reaches a listener at: a wildcard address is reached on loopback. */
function localUrl (server: typeof app.server, host: string): string {
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  const reached = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
  return `http://${reached.includes(':') ? `[${reached}]` : reached}:${port}`
}

function formatSeconds (ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`
}

if (localRedis !== undefined) {
  const baseUrl = localUrl(app.server, config.host)
  const demo = await prepareDemo({ redis: demoStartRedis ?? app.redisClient, keys: app.keys, baseUrl, reuseKey: demoState?.apiKey })
  const moreCurls = await seasonCurlLines(demoStartRedis ?? app.redisClient, app.keys, demo)
  demoStartRedis?.disconnect()
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
    `  Demo server ${demo.guildId}${demoSeed?.seeded === true ? ' seeded' : ''}; ${demo.keyReused ? 'the' : 'a new'} demo API key (kept in ${stateFile}): ${demo.key}`,
    ...(demo.staleKey === undefined ? [] : [`  (the key kept from last time ${stale[demo.staleKey]}, so a new one was made)`]),
    '',
    `  ${demo.curl}`,
    ...moreCurls.map((line) => `  ${line}`),
    '',
    `  Live leaderboard page (the demo server's public board; a simulated bot awards XP every second): ${demo.pageUrl}`,
    ...(admin === undefined
      ? []
      : [
          '',
          `  Write API for bots: ${localUrl(admin.server, config.adminHost)}/admin/v1 (ADMIN_PORT). Make it a token, in another terminal:`,
          `    REDIS_URL=${localRedis.url} npm run cli -- tokens create --name my-bot --servers ${demo.guildId}`
        ]),
    '',
    ''
  ].join('\n'))
}
