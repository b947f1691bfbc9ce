// A resharding under load: the hash slot of a server being read by pollers, or written by bots
// over the write API and with the library, moves to another master (CLUSTER SETSLOT …
// IMPORTING / MIGRATING, MIGRATE of its keys in batches, then SETSLOT … NODE everywhere). Redis
// answers ASK, TRYAGAIN, then MOVED and NOSCRIPT meanwhile; the service follows the redirections
// (src/redis/redirects.ts), never answers a 500, and applies each write once; the award
// functions' library is loaded on the new owner (src/redis/functions.ts). Then the new owner is killed and its replica takes
// over (a failover): 503s while no node serves the slot, never a 500, and the same answers after;
// and writers through a failover to a replica without the library.
import t, { type Test } from 'tap'
import { spawnSync } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { RedisCluster } from './helpers/redis-server.js'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { buildTestAdmin } from './helpers/admin.js'
import { awardLoad, xpOnBoard } from './helpers/award-load.js'
import { library } from '../src/redis/functions.js'

// 3 masters and 3 replicas; a master unreachable for a second is replaced by its replica.
const cluster = await RedisCluster.start(3, { replicas: 1, nodeTimeoutMs: 1000 })
t.teardown(async () => { await cluster.close() })

const GUILD = '1500000000000000001'
const API = `/api/v1/servers/${GUILD}`

interface Node { id: string, port: number, client: Redis }

/** Masters a failover test stopped. */
const killed = new Set<Node>()

const nodes: Node[] = cluster.nodes.map((n) => {
  const client = new Redis(n.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  client.on('error', () => {}) // the failover test kills one of them
  return { id: '', port: n.port, client }
})
t.teardown(() => { for (const n of nodes) n.client.disconnect() })
for (const n of nodes) n.id = await n.client.cluster('MYID') as string

/** The master serving `slot` now, as the first live node sees the cluster. */
async function ownerOf (slot: number, live: Node[] = nodes): Promise<Node> {
  const shards = await live[0]!.client.cluster('SLOTS')
  const port = shards.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1]
  return nodes.find((n) => n.port === port) as Node
}

async function masters (live: Node[] = nodes): Promise<Node[]> {
  const shards = await live[0]!.client.cluster('SLOTS')
  return nodes.filter((n) => shards.some((shard) => shard[2]?.[1] === n.port))
}

/**
 * Moves the hash slot of `slotKey` to another master as an operator's resharding does, key by key
 * with a pause between, so that clients meet the slot half moved (ASK, TRYAGAIN), then MOVED
 * from the old owner.
 */
async function moveSlot (t: Test, slotKey: string): Promise<void> {
  const slot = await nodes[0]!.client.cluster('KEYSLOT', slotKey) as number
  const source = await ownerOf(slot)
  const target = (await masters()).find((n) => n !== source) as Node
  await target.client.cluster('SETSLOT', slot, 'IMPORTING', source.id)
  await source.client.cluster('SETSLOT', slot, 'MIGRATING', target.id)
  for (;;) {
    const batch = await source.client.cluster('GETKEYSINSLOT', slot, 1) as string[]
    if (batch.length === 0) break
    await source.client.migrate('127.0.0.1', target.port, '', 0, 5000, 'KEYS', ...batch)
    await new Promise((resolve) => setTimeout(resolve, 50)) // clients meet the slot half moved
  }
  for (const n of [target, source, ...(await masters()).filter((n) => n !== source && n !== target)]) {
    await n.client.cluster('SETSLOT', slot, 'NODE', target.id)
  }
  await new Promise((resolve) => setTimeout(resolve, 300)) // clients meet MOVED from the old owner
  t.not((await ownerOf(slot)).port, source.port, `slot ${slot} moved`)
}

/** `count` pollers reading `urls` in turn until `state.polling` is false, counting statuses; any 5xx but a 503 is a failure. */
function poll (app: TestApp['app'], key: string, urls: string[], count = 8) {
  const statuses = new Map<number, number>()
  const failures: string[] = []
  const state = { polling: true }
  const pollers = Array.from({ length: count }, async (_, p) => {
    for (let i = p; state.polling; i++) {
      const url = urls[i % urls.length] as string
      const res = await app.inject({ url, headers: { 'x-api-key': key } })
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
      if (res.statusCode >= 500 && res.statusCode !== 503) failures.push(`${url}: ${res.statusCode} ${res.body}`)
      if (res.statusCode === 503) await new Promise((resolve) => setTimeout(resolve, 10)) // as a client told retry-after would, sooner
    }
  })
  return {
    statuses,
    failures,
    async stop () {
      state.polling = false
      await Promise.all(pollers)
      return `${[...statuses.values()].reduce((a, b) => a + b, 0)} requests: ${JSON.stringify(Object.fromEntries(statuses))}`
    }
  }
}

