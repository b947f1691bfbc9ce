// Live-update streams whose clients stop reading, against a real Redis, over Unix sockets (their
// buffers hold a few hundred KB, where TCP on one machine takes megabytes before the writer sees
// that its client stopped): the service keeps one event for such a stream, the latest, and
// writes it once the client reads again, so neither a backlog for the client nor memory in the
// process builds up, however often the page changes.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setImmediate } from 'node:timers/promises'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import { SseReader, type StreamEvent } from './helpers/sse.js'
import { startMemoryChild } from './helpers/live-memory.js'
import { createRedis } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'

// Each change is an event of its own, a second apart: some fifty seconds of them in all.
t.setTimeout(300_000)

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })
const dir = mkdtempSync(join(tmpdir(), 'lb-backpressure-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })

const GUILD = '1950000000000000001'
const TOP = '100'

/** 100 members named with 100 three-byte characters each: a 100-entry page is some 40 KB. */
async function seedLongNames (writer: LeaderboardWriter): Promise<void> {
  await writer.bulkSetMembers(GUILD, Array.from({ length: 100 }, (_, i) => ({
    userId: String(i + 1), xp: 1000 * (i + 1), username: `${i} ${'€'.repeat(95)}`
  })))
}

/**
 * How many events of `size` bytes a stream over a Unix socket takes, its client paused after the
 * first as `stalled` below is, before its writer finds one the socket could not hand over: what
 * a stalled client's connection holds outside the service.
 */
async function transportHolds (size: number): Promise<number> {
  const path = join(dir, `probe-${size}.sock`)
  const frame = Buffer.from(`event: probe\ndata: ${'x'.repeat(size - 'event: probe\ndata: \n\n'.length)}\n\n`)
  let held: (taken: number) => void = () => {}
  const holds = new Promise<number>((resolve) => { held = resolve })
  const probe = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    let taken = 0
    const next = (): void => {
      response.write(frame)
      // Past the response's own cork, which lasts the turn.
      setImmediate().then(() => {
        if (response.writableLength > 0) {
          held(taken)
          return
        }
        taken++
        next()
      }, () => {})
    }
    next()
  })
  t.teardown(() => { probe.closeAllConnections(); probe.close() })
  await new Promise<void>((resolve) => probe.listen(path, resolve))
  const client = await SseReader.open(t, 'http://localhost', '/', {}, path)
  await client.event(0)
  client.pause()
  const taken = await holds
  client.close()
  return taken
}

/** The bytes of an event as the service writes it. */
function eventSize (event: StreamEvent): number {
  return Buffer.byteLength(`event: ${event.event ?? ''}\nid: ${event.id ?? ''}\ndata: ${event.data}\n\n`)
}

t.test('a client that stops reading while its page changes many times gets, once it reads again, the latest page, not a backlog; its stream stays open', async (t) => {
  const f = await buildTestApp(t, server.url)
  await seedLongNames(f.writer)
  const { key } = await f.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const socketPath = join(dir, 'app.sock')
  await f.app.listen({ path: socketPath })
  const open = async (): Promise<SseReader> =>
    await SseReader.open(t, 'http://localhost', `/api/v1/servers/${GUILD}/leaderboard/stream?limit=100`, { 'x-api-key': key }, socketPath)

  // Reads every event: one for each tick in which the page changed.
  const clock = await open()
  const stalled = await open()
  const first = await stalled.event(0)
  await clock.event(0)
  stalled.pause()
  const holds = await transportHolds(eventSize(first))
  const changes = holds + 10
  for (let i = 1; i <= changes; i++) {
    await f.writer.awardXp({ guildId: GUILD, userId: TOP, xp: 1 })
    await clock.event(i, 20_000) // shown before the next change: each change an event of its own
  }
  const latest = clock.events.at(-1)
  const before = stalled.events.length
  stalled.resume()
  await stalled.until(() => stalled.events.at(-1)?.id === latest?.id, 'the latest page', 20_000)
  const received = stalled.events.length - before
  // One more than the probe counted: its client's socket reads 64 KB at a time, and at the
  // service's pace it may take an event more before the client's buffer says stop.
  t.ok(received <= holds + 3, `${received} events after reading again, for ${changes} changes: what the socket held (${holds} such events, ` +
    'one more at most), the one it was taking, and the latest')
  t.equal(stalled.events.at(-1)?.data, latest?.data, 'the last is the latest page')
  t.notOk(stalled.ended, 'and the stream is still open')
})

