// The calendar ticker (src/calendar-ticker/) on the read API's app, which every process runs: it
// ends the seasons due and closes the days that ended for every server, whichever instance gets
// there first. It starts once the app is ready and stops taking work when the drain begins.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { CalendarTicker } from '../calendar-ticker/calendar-ticker.js'
import { DayCloser } from '../history/day-close.js'
import { LeaderboardWriter } from '../writer/leaderboard-writer.js'

export default fp(async function calendarTickerPlugin (fastify: FastifyInstance) {
  const { config } = fastify
  if (config.calendarTickMs === 0) return
  const writer = new LeaderboardWriter(fastify.redisClient, fastify.keys, { clock: fastify.redisClock })
  const ticker = new CalendarTicker({
    redis: fastify.redisClient,
    keys: fastify.keys,
    settings: writer.settings,
    seasons: writer.seasons,
    days: new DayCloser(fastify.redisClient, fastify.keys),
    tickMs: config.calendarTickMs,
    log: fastify.log.child({ component: 'calendar' })
  })
  fastify.addHook('onReady', async () => { ticker.start() })
  let stopping: Promise<void> | undefined
  fastify.lifecycle.onDrain(() => { stopping = ticker.stop() })
  fastify.addHook('onClose', async () => { await (stopping ?? ticker.stop()) })
}, { name: 'calendar-ticker', dependencies: ['config', 'redis', 'lifecycle'] })