async function arrange (t: Test) {
  // No response cache, so that every poll reads Redis; a limit no poller reaches.
  // The production default timeout (the test apps' own is 10 s): while no node serves the slot
  // in a failover, a poller's request waits that long, then is answered 503.
  const test = await buildTestApp(t, cluster.url, {
    redisCluster: true, responseCacheMb: 0, redisCommandTimeoutMs: 500, planLimits: { free: 100, starter: 1000, professional: 100_000_000 }
  })
  for (let i = 0; i < 300; i++) await test.writer.awardXp({ guildId: GUILD, userId: String(1000 + i), xp: 10 + i, username: `member ${i}` })
  const { id, key } = await test.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const urls = [`${API}/leaderboard?limit=20`, `${API}/members/1100`, `${API}/stats`, `${API}/members/1100/around?radius=3`, `${API}/leaderboard?period=week`]
  const read = async () => await Promise.all(urls.map(async (url) => (await test.app.inject({ url, headers: { 'x-api-key': key } })).body))
  return { ...test, id, key, urls, read }
}

t.test('pollers while the server\'s slot migrates to another master: no 500, the same answers after', async (t) => {
  const { app, keys, id, key, urls, read } = await arrange(t)
  const before = await read()
  const polling = poll(app, key, urls)

  // The server's slot, then the slot of the API key's rate window, each to another master.
  for (const slotKey of [keys.guild(GUILD).board, keys.keyRateLimit(id)]) await moveSlot(t, slotKey)
  const counted = await polling.stop()
  t.same(polling.failures.slice(0, 3), [], `no 500 in ${counted}`)
  t.ok((polling.statuses.get(200) ?? 0) > 0, 'requests were served during the move')
  t.same(await read(), before, 'after the move, every read answers as before')
})

t.test("writers while the server's slot and then the token's slot migrate: no 500, each acknowledged award applied once", async (t) => {
  // The production command timeout, as in the readers' test above.
  const { admin, writer, keys, tokens, redis } = await buildTestAdmin(t, cluster.url, { redisCluster: true, redisCommandTimeoutMs: 500 })
  const bot = await tokens.create({ name: 'bot', servers: '*', scopes: ['write'] })
  const redirected = async (): Promise<number> => {
    let sum = 0
    for (const n of await masters()) {
      for (const m of (await n.client.info('commandstats')).matchAll(/^cmdstat_(?:eval|evalsha|fcall|set|get|hmget):.*rejected_calls=(\d+)/gm)) sum += Number(m[1])
    }
    return sum
  }
  const redirectedBefore = await redirected()
  const load = awardLoad({ admin, token: bot.token, writer, guildId: GUILD })
  await sleep(200) // writes under way before the move
  // The token's slot holds its record and its requests' Idempotency-Keys.
  for (const slotKey of [keys.guild(GUILD).board, keys.token(bot.id)]) await moveSlot(t, slotKey)
  const { acknowledged, failures, counted } = await load.stop()

  t.same(failures.slice(0, 3), [], `no 500 and no error but "not now" from the library, in ${counted}`)
  t.ok(await redirected() > redirectedBefore, 'the writers met the move: Redis refused some of their commands with a redirection')
  t.ok(acknowledged > 0, `${acknowledged} XP acknowledged`)
  t.equal(await xpOnBoard(redis, keys, GUILD), acknowledged, 'the XP on the board is the sum of the acknowledged gains: nothing lost, nothing applied twice')
  t.equal(Number(await redis.hget(keys.guild(GUILD).stats, 'xp_total')), acknowledged, 'and so is the server\'s total')
  const owner = await ownerOf(await nodes[0]!.client.cluster('KEYSLOT', keys.guild(GUILD).board) as number)
  t.ok((await librariesOn(owner)).includes(library().name), 'the award functions\' library was loaded on the slot\'s new owner')
})

