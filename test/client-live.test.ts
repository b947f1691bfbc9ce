// The typed client's live updates against the running service: watchLeaderboard, watchMember and
// watchStats yield the endpoints' bodies as they change; a dropped connection is reopened with
// Last-Event-ID (no body yielded twice, no change missed); an AbortSignal ends the loop; an answer
// a retry cannot change is thrown.
import { execFile } from 'node:child_process'
import type { Socket } from 'node:net'
import t, { type Test } from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { built } from './helpers/built.js'
import { LeaderboardApiError, LeaderboardClient, type LiveUpdate } from '../src/client/index.js'

// The subtests run side by side: each app works under a key prefix of its own on the shared
// server, drops only its own connections, and nothing reads the server as a whole.
t.jobs = 5

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const GUILD = '1920000000000000001'

interface Fixture extends TestApp {
  client: LeaderboardClient
  baseUrl: string
  apiKey: string
  /** Every stream request's Last-Event-ID, in order (null for none). */
  lastEventIds: Array<string | null>
}

async function serve (t: Test): Promise<Fixture> {
  const fixture = await buildTestApp(t, server.url, { maxStreamsPerKey: 10 })
  const address = await fixture.app.listen({ port: 0, host: '127.0.0.1' })
  const { key } = await fixture.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  for (let i = 1; i <= 5; i++) await fixture.writer.awardXp({ guildId: GUILD, userId: String(50 + i), xp: 100 * i, username: `p${i}` })
  const lastEventIds: Array<string | null> = []
  const recording: typeof fetch = async (input, init) => {
    lastEventIds.push((init?.headers as Record<string, string>)['last-event-id'] ?? null)
    return await fetch(input, init)
  }
  const baseUrl = `${address}/api/v1`
  return { ...fixture, lastEventIds, baseUrl, apiKey: key, client: new LeaderboardClient({ baseUrl, apiKey: key, fetch: recording }) }
}

/** Takes updates from `updates` into `into` until `count` have come. */
async function take<T> (updates: AsyncGenerator<LiveUpdate<T>>, into: Array<LiveUpdate<T>>, count: number): Promise<void> {
  while (into.length < count) {
    const next = await updates.next()
    if (next.done === true) throw new Error('the watch ended')
    into.push(next.value)
  }
}

t.test('watchLeaderboard, watchMember and watchStats: the current body at once, then each change', async (t) => {
  const { client, writer } = await serve(t)
  const controller = new AbortController()
  t.teardown(() => { controller.abort() })
  const watches = [
    [client.watchLeaderboard(GUILD, { limit: 3, signal: controller.signal }), async () => await client.leaderboard(GUILD, { limit: 3 })],
    [client.watchMember(GUILD, '51', { signal: controller.signal }), async () => await client.member(GUILD, '51')],
    [client.watchStats(GUILD, { signal: controller.signal }), async () => await client.stats(GUILD)]
  ] as const
  const seen: Array<Array<LiveUpdate<unknown>>> = watches.map(() => [])
  await Promise.all(watches.map(async ([updates], i) => { await take(updates as AsyncGenerator<LiveUpdate<unknown>>, seen[i] ?? [], 1) }))
  for (const [i, [, read]] of watches.entries()) t.same(seen[i]?.[0]?.data, (await read()).data, `watch ${i}: the current body`)

  await writer.awardXp({ guildId: GUILD, userId: '51', xp: 2000 })
  await Promise.all(watches.map(async ([updates], i) => { await take(updates as AsyncGenerator<LiveUpdate<unknown>>, seen[i] ?? [], 2) }))
  for (const [i, [, read]] of watches.entries()) {
    t.same(seen[i]?.[1]?.data, (await read()).data, `watch ${i}: the body after the change`)
    t.not(seen[i]?.[1]?.etag, seen[i]?.[0]?.etag, `watch ${i}: with a new ETag`)
  }
})

