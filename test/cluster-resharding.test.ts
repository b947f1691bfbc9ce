// A resharding under load: the hash slot of a server being read by pollers moves to another
// master (CLUSTER SETSLOT … IMPORTING / MIGRATING, MIGRATE of its keys in batches, then SETSLOT
// … NODE everywhere). Redis answers ASK, TRYAGAIN and then MOVED meanwhile; the service follows
// the redirections and never answers a 500.
import t from 'tap'
import { Redis } from 'ioredis'
import { RedisCluster } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'

const cluster = await RedisCluster.start(3)
t.teardown(async () => { await cluster.close() })

const GUILD = '1500000000000000001'
const API = `/api/v1/servers/${GUILD}`

interface Node { id: string, port: number, client: Redis }

t.test('pollers while the server\'s slot migrates to another master: no 500, the same answers after', async (t) => {
  const { app, writer, apiKeys, keys } = await buildTestApp(t, cluster.url, { redisCluster: true, responseCacheMb: 0 })
  for (let i = 0; i < 300; i++) await writer.awardXp({ guildId: GUILD, userId: String(1000 + i), xp: 10 + i, username: `member ${i}` })
  const { id, key } = await apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const urls = [`${API}/leaderboard?limit=20`, `${API}/members/1100`, `${API}/stats`, `${API}/members/1100/around?radius=3`, `${API}/leaderboard?period=week`]
  const before = await Promise.all(urls.map(async (url) => (await app.inject({ url, headers: { 'x-api-key': key } })).body))

  const nodes: Node[] = cluster.nodes.map((n) => ({ id: '', port: n.port, client: new Redis(n.url) }))
  t.teardown(() => { for (const n of nodes) n.client.disconnect() })
  for (const n of nodes) n.id = await n.client.cluster('MYID') as string
  const ownerOf = async (slot: number): Promise<Node> => {
    const shards = await nodes[0]!.client.cluster('SLOTS')
    const port = shards.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1]
    return nodes.find((n) => n.port === port) as Node
  }

  const statuses = new Map<number, number>()
  const failures: string[] = []
  const state = { polling: true }
  const pollers = Array.from({ length: 8 }, async (_, p) => {
    for (let i = p; state.polling; i++) {
      const url = urls[i % urls.length] as string
      const res = await app.inject({ url, headers: { 'x-api-key': key } })
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
      if (res.statusCode >= 500 && res.statusCode !== 503) failures.push(`${url}: ${res.statusCode} ${res.body}`)
    }
  })

  // The server's slot, then the slot of the API key's rate window, each to another master.
  for (const slotKey of [keys.guild(GUILD).board, keys.keyRateLimit(id)]) {
    const slot = await nodes[0]!.client.cluster('KEYSLOT', slotKey) as number
    const source = await ownerOf(slot)
    const target = nodes.find((n) => n !== source) as Node
    await target.client.cluster('SETSLOT', slot, 'IMPORTING', source.id)
    await source.client.cluster('SETSLOT', slot, 'MIGRATING', target.id)
    for (;;) {
      const batch = await source.client.cluster('GETKEYSINSLOT', slot, 1) as string[]
      if (batch.length === 0) break
      await source.client.migrate('127.0.0.1', target.port, '', 0, 5000, 'KEYS', ...batch)
      await new Promise((resolve) => setTimeout(resolve, 50)) // pollers meet the slot half moved
    }
    for (const n of [target, source, ...nodes.filter((n) => n !== source && n !== target)]) {
      await n.client.cluster('SETSLOT', slot, 'NODE', target.id)
    }
    await new Promise((resolve) => setTimeout(resolve, 300)) // pollers meet MOVED from the old owner
    t.not((await ownerOf(slot)).port, source.port, `slot ${slot} moved`)
  }
  state.polling = false
  await Promise.all(pollers)

  t.same(failures.slice(0, 3), [], `no 500 in ${[...statuses.values()].reduce((a, b) => a + b, 0)} requests: ${JSON.stringify(Object.fromEntries(statuses))}`)
  t.ok((statuses.get(200) ?? 0) > 0, 'requests were served during the move')
  const after = await Promise.all(urls.map(async (url) => (await app.inject({ url, headers: { 'x-api-key': key } })).body))
  t.same(after, before, 'after the move, every read answers as before')
})
