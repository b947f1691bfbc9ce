// Run in a process of its own by ./live-memory.ts (for test/live-backpressure.test.ts and
// test/live-memory.test.ts), so that what it measures is the service's alone (its clients are
// the test's): the app on a Unix socket; each line "memory" on standard input is answered with
// one line of JSON, the heap and the Buffers it holds after full collections, and the resident
// memory.
//   node --expose-gc --import tsx test/helpers/live-memory-child.ts REDIS_URL REDIS_PREFIX SOCKET_PATH
import { createInterface } from 'node:readline'
import { buildApp } from '../../src/app.js'
import { parseConfig } from '../../src/config.js'

const [redisUrl = '', redisPrefix = '', socketPath = ''] = process.argv.slice(2)
const config = parseConfig({
  redisUrl,
  redisPrefix,
  logLevel: 'silent',
  redisCommandTimeoutMs: 10_000,
  maxStreamsPerKey: 1000,
  maxEventLoopDelayMs: 0,
  maxInFlight: 0
})
const app = buildApp(config)
await app.listen({ path: socketPath })
process.stdout.write('ready\n')

const gc = (globalThis as { gc?: () => void }).gc
for await (const line of createInterface({ input: process.stdin })) {
  if (line !== 'memory') continue
  for (let i = 0; i < 4; i++) gc?.()
  const { heapUsed, external, rss } = process.memoryUsage()
  process.stdout.write(JSON.stringify({ held: heapUsed + external, rss }) + '\n')
}
await app.close()
