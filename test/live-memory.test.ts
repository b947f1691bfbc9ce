// What an open stream costs the service's heap, against a real Redis, in a process of its own
// (test/helpers/live-memory-child.ts): its connection, Node's and Fastify's request and response,
// its place in the watcher; nothing compiled for it alone (the route's serializer is compiled
// once, not at each stream's opening).
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RedisServer } from './helpers/redis-server.js'
import { SseReader } from './helpers/sse.js'
import { startMemoryChild } from './helpers/live-memory.js'
import { createRedis } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'

t.setTimeout(180_000)

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })
const dir = mkdtempSync(join(tmpdir(), 'lb-live-memory-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })

const GUILD = '1970000000000000001'
/** Streams opened between the two measures: enough that a collection's leftovers (about 1 MB) are under 4 KB a stream. */
const STREAMS = 300
/**
 * The heap an open stream may hold. Measured: 9 to 10 KB on Node 24 (Node's socket, request and
 * response and their listeners, Fastify's request, reply and logger, the stream and its place
 * in the watcher); with a serializer compiled at each opening, 30 KB.
 */
const MAX_BYTES_PER_STREAM = 16 * 1024

t.test(`an open stream holds at most ${MAX_BYTES_PER_STREAM / 1024} KB of the service's heap: ${STREAMS} streams of one route`, async (t) => {
  const prefix = 'live-memory'
  const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 10_000 })
  t.teardown(() => { redis.disconnect() })
  const keys = new KeyBuilder(prefix)
  const writer = new LeaderboardWriter(redis, keys)
  for (let i = 1; i <= 10; i++) await writer.awardXp({ guildId: GUILD, userId: String(i), xp: 100 * i })
  const { key } = await new ApiKeyStore(redis, keys).create({ guildId: GUILD, plan: 'professional' })
  const measure = await startMemoryChild(t, server.url, prefix, join(dir, 'child.sock'))
  const held = async (): Promise<number> => (await measure()).held
  // Pages of one route that differ (limit 1 to 10), as streams of many servers and pages would.
  const open = async (i: number): Promise<SseReader> => {
    const reader = await SseReader.open(t, 'http://localhost', `/api/v1/servers/${GUILD}/leaderboard/stream?limit=${1 + (i % 10)}`, { 'x-api-key': key }, join(dir, 'child.sock'))
    await reader.event(0)
    return reader
  }

  // The first streams of each page build what every later one shares (compiled code, the topics).
  const first = await Promise.all(Array.from({ length: 20 }, async (_, i) => await open(i)))
  const before = await held()
  const streams: SseReader[] = []
  for (let i = 0; i < STREAMS; i += 50) streams.push(...await Promise.all(Array.from({ length: 50 }, async (_, j) => await open(i + j))))
  const after = await held()

  const perStream = (after - before) / STREAMS
  t.ok(perStream <= MAX_BYTES_PER_STREAM, `${(perStream / 1024).toFixed(1)} KB of heap and Buffers per open stream (${STREAMS} streams: ` +
    `${((after - before) / 1024 / 1024).toFixed(2)} MB)`)
  for (const s of [...first, ...streams]) s.close()
})
