// The calendar ticker (src/calendar-ticker/) on the read API's app, which every process runs: it
// ends the seasons due and closes the days that ended for every server, whichever instance gets
// there first. It starts once the app is ready and stops taking work when the drain begins.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { CalendarTicker } from '../calendar-ticker/calendar-ticker.js'
import { DayCloser } from '../history/day-close.js'
import { LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { createRedis, readyWithin } from '../redis/client.js'

/** The longest a command of a day's close may take: a first close's change records, written whole. */
const CLOSE_COMMAND_TIMEOUT_MS = 60_000
/** How long the ticker waits at start for the close's connection. */
const CLOSE_CONNECT_WAIT_MS = 2000
/** The day's close's connection, as CLIENT LIST names it. */
export const CLOSE_CONNECTION_NAME = 'leaderboard-day-close'

export default fp(async function calendarTickerPlugin (fastify: FastifyInstance) {
  const { config } = fastify
  if (config.calendarTickMs === 0) return
  const writer = new LeaderboardWriter(fastify.redisClient, fastify.keys, { clock: fastify.redisClock })
  // The day's close on a connection of its own: a server's first close writes its change records
  // with one SET (13 MB at 1,000,000 members: docs/architecture.md, "A day's close"), which on the
  // requests' connection would hold every read queued behind it while it is sent, and could
  // outlast REDIS_COMMAND_TIMEOUT_MS on a slow link, failing the close each time it is tried.
  const closeRedis = createRedis({ url: config.redisUrl ?? '', cluster: config.redisCluster, commandTimeoutMs: CLOSE_COMMAND_TIMEOUT_MS, name: CLOSE_CONNECTION_NAME })
  // The requests' connection reports an outage (plugins/redis.ts); a close that fails is tried again.
  closeRedis.on('error', () => {})
  const ticker = new CalendarTicker({
    redis: fastify.redisClient,
    keys: fastify.keys,
    settings: writer.settings,
    seasons: writer.seasons,
    days: new DayCloser(closeRedis, fastify.keys),
    tickMs: config.calendarTickMs,
    log: fastify.log.child({ component: 'calendar' })
  })
  fastify.addHook('onReady', async () => {
    // The first tick's close would fail on a connection not up yet: give it the moment the
    // requests' connection had (a Redis that is down fails the close, which is tried again).
    await readyWithin(closeRedis, CLOSE_CONNECT_WAIT_MS)
    ticker.start()
  })
  let stopping: Promise<void> | undefined
  fastify.lifecycle.onDrain(() => { stopping = ticker.stop() })
  fastify.addHook('onClose', async () => {
    // A close still running is cut short here, not waited for (its commands may take 60 s): it
    // commits whole or not at all, and another instance closes the day once its lease ends.
    closeRedis.disconnect()
    await (stopping ?? ticker.stop())
  })
}, { name: 'calendar-ticker', dependencies: ['config', 'redis', 'lifecycle'] })