t.test('the service\'s memory for stalled streams: each holds two events at most (the latest, and the one its socket did not take), however many changes it missed', async (t) => {
  const prefix = 'backpressure-memory'
  const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 10_000 })
  t.teardown(() => { redis.disconnect() })
  const keys = new KeyBuilder(prefix)
  const writer = new LeaderboardWriter(redis, keys)
  await seedLongNames(writer)
  const { key } = await new ApiKeyStore(redis, keys).create({ guildId: GUILD, plan: 'professional' })
  const socketPath = join(dir, 'child.sock')
  const measure = await startMemoryChild(t, server.url, prefix, socketPath)

  // One stream per page size: pages that differ, so that no two streams share an event's bytes.
  const limits = Array.from({ length: 40 }, (_, i) => 61 + i)
  const open = async (limit: number): Promise<SseReader> =>
    await SseReader.open(t, 'http://localhost', `/api/v1/servers/${GUILD}/leaderboard/stream?limit=${limit}`, { 'x-api-key': key }, socketPath)
  const clock = await open(60)
  await clock.event(0)
  const stalled = await Promise.all(limits.map(open))
  const sizes = await Promise.all(stalled.map(async (s) => eventSize(await s.event(0))))
  let shown = 0
  const change = async (): Promise<void> => {
    await writer.awardXp({ guildId: GUILD, userId: TOP, xp: 1 })
    await clock.event(++shown, 20_000) // shown before the next change: each change an event of its own
  }
  // The same number of changes with every client reading, then with every client stalled: what
  // the service holds past the first is what the stalled streams hold.
  const changes = await transportHolds(Math.min(...sizes)) + 6
  for (let i = 0; i < 3; i++) await change() // what the first changes build (compiled code, pools)
  const before = await measure()
  for (let i = 0; i < changes; i++) await change()
  await Promise.all(stalled.map(async (s) => await s.event(shown, 20_000)))
  for (const s of stalled) s.pause()
  const reading = await measure()
  for (let i = 0; i < changes; i++) await change()
  const stalledMemory = await measure()

  const MB = 1024 * 1024
  const mb = (bytes: number): string => (bytes / MB).toFixed(2)
  const whileReading = reading.held - before.held
  const whileStalled = stalledMemory.held - reading.held
  const twoEvents = 2 * sizes.reduce((a, b) => a + b, 0)
  // A collection's leftovers move the heap by about a megabyte between two measures of the same
  // load (the reading phase measured -2.45 MB once); stalled streams that held every event they
  // missed grew it by 8.7 MB here.
  const noise = MB
  t.ok(whileStalled <= Math.max(0, whileReading) + twoEvents + noise,
    `${changes} changes to ${stalled.length} pages: the heap and Buffers grew by ${mb(whileReading)} MB with every client reading, ` +
    `by ${mb(whileStalled)} MB with every client stalled; two events for each stalled stream are ${mb(twoEvents)} MB (and 1 MB of the heap's noise) ` +
    `(resident memory ${(before.rss / MB).toFixed(0)}, ${(reading.rss / MB).toFixed(0)}, ${(stalledMemory.rss / MB).toFixed(0)} MB)`)
  for (const s of stalled) s.close()
})

t.test('a stats stream whose client does not read while the server\'s events come (which cannot be coalesced) ends once it would hold more than 16 KiB of them; a client that reads gets every one', async (t) => {
  const f = await buildTestApp(t, server.url)
  const guild = '1950000000000000002'
  const { key } = await f.apiKeys.create({ guildId: guild, plan: 'professional' })
  await f.writer.awardXp({ guildId: guild, userId: '1', xp: 1 })
  const socketPath = join(dir, 'typed.sock')
  await f.app.listen({ path: socketPath })
  const open = async (): Promise<SseReader> =>
    await SseReader.open(t, 'http://localhost', `/api/v1/servers/${guild}/stats/stream`, { 'x-api-key': key }, socketPath)
  const reading = await open()
  const stalled = await open()
  await reading.event(0)
  await stalled.event(0)
  const levelUps = (reader: SseReader): number => reader.events.filter((e) => e.event === 'member.leveled_up').length
  // The streams listen from their first tick on: a level-up reaching both says they do.
  let next = 2
  while (levelUps(stalled) === 0) {
    await f.writer.awardXp({ guildId: guild, userId: String(next++), xp: 5000 })
    await stalled.until(() => levelUps(stalled) > 0, 'a level-up', 1500).catch(() => {})
  }
  await reading.until(() => levelUps(reading) >= next - 2, 'the first level-ups')
  stalled.pause()
  const base = levelUps(reading)
  // Some 550 bytes each: 3,000 are more than the socket's buffers (some 500 KB, the first test's
  // probe) and 16 KiB together.
  const awarded = 3000
  for (let i = 0; i < awarded; i += 250) {
    await f.writer.awardMany(guild, Array.from({ length: 250 }, (_, j) => ({ userId: String(100_000 + i + j), xp: 5000, username: '€'.repeat(100) })))
  }
  await reading.until(() => levelUps(reading) >= base + awarded, 'every level-up', 60_000)
  t.equal(levelUps(reading), base + awarded, 'the reading client got every level-up')
  t.notOk(reading.ended, 'its stream is open')
  stalled.resume()
  await stalled.until(() => stalled.ended, 'the stalled stream\'s end', 30_000)
  const got = levelUps(stalled)
  t.ok(got < base + awarded, `the stalled client, reading again, got ${got} of ${base + awarded} level-ups, then the stream's end`)
})
