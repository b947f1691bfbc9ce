// Run by test/response-cache-memory.test.ts in a process of its own (so its resident memory is
// the app's alone): seeds a server, fills the app's response cache with distinct URLs, fetched
// with gzip and br in turn, and prints its resident memory before and after, and the bytes
// held in Buffers after, as JSON.
// Bodies are `around` pages: of 2 to 10 KB (`large`), or of 1.2 to 3.2 KB with names that
// compress less (`small`: more entries, and more compressed forms, in the same bytes). With
// `identity` the same load asks for no compression (what serving costs without it), and the JSON
// also gives V8's heap (committed) and its young generation after, in bytes.
//   node --expose-gc --import tsx test/helpers/cache-memory-child.ts REDIS_URL CACHE_MB URLS [large|small] [compressed|identity]
import { getHeapSpaceStatistics } from 'node:v8'
import { buildApp } from '../../src/app.js'
import { parseConfig } from '../../src/config.js'
import { createRedis } from '../../src/redis/client.js'
import { KeyBuilder } from '../../src/redis/keys.js'
import { LeaderboardWriter } from '../../src/writer/leaderboard-writer.js'
import { ApiKeyStore } from '../../src/api-keys/api-keys.js'

const [redisUrl = '', cacheMb = '16', urlCount = '50000', bodies = 'large', encodings = 'compressed'] = process.argv.slice(2)
const GUILD = '1400000000000000001'
const small = bodies === 'small'
const MEMBERS = small ? 5_100 : 1_500
// Radius 11..50, or 5..14 around members 50 ranks or more from either end: every around body
// is over the compression threshold.
const [MIN_RADIUS, RADII, EDGE] = small ? [5, 10, 50] : [11, 40, 0]
const config = parseConfig({
  redisUrl,
  redisPrefix: `mem${process.pid}`,
  logLevel: 'silent',
  // Memory is measured here, not latency: a loaded machine must not turn slow reads into 503s.
  redisCommandTimeoutMs: 30_000,
  responseCacheMb: Number(cacheMb),
  planLimits: { free: 1e9, starter: 1e9, professional: 1e9 },
  maxEventLoopDelayMs: 0,
  maxInFlight: 0
})
/** 24 letters and digits, the same for a member in every run. */
function randomName (seed: number): string {
  let x = seed + 1
  let name = ''
  for (let i = 0; i < 24; i++) {
    x = (x * 48271) % 2147483647
    name += 'abcdefghijklmnopqrstuvwxyz0123456789'[x % 36]
  }
  return name
}
const redis = createRedis({ url: redisUrl, offlineQueue: true, commandTimeoutMs: 10_000 })
const keys = new KeyBuilder(config.redisPrefix)
await new LeaderboardWriter(redis, keys).bulkSetMembers(GUILD, Array.from({ length: MEMBERS }, (_, i) => ({
  userId: String(1000 + i), xp: 1000 * (i + 1), username: small ? randomName(i) : `a member with a longer display name, number ${i}`
})))
const { key } = await new ApiKeyStore(redis, keys).create({ guildId: GUILD, plan: 'professional' })
const app = buildApp(config)
await app.ready()

const urls = Array.from({ length: Number(urlCount) }, (_, i) =>
  `/api/v1/servers/${GUILD}/members/${1000 + EDGE + Math.floor(i / RADII) % (MEMBERS - 2 * EDGE)}/around?radius=${MIN_RADIUS + i % RADII}`)
if (new Set(urls).size !== urls.length) throw new Error(`only ${(MEMBERS - 2 * EDGE) * RADII} distinct URLs`)

let compressed = 0
async function fetchAll (list: string[]): Promise<void> {
  for (let i = 0; i < list.length; i += 100) {
    await Promise.all(list.slice(i, i + 100).map(async (url, j) => {
      const encoding = encodings === 'identity' ? 'identity' : (i + j) % 2 === 0 ? 'gzip' : 'br'
      const res = await app.inject({ url, headers: { 'x-api-key': key, 'accept-encoding': encoding } })
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
      if (res.headers['content-encoding'] === encoding) compressed++
    }))
  }
}

function settledRss (): number {
  for (let i = 0; i < 3; i++) (globalThis as { gc?: () => void }).gc?.()
  return process.memoryUsage.rss()
}

await fetchAll(urls.slice(0, 500)) // every code path warm, the allocator's arenas in use
const before = settledRss()
await fetchAll(urls)
const after = settledRss()
const { arrayBuffers, heapTotal } = process.memoryUsage()
const youngGeneration = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size
process.stdout.write(JSON.stringify({ before, after, arrayBuffers, heapTotal, youngGeneration, compressed, requests: urls.length }) + '\n')
await app.close()
redis.disconnect()