t.test('a dropped connection: the client reconnects with Last-Event-ID, yields no body twice and misses no change', async (t) => {
  const { client, writer, app, lastEventIds } = await serve(t)
  // The server's side of each connection: a stream's has no HTTP parser once open, so Node's
  // closeAllConnections(), which goes through the parsers, does not see it.
  const connections: Socket[] = []
  app.server.on('connection', (socket: Socket) => { connections.push(socket) })
  const controller = new AbortController()
  t.teardown(() => { controller.abort() })
  const reconnects: unknown[] = []
  const updates = client.watchStats(GUILD, { signal: controller.signal, minRetryMs: 50, onReconnect: (error) => { reconnects.push(error) } })
  const seen: Array<LiveUpdate<unknown>> = []
  await take(updates, seen, 1)

  const next = take(updates, seen, 2)
  for (const socket of connections) socket.destroy() // the connection drops under the client
  await new Promise((resolve) => setTimeout(resolve, 300))
  await writer.awardXp({ guildId: GUILD, userId: '52', xp: 3000 })
  await next
  t.ok(reconnects.length >= 1, 'the client saw the drop and reconnected')
  t.equal(lastEventIds[0], null, 'the first request holds no body')
  t.equal(lastEventIds.at(-1), seen[0]?.etag, 'the reconnection sent the last ETag as Last-Event-ID')
  t.same(seen[1]?.data, (await client.stats(GUILD)).data, 'the change made while reconnecting is the next update')
  t.not(seen[1]?.etag, seen[0]?.etag, 'the body held before the drop was not yielded again')
})

t.test('an AbortSignal ends the loop without an error', async (t) => {
  const { client } = await serve(t)
  const controller = new AbortController()
  const seen: unknown[] = []
  for await (const update of client.watchLeaderboard(GUILD, { signal: controller.signal })) {
    seen.push(update)
    controller.abort()
  }
  t.equal(seen.length, 1, 'one update, then the loop ended')
})

t.test('an answer a retry cannot change is thrown: a non-member, and a member removed while watched', async (t) => {
  const { client, writer } = await serve(t)
  await t.rejects(client.watchMember(GUILD, '999').next(), { name: 'LeaderboardApiError', code: 'member_not_found', statusCode: 404 })

  const updates = client.watchMember(GUILD, '55')
  await updates.next()
  await writer.removeMember({ guildId: GUILD, userId: '55' })
  const error = await updates.next().then(() => null, (err: unknown) => err)
  t.ok(error instanceof LeaderboardApiError, 'a LeaderboardApiError')
  t.match(error, { code: 'member_not_found', statusCode: 404 }, 'member_not_found, from the stream\'s error event')
})

t.test('a program that aborts its watches exits then, also with a watch waiting at a yield, not when its idle timer would fire', async (t) => {
  const { baseUrl, apiKey } = await serve(t)
  // A consumer takes one update of each watch and aborts; one watch is left suspended at its
  // yield (never resumed). Nothing else holds the child's event loop.
  const program = `
    const { LeaderboardClient } = await import(${JSON.stringify(built('client/index.js'))})
    const client = new LeaderboardClient({ baseUrl: ${JSON.stringify(baseUrl)}, apiKey: ${JSON.stringify(apiKey)} })
    const controller = new AbortController()
    const watches = [client.watchStats(${JSON.stringify(GUILD)}, { signal: controller.signal }), client.watchLeaderboard(${JSON.stringify(GUILD)}, { signal: controller.signal })]
    for (const watch of watches) await watch.next()
    controller.abort()
    await watches[0].next()
    console.log('aborted')
  `
  const started = performance.now()
  const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', program], { timeout: 40_000 }, (error, stdout) => {
      if (error !== null) reject(error)
      else resolve({ stdout })
    })
  })
  t.equal(stdout.trim(), 'aborted', 'the child took its updates and aborted')
  t.ok(performance.now() - started < 30_000, 'it exited well before the 45 s idle timeout (it waited for it before)')
})
