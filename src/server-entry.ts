// The package's server entry, `guild-leaderboard/server`: the API as an app to build in a process
// of your own, and its configuration. Apart from the main entry (the writer library), so that a bot
// importing the writer does not load Fastify, the logger and every plugin.
export { buildApp } from './app.js'
export { ConfigError, ConfigSchema, loadConfig, loadRedisConfig, parseConfig, type Config } from './config.js'
// Not installed by building the app: it changes ioredis for the whole process, which is the
// process owner's call (src/server.ts makes it for `npm start`).
export { installIoredisGcFix, IOREDIS_VERSION, type GcFixOutcome } from './redis/ioredis-gc-fix.js'
