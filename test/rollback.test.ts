// Redis going back in time: a restart from an older snapshot, and a failover to a replica that
// missed the last writes. The data versions handed out before such an event named data that is
// now lost; a new write must never get one of them again, or an instance that cached a lost body
// would serve it on (and a client holding its ETag would get 304s for other data).
import t, { type Test } from 'tap'
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp, type TestApp } from './helpers/app.js'

const GUILD = '1300000000000000001'
const BOARD = `/api/v1/servers/${GUILD}/leaderboard`
const STATS = `/api/v1/servers/${GUILD}/stats`

async function get (app: TestApp, key: string, url: string, etag?: string): Promise<{ status: number, etag: string, body: string }> {
  const headers: Record<string, string> = { 'x-api-key': key }
  if (etag !== undefined) headers['if-none-match'] = etag
  const res = await app.app.inject({ method: 'GET', url, headers })
  return { status: res.statusCode, etag: String(res.headers.etag), body: res.body }
}

/** Reads until Redis answers again (the instance reconnects by itself after a restart). */
async function getWhenUp (app: TestApp, key: string, url: string, etag?: string): Promise<{ status: number, etag: string, body: string }> {
  for (let attempt = 0; ; attempt++) {
    const res = await get(app, key, url, etag)
    if (res.status !== 503 || attempt >= 200) return res
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * A server with two members, read (and so cached) by `app`; then a write that the coming event
 * will lose (a member at 9,000,000 XP), read and cached too. Returns what a client saw of each.
 */
async function beforeTheEvent (t: Test, app: TestApp, key: string, lose: () => Promise<void>) {
  await app.writer.setXp({ guildId: GUILD, userId: '1', xp: 100, username: 'kept' })
  await app.writer.setXp({ guildId: GUILD, userId: '2', xp: 50, username: 'kept too' })
  const kept = await get(app, key, BOARD)
  t.equal(kept.status, 200)
  await lose()
  await app.writer.setXp({ guildId: GUILD, userId: '3', xp: 9_000_000, username: 'lost' })
  const lost = await get(app, key, BOARD)
  const lostStats = await get(app, key, STATS)
  t.match(lost.body, /"username":"lost"/, 'the write to be lost was served (and cached)')
  t.equal((await get(app, key, BOARD, lost.etag)).status, 304, 'and its ETag revalidated')
  return { lost, lostStats }
}

/** After the event and one new write: no lost body from any instance, no 304 for a lost ETag. */
async function afterTheEvent (t: Test, apps: TestApp[], key: string, seen: { lost: { etag: string }, lostStats: { etag: string } }): Promise<void> {
  const [app] = apps as [TestApp]
  await getWhenUp(app, key, `/api/v1/servers/${GUILD}/members/1`) // not a URL the instance has cached
  await app.writer.awardXp({ guildId: GUILD, userId: '2', xp: 7 })
  for (const [i, each] of apps.entries()) {
    const page = await getWhenUp(each, key, BOARD)
    t.equal(page.status, 200)
    t.notMatch(page.body, /"username":"lost"/, `instance ${i}: the lost member is not served`)
    t.match(page.body, /"user_id":"2","username":"kept too","display_name":null,"avatar_url":null,"level":\d+,"xp":57,/, `instance ${i}: the new write is`)
    t.equal((await get(each, key, BOARD, seen.lost.etag)).status, 200, `instance ${i}: the lost page's ETag gets the page, not a 304`)
    const stats = await get(each, key, STATS, seen.lostStats.etag)
    t.equal(stats.status, 200, `instance ${i}: the lost stats' ETag gets the stats, not a 304`)
    t.match(stats.body, /"total_xp":157,/, `instance ${i}: stats without the lost XP`)
  }
}

t.test('a restart from an older snapshot, then a write: fresh bodies and no 304 for a lost ETag, on an instance that cached the lost body and on a new one', async (t) => {
  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  const app = await buildTestApp(t, server.url)
  const { key } = await app.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const admin = new Redis(server.url, { maxRetriesPerRequest: null })
  admin.on('error', () => {})
  t.teardown(() => { admin.disconnect() })

  const seen = await beforeTheEvent(t, app, key, async () => { await admin.save() })
  await server.stop() // killed: what was written since the SAVE is lost
  await server.startProcess() // the snapshot is loaded
  const fresh = await buildTestApp(t, server.url, { redisPrefix: app.config.redisPrefix })
  await afterTheEvent(t, [app, fresh], key, seen)
})

t.test('a failover to a replica that missed the last writes, then a write: fresh bodies and no 304 for a lost ETag', async (t) => {
  const primary = await RedisServer.start(['--repl-diskless-sync-delay', '0']) // the replica syncs at once
  t.teardown(async () => { await primary.close() })
  const replica = await RedisServer.start(['--replicaof', '127.0.0.1', String(primary.port)])
  t.teardown(async () => { await replica.close() })
  const toPrimary = new Redis(primary.url)
  t.teardown(() => { toPrimary.disconnect() })
  const toReplica = new Redis(replica.url)
  t.teardown(() => { toReplica.disconnect() })

  const app = await buildTestApp(t, primary.url)
  const { key } = await app.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const seen = await beforeTheEvent(t, app, key, async () => {
    // WAIT counts the replicas that have this connection's last write, so write once here first.
    await toPrimary.set('rollback-test-marker', '1')
    t.equal(await toPrimary.wait(1, 10_000), 1, 'the replica has every write so far')
    await toReplica.replicaof('NO', 'ONE') // replication stops: the writes that follow are lost
  })
  // The address the instances use now serves the promoted replica's data (as a moved address or
  // a Sentinel-aware proxy would): its snapshot, loaded where the primary was.
  await primary.stop()
  await toReplica.save()
  copyFileSync(join(replica.dir, 'dump.rdb'), join(primary.dir, 'dump.rdb'))
  await primary.startProcess()
  await afterTheEvent(t, [app], key, seen)
})