t.test('pollers while the master serving the server is killed and its replica takes over: no 500, the same answers after', async (t) => {
  const { app, keys, key, urls, read } = await arrange(t)
  const before = await read()
  const slot = await nodes[0]!.client.cluster('KEYSLOT', keys.guild(GUILD).board) as number
  const master = await ownerOf(slot)
  const replica = nodes.find((n) => n.id === replicaIdOf(master)) as Node
  t.ok(replica, `master ${master.port} has a replica`)
  // The replica has every write so far (its replication offset reached the master's).
  for (let i = 0; await offsetOf(replica, 'slave_repl_offset') < await offsetOf(master, 'master_repl_offset'); i++) {
    if (i > 200) throw new Error('the replica did not catch up')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }

  const polling = poll(app, key, urls)
  await new Promise((resolve) => setTimeout(resolve, 200)) // pollers are served by the master
  await cluster.nodes.find((n) => n.port === master.port)!.stop()
  killed.add(master)
  const live = nodes.filter((n) => n !== master)
  for (let i = 0; (await ownerOf(slot, live)).port !== replica.port; i++) {
    if (i > 300) throw new Error('the replica did not take over')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const servedBefore = polling.statuses.get(200) ?? 0
  // Until the instance has found the new master and served from it for a while.
  for (let i = 0; (polling.statuses.get(200) ?? 0) < servedBefore + 200; i++) {
    if (i > 300) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const counted = await polling.stop()
  t.same(polling.failures.slice(0, 3), [], `no 500 in ${counted}`)
  t.ok((polling.statuses.get(503) ?? 0) > 0, 'the failover was seen: 503s while no node served the slot')
  t.ok((polling.statuses.get(200) ?? 0) >= servedBefore + 200, 'the replica, promoted, serves the pollers')
  t.same(await read(), before, 'after the failover, every read answers as before')
})

t.test('writers while the master serving their server is killed and its replica, without the library, takes over: no 500, each acknowledged award applied once', async (t) => {
  const { admin, writer, keys, tokens, redis } = await buildTestAdmin(t, cluster.url, { redisCluster: true, redisCommandTimeoutMs: 500 })
  const live = nodes.filter((n) => !killed.has(n))
  // A server whose master still has a live replica (the test above killed one master).
  let guildId = ''
  let master: Node | undefined
  let replica: Node | undefined
  for (let i = 2; replica === undefined; i++) {
    if (i > 200) throw new Error('no master with a live replica')
    guildId = `15000000000000000${String(i).padStart(2, '0')}`
    master = await ownerOf(await live[0]!.client.cluster('KEYSLOT', keys.guild(guildId).board) as number, live)
    replica = live.find((n) => n.id === replicaIdOf(master as Node))
  }
  await writer.awardXp({ guildId, userId: '1', xp: 1 }) // the library loaded on the master, and replicated
  for (let i = 0; await offsetOf(replica, 'slave_repl_offset') < await offsetOf(master as Node, 'master_repl_offset'); i++) {
    if (i > 200) throw new Error('the replica did not catch up')
    await sleep(25)
  }
  // The replica without it, as one whose master loaded it after the last write it got, or restored from an older RDB.
  await replica.client.config('SET', 'replica-read-only', 'no')
  await replica.client.call('FUNCTION', 'FLUSH')
  await replica.client.config('SET', 'replica-read-only', 'yes')
  t.same(await librariesOn(replica), [])

  const bot = await tokens.create({ name: 'bot', servers: '*', scopes: ['write'] })
  const load = awardLoad({ admin, token: bot.token, writer, guildId })
  await sleep(200) // writes under way before the failover
  // Replication is asynchronous: a write the master acknowledged in the instant before it died
  // can be missing on its replica, which Redis does not promise to keep. Writes are paused on
  // the master (those in flight wait there, unapplied) until the replica has every one it
  // acknowledged; then it dies, and the waiting writes meet the failover.
  await master!.client.call('CLIENT', 'PAUSE', '30000', 'WRITE')
  for (let i = 0; await offsetOf(replica, 'slave_repl_offset') < await offsetOf(master as Node, 'master_repl_offset'); i++) {
    if (i > 400) throw new Error('the replica did not catch up')
    await sleep(25)
  }
  await cluster.nodes.find((n) => n.port === master!.port)!.stop()
  killed.add(master as Node)
  const survivors = live.filter((n) => n !== master)
  for (let i = 0; (await ownerOf(await survivors[0]!.client.cluster('KEYSLOT', keys.guild(guildId).board) as number, survivors)).port !== replica.port; i++) {
    if (i > 300) throw new Error('the replica did not take over')
    await sleep(50)
  }
  await sleep(1000) // writes served by the promoted replica
  const { acknowledged, failures, counted } = await load.stop()

  t.same(failures.slice(0, 3), [], `no 500 and no error but "not now" from the library, in ${counted}`)
  t.ok((await librariesOn(replica)).includes(library().name), 'the promoted replica got the library on the first award that met "not found"')
  t.equal(await xpOnBoard(redis, keys, guildId), acknowledged + 1, 'the XP on the board is the sum of the acknowledged gains: nothing lost, nothing applied twice')
})

/** The libraries loaded on a node, by name. */
async function librariesOn (node: Node): Promise<string[]> {
  const list = await node.client.call('FUNCTION', 'LIST') as unknown[][]
  return list.map((entry) => entry[entry.indexOf('library_name') + 1] as string)
}

function replicaIdOf (master: Node): string {
  const lines = spawnSync('redis-cli', ['-p', String(master.port), 'cluster', 'nodes'], { encoding: 'utf8' }).stdout.split('\n')
  return lines.map((line) => line.split(' ')).find((f) => f[3] === master.id)?.[0] ?? ''
}

async function offsetOf (node: Node, field: string): Promise<number> {
  return Number(new RegExp(`^${field}:(\\d+)`, 'm').exec(await node.client.info('replication'))?.[1] ?? -1)
}
