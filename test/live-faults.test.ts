// Live updates through faults: a Redis restart, a failover to a replica that missed writes (no
// stream left silent on a change), and the drain on shutdown (every stream ends cleanly; a
// stream opened while draining gets its event and ends, so its client reconnects elsewhere).
import t from 'tap'
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { SseReader } from './helpers/sse.js'

// The subtests run side by side: each stops, restarts or drains only redis-servers and an app of
// its own (no shared server here).
t.jobs = 3

const GUILD = '1910000000000000001'
const BOARD = `/api/v1/servers/${GUILD}/leaderboard`

async function seeded (app: TestApp): Promise<{ base: string, key: string }> {
  const base = await app.app.listen({ port: 0, host: '127.0.0.1' })
  const { key } = await app.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  for (let i = 1; i <= 5; i++) await app.writer.awardXp({ guildId: GUILD, userId: String(40 + i), xp: 100 * i })
  return { base, key }
}

async function page (base: string, key: string): Promise<string> {
  const response = await fetch(new URL(BOARD, base), { headers: { 'x-api-key': key } })
  return await response.text()
}

t.test('a Redis restart: the stream stays open and the first change after it arrives', async (t) => {
  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  const app = await buildTestApp(t, server.url)
  const { base, key } = await seeded(app)
  const stream = await SseReader.open(t, base, `${BOARD}/stream`, { 'x-api-key': key })
  await stream.event(0)

  await server.restart() // saved and started again: no write lost
  await app.writer.awardXp({ guildId: GUILD, userId: '41', xp: 1000 })
  const event = await stream.event(1, 15_000)
  t.notOk(stream.ended, 'the stream was not ended by the outage')
  t.equal(event.data, await page(base, key), 'the change made after the restart is sent')
})

t.test('a failover to a replica that missed the last writes: the stream shows the data as it now is, then the next change', async (t) => {
  const primary = await RedisServer.start(['--repl-diskless-sync-delay', '0'])
  t.teardown(async () => { await primary.close() })
  const replica = await RedisServer.start(['--replicaof', '127.0.0.1', String(primary.port)])
  t.teardown(async () => { await replica.close() })
  const toPrimary = new Redis(primary.url)
  t.teardown(() => { toPrimary.disconnect() })
  const toReplica = new Redis(replica.url)
  t.teardown(() => { toReplica.disconnect() })

  const app = await buildTestApp(t, primary.url)
  const { base, key } = await seeded(app)
  await toPrimary.set('failover-test-marker', '1')
  t.equal(await toPrimary.wait(1, 10_000), 1, 'the replica has every write so far')
  await toReplica.replicaof('NO', 'ONE') // the writes that follow are lost in the failover
  const before = await page(base, key)

  const stream = await SseReader.open(t, base, `${BOARD}/stream`, { 'x-api-key': key })
  await stream.event(0)
  await app.writer.awardXp({ guildId: GUILD, userId: '42', xp: 5000 }) // lost
  const lost = await stream.event(1)
  t.not(lost.data, before, 'the write (soon lost) was shown')

  // The address the instance uses now serves the promoted replica's data.
  await primary.stop()
  await toReplica.save()
  copyFileSync(join(replica.dir, 'dump.rdb'), join(primary.dir, 'dump.rdb'))
  await primary.startProcess()

  const rolledBack = await stream.event(2, 15_000)
  t.equal(rolledBack.data, before, 'the board as the promoted replica holds it, without the lost write')
  await app.writer.awardXp({ guildId: GUILD, userId: '43', xp: 7000 })
  const next = await stream.event(3, 15_000)
  t.equal(next.data, await page(base, key), 'then the next change')
  t.notOk(stream.ended, 'one stream throughout')
})

t.test('drain: every stream ends cleanly; one opened while draining gets its event and ends', async (t) => {
  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  const app = await buildTestApp(t, server.url, { maxStreamsPerKey: 10 })
  const { base, key } = await seeded(app)
  const streams = await Promise.all([1, 2, 3].map(async () => await SseReader.open(t, base, `${BOARD}/stream`, { 'x-api-key': key })))
  await Promise.all(streams.map(async (s) => await s.event(0)))

  app.app.lifecycle.drain() // what SIGTERM does first (src/server.ts)
  await Promise.all(streams.map(async (s) => { await s.until(() => s.ended, 'the end of the stream', 5000) }))
  t.pass('every open stream ended')

  const late = await SseReader.open(t, base, `${BOARD}/stream`, { 'x-api-key': key })
  t.equal(late.status, 200, 'a stream opened while draining is served, no 5xx')
  t.equal(late.headers.connection, 'close', 'telling the client to reconnect elsewhere')
  await late.until(() => late.ended, 'its end', 5000)
  t.equal(late.events.length, 1, 'it got the current page, then ended')

  const closing = app.app.close()
  await closing
  t.pass('the app closes with no stream holding it')
})
