// `npm run bench`: the service side by side with a bare Fastify route serving byte-identical
// answers, in one run, with the Redis CPU each request costs beside its throughput.
//
//   npm run bench -- [--members N] [--scale] [--duration S] [--rounds R] [--connections C] [--only TEXT,... [--exact]] [--json FILE]
//
// It starts its own redis-server (AOF on, as deployed), seeds one server through the bulk write
// path (timed: members/s), runs the built service (`node dist/server.js`, as users run it, at
// LOG_LEVEL=info with its log discarded), the bare server, the "headers" server (the bare route
// with every header line the service sends: request id, rate limit, security and caching) and
// the "floor" (that route after the Redis exchange the service makes per request) as child
// processes (scripts/bench-bare-server.ts), the "fused peer" (another design of the same contract
// with no cache: one Lua script counts each request and reads its data, scripts/bench-peer-server.ts),
// and for each endpoint runs autocannon against each in turn, R rounds of S seconds. The machine's throughput drifts by tens of percent over minutes,
// so a ratio is the median of the rounds' ratios (each from runs seconds apart), not a ratio of
// means. "headers ratio" is headers / bare: what the contract's header lines alone cost;
// "floor ratio" is floor / bare: the most the service's design could reach, since every request
// must ask Redis for its count and version and send those lines. Redis CPU per request is INFO cpu
// (used_cpu_user_main_thread + used_cpu_sys_main_thread) after minus before a service run, over
// the requests it answered. A second service runs with its response cache off, so every read
// goes to Redis as it does right after a write (the "uncached" rows). One row sends each request
// with the next of as many keys of the server as connections (many pollers), not one key: each
// key is counted on its own, so the limiter cannot count a turn's requests in one call as it
// does for one key. Another polls a page while a writer awards XP 50 times a second (a busy
// server: every award moves the data version, so cached bodies go stale at once). On two cores
// the load generator, the service and Redis share the machine: read ratios, not absolute figures.
import autocannon from 'autocannon'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startLocalRedis } from '../src/demo/local-redis.js'
import { freePort } from '../src/redis/redis-server.js'
import { createRedis, type RedisClient } from '../src/redis/client.js'
import { KeyBuilder, userIdFromBoardMember } from '../src/redis/keys.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { DEFAULT_OPERATION_WINDOW_MS } from '../src/writer/operations.js'
import { seedGuild } from '../src/seed/seed-guild.js'
import { addDemoHistory } from '../src/demo/demo-history.js'
import { startBare, startPeer, writeFixtures } from './bench-servers.js'
import { type Cleanups, runBenchmark, startProcess } from './run-benchmark.js'

const { values: args } = parseArgs({
  options: {
    members: { type: 'string' },
    scale: { type: 'boolean', default: false },
    duration: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    // Only the endpoints whose label has one of these words (comma-separated), e.g. "limit=10,member,304".
    only: { type: 'string' },
    // --only's items are whole labels ("leaderboard limit=10,member,stats"): the rows a budget names, and no other row with one of their words.
    exact: { type: 'boolean', default: false },
    json: { type: 'string', default: 'bench-results.json' }
  }
})
const MEMBERS = Number(args.members ?? (args.scale ? 1_000_000 : 100_000))
const SECONDS = Number(args.duration)
const CONNECTIONS = Number(args.connections)
const GUILD = '200000000000000001'
const ROUNDS = Number(args.rounds)

interface Endpoint {
  label: string
  path: string
  headers?: Record<string, string>
  /** The status every answer must have (a 304 for a revalidation). */
  status?: number
  /** API keys taken in turn, one per request (instead of the one in `headers`). */
  apiKeys?: string[]
  /** XP awards made to the server per second while the row runs (a busy server: its data version moves). */
  writesPerSecond?: number
  /** The fused peer serves the contract's `/api/v1` reads only: false for the public routes, which it would answer 404. */
  peer?: false
}

interface Run {
  rps: number
  p50: number
  p99: number
  requests: number
  bad: number
}

interface Row {
  label: string
  service: Run
  /** The bare route with the service's header lines, after its Redis exchange (see bench-bare-server.ts). */
  floor: Run
  /** The bare route with the service's header lines. */
  headers: Run
  bare: Run
  ratio: number
  /** floor / bare: the most the service could reach with its Redis exchange and header lines. */
  floorRatio: number
  /** headers / bare: what the header lines alone leave. */
  headersRatio: number
  redisUsPerRequest: number
  /** The fused peer (scripts/bench-peer-server.ts), for the rows it serves. */
  peer?: Run & {
    /** service / peer, the median of the rounds' ratios. */
    ratio: number
    redisUsPerRequest: number
  }
  /** The service with its response cache off; ratio: the median of its rounds' ratios to the bare route. */
  uncached?: Run & { ratio: number, redisUsPerRequest: number }
}

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

async function redisCpuUs (redis: RedisClient): Promise<number> {
  const info = await redis.info('cpu')
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN)
  return (field('used_cpu_user_main_thread') + field('used_cpu_sys_main_thread')) * 1e6
}

async function cannon (base: string, e: Endpoint, seconds: number): Promise<Run> {
  const apiKeys = e.apiKeys
  let next = 0
  const requests = apiKeys === undefined
    ? undefined
    : [{ setupRequest: (request: autocannon.Request) => ({ ...request, headers: { ...request.headers, 'x-api-key': apiKeys[next++ % apiKeys.length] } }) }]
  const r = await autocannon({ url: base + e.path, connections: CONNECTIONS, duration: seconds, headers: e.headers ?? {}, requests })
  const good = (e.status ?? 200) === 200 ? r['2xx'] : r['3xx']
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    bad: r.requests.total - good + r.errors + r.timeouts
  }
}

/** The median of the rounds' ratios of `runs` to `base` (run i of each in the same round). */
function medianRatio (runs: Run[], base: Run[]): number {
  const ratios = runs.map((r, i) => r.rps / (base[i]?.rps ?? NaN)).sort((a, b) => a - b)
  const middle = ratios.length >> 1
  return ratios.length % 2 === 1 ? ratios[middle] ?? NaN : ((ratios[middle - 1] ?? NaN) + (ratios[middle] ?? NaN)) / 2
}

/** Runs of one endpoint taken together: mean throughput, the worse percentiles, all requests. */
function combine (runs: Run[]): Run {
  return {
    rps: runs.reduce((sum, r) => sum + r.rps, 0) / runs.length,
    p50: Math.max(...runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    requests: runs.reduce((sum, r) => sum + r.requests, 0),
    bad: runs.reduce((sum, r) => sum + r.bad, 0)
  }
}

async function main (cleanups: Cleanups): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'))
  cleanups.push(async () => { rmSync(dir, { recursive: true, force: true }) })
  const server = await startLocalRedis({ dir }) // as the demo and compose run it: AOF, fsync every second
  cleanups.push(server.stop)
  const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 60_000 })
  cleanups.push(async () => { redis.disconnect() })
  const version = /^redis_version:(\S+)/m.exec(await redis.info('server'))?.[1] ?? '?'
  console.log(`cores: ${availableParallelism()}  node: ${process.version}  redis: ${version}  load average: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)

  const keys = new KeyBuilder()
  const writer = new LeaderboardWriter(redis, keys)
  const seeded = await seedGuild(writer, { guildId: GUILD, members: MEMBERS, seed: 'bench' })
  const seedRate = MEMBERS / (seeded.elapsedMs / 1000)
  const memory = Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))?.[1] ?? NaN)
  const emptyMemory = await emptyRedisMemory(cleanups, dir)
  const bytesPerMember = (memory - emptyMemory) / MEMBERS
  console.log(`seeded ${fmt(MEMBERS)} members in ${fmt(seeded.elapsedMs)} ms: ${fmt(seedRate)} members/s; Redis memory ${fmt(bytesPerMember)} bytes per member`)

  const periodBytes = await awardEveryone(redis, writer, keys)
  console.log(`awarded every member once this week: the period boards take ${fmt(periodBytes)} bytes of Redis memory per member active in the period`)
  // Days already closed, as the demo has them, so that history and rank_change have data to serve.
  const closedDays = await addDemoHistory(redis, keys, GUILD, 'bench')
  console.log(`${closedDays.length} days of history closed (${closedDays[0] ?? ''} to ${closedDays.at(-1) ?? ''})`)

  const { key } = await new ApiKeyStore(redis, keys).create({ guildId: GUILD, plan: 'professional', name: 'bench' })
  const env = {
    REDIS_URL: server.url,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    PLAN_LIMITS: JSON.stringify({ free: 1e9, starter: 1e9, professional: 1e9 }),
    // One address (autocannon's) makes every public request: its limit out of the way.
    PUBLIC_LIMIT_PER_MINUTE: '1000000'
  }
  // The server's public board, read with no key beside the keyed reads (the "public" rows).
  await writer.configureGuild(GUILD, { name: 'Bench', public: { enabled: true, slug: 'bench' } })
  const servicePort = await freePort()
  const serviceBase = `http://127.0.0.1:${servicePort}`
  await startProcess(cleanups, ['dist/server.js'], { ...env, PORT: String(servicePort) }, `${serviceBase}/readyz`)
  const uncachedPort = await freePort()
  const uncachedBase = `http://127.0.0.1:${uncachedPort}`
  await startProcess(cleanups, ['dist/server.js'], { ...env, PORT: String(uncachedPort), RESPONSE_CACHE_MB: '0' }, `${uncachedBase}/readyz`)

  const api = `/api/v1/servers/${GUILD}`
  const readPage = async (query: string): Promise<Array<{ user_id: string }>> => {
    const response = await fetch(`${serviceBase}${api}/leaderboard?${query}`, { headers: { 'x-api-key': key } })
    const body = await response.json() as { data?: Array<{ user_id: string }> }
    if (response.status !== 200 || body.data === undefined) throw new Error(`the seeded board is not served: ${response.status} ${JSON.stringify(body)}`)
    return body.data
  }
  const deepPage = Math.max(1, Math.floor(MEMBERS / 200))
  const member = (await readPage(`limit=1&page=${Math.floor(MEMBERS / 2)}`))[0]?.user_id
  if (member === undefined || (await readPage('limit=100')).length !== 100) throw new Error('the seeded board is not served')
  const hundredIds = (await readPage(`limit=100&page=${deepPage}`)).map((e) => e.user_id).join(',')
  const auth = { 'x-api-key': key }
  // Many pollers, one key each: the limiter counts each request on its own key (see the README).
  const manyKeys = await Promise.all(Array.from({ length: CONNECTIONS }, async (_, i) =>
    (await new ApiKeyStore(redis, keys).create({ guildId: GUILD, plan: 'professional', name: `bench-${i}` })).key))
  const endpoints: Endpoint[] = [
    { label: 'leaderboard limit=10', path: `${api}/leaderboard?limit=10`, headers: auth },
    { label: `leaderboard limit=10 keys=${CONNECTIONS}`, path: `${api}/leaderboard?limit=10`, headers: auth, apiKeys: manyKeys },
    { label: 'leaderboard limit=100', path: `${api}/leaderboard?limit=100`, headers: auth },
    { label: `leaderboard limit=100 page=${deepPage}`, path: `${api}/leaderboard?limit=100&page=${deepPage}`, headers: auth },
    { label: 'leaderboard limit=100 gzip', path: `${api}/leaderboard?limit=100`, headers: { ...auth, 'accept-encoding': 'gzip' } },
    { label: 'member', path: `${api}/members/${member}`, headers: auth },
    { label: 'around radius=50', path: `${api}/members/${member}/around?radius=50`, headers: auth },
    { label: 'members ids=100', path: `${api}/members?ids=${hundredIds}`, headers: auth },
    { label: 'leaderboard period=week limit=100', path: `${api}/leaderboard?period=week&limit=100`, headers: auth },
    { label: 'leaderboard season=current limit=100', path: `${api}/leaderboard?season=current&limit=100`, headers: auth },
    { label: 'member history days=30', path: `${api}/members/${member}/history?days=30`, headers: auth },
    { label: 'stats history days=30', path: `${api}/stats/history?days=30`, headers: auth },
    { label: 'stats', path: `${api}/stats`, headers: auth },
    { label: 'public leaderboard limit=10', path: '/public/v1/bench/leaderboard?limit=10', peer: false },
    { label: 'public leaderboard limit=100', path: '/public/v1/bench/leaderboard?limit=100', peer: false },
    { label: 'public member', path: `/public/v1/bench/members/${member}`, peer: false },
    { label: 'public page limit=100 gzip', path: '/p/bench?limit=100', headers: { 'accept-encoding': 'gzip' }, peer: false },
    { label: 'public card.svg', path: `/public/v1/bench/members/${member}/card.svg`, peer: false }
  ]
  const first = await fetch(serviceBase + (endpoints[0]?.path ?? ''), { headers: auth })
  const etag = first.headers.get('etag')
  if (etag !== null) {
    endpoints.push({ label: '304 revalidation (limit=10)', path: endpoints[0]?.path ?? '', headers: { ...auth, 'if-none-match': etag }, status: 304 })
  } else {
    console.log('(the service sends no ETag: no revalidation row)')
  }
  // Last: its writes change every tag taken above.
  endpoints.push({ label: 'leaderboard limit=100 writes=50/s', path: `${api}/leaderboard?limit=100`, headers: auth, writesPerSecond: 50 })

  // The bare server serves exactly what the service answered to each request.
  const fixturesFile = await writeFixtures(serviceBase, endpoints, dir)
  const { base: bareBase } = await startBare(cleanups, fixturesFile)
  const { base: floorBase } = await startBare(cleanups, fixturesFile, server.url, GUILD)
  const { base: headersBase } = await startBare(cleanups, fixturesFile, 'headers')
  const { base: peerBase } = await startPeer(cleanups, server.url)

  console.log(`service, uncached service, fused peer, floor, headers and bare routes up; autocannon: ${CONNECTIONS} connections, ${SECONDS} s per run\n`)
  for (const base of [serviceBase, uncachedBase, peerBase, floorBase, headersBase, bareBase]) await cannon(base, endpoints[0] as Endpoint, 2) // warm-up

  const only = args.only?.split(',').map((s) => s.trim()).filter((s) => s !== '')
  const chosen = only === undefined ? endpoints : endpoints.filter((e) => only.some((word) => args.exact ? e.label === word : e.label.split(' ').includes(word)))
  const rows: Row[] = []
  for (const e of chosen) {
    // A writer awarding XP to one member of the board through the row's runs, if the row has one.
    const writes = e.writesPerSecond === undefined
      ? undefined
      : setInterval(() => {
        writer.awardXp({ guildId: GUILD, userId: member, xp: 1 }).catch((err: Error) => { console.error('award failed:', err.message) })
      }, 1000 / e.writesPerSecond)
    // Service and bare route take turns, round after round, so that both see the same background load.
    const serviceRuns: Run[] = []
    const floorRuns: Run[] = []
    const headersRuns: Run[] = []
    const bareRuns: Run[] = []
    const uncachedRuns: Run[] = [] // a 304 row has none: with its cache off the service has no tag to match
    const peerRuns: Run[] = []
    let redisUs = 0
    let uncachedRedisUs = 0
    let peerRedisUs = 0
    /** A run of `base` and the Redis CPU (µs) spent during it. */
    const measured = async (base: string): Promise<[Run, number]> => {
      const stats = async (): Promise<Map<string, [number, number]>> => new Map([...(await redis.info('commandstats')).matchAll(/cmdstat_(\S+):calls=(\d+),usec=(\d+)/g)].map((m) => [m[1] as string, [Number(m[2]), Number(m[3])]]))
      const s0 = await stats()
      const before = await redisCpuUs(redis)
      const run = await cannon(base, e, SECONDS)
      const after = await redisCpuUs(redis)
      const s1 = await stats()
      const parts: string[] = []
      for (const [k, [c, u]] of s1) { const [c0, u0] = s0.get(k) ?? [0, 0]; if (c - c0 > 0) parts.push(`${k} ${((c - c0) / run.requests).toFixed(3)}/req ${((u - u0) / run.requests).toFixed(2)}us`) }
      console.log(`  [${base === serviceBase ? 'svc' : base === peerBase ? 'peer' : 'unc'}] ${run.requests} req, ${((after - before) / run.requests).toFixed(2)} us/req: ${parts.join('; ')}`)
      return [run, after - before]
    }
    for (let round = 0; round < ROUNDS; round++) {
      const [run, us] = await measured(serviceBase)
      serviceRuns.push(run)
      redisUs += us
      if (e.status === undefined) {
        const [uncachedRun, uncachedUs] = await measured(uncachedBase)
        uncachedRuns.push(uncachedRun)
        uncachedRedisUs += uncachedUs
      }
      if (e.peer !== false) {
        const [peerRun, peerUs] = await measured(peerBase)
        peerRuns.push(peerRun)
        peerRedisUs += peerUs
      }
      floorRuns.push(await cannon(floorBase, e, SECONDS))
      headersRuns.push(await cannon(headersBase, e, SECONDS))
      bareRuns.push(await cannon(bareBase, e, SECONDS))
    }
    const service = combine(serviceRuns)
    const row: Row = {
      label: e.label,
      service,
      floor: combine(floorRuns),
      headers: combine(headersRuns),
      bare: combine(bareRuns),
      ratio: medianRatio(serviceRuns, bareRuns),
      floorRatio: medianRatio(floorRuns, bareRuns),
      headersRatio: medianRatio(headersRuns, bareRuns),
      redisUsPerRequest: redisUs / service.requests
    }
    if (peerRuns.length > 0) {
      const peer = combine(peerRuns)
      row.peer = { ...peer, ratio: medianRatio(serviceRuns, peerRuns), redisUsPerRequest: peerRedisUs / peer.requests }
    }
    if (uncachedRuns.length > 0) {
      const uncached = combine(uncachedRuns)
      row.uncached = { ...uncached, ratio: medianRatio(uncachedRuns, bareRuns), redisUsPerRequest: uncachedRedisUs / uncached.requests }
    }
    clearInterval(writes)
    rows.push(row)
  }

  console.log('| endpoint | service req/s | bare req/s | ratio | headers ratio | floor ratio | p50 / p99 ms | Redis us/req | peer req/s | service / peer | peer Redis us/req | uncached req/s | uncached ratio | uncached p99 ms | uncached Redis us/req | bad |')
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const r of rows) {
    const u = r.uncached
    const p = r.peer
    console.log(`| ${r.label} | ${fmt(r.service.rps)} | ${fmt(r.bare.rps)} | ${fmt(r.ratio, 2)} | ${fmt(r.headersRatio, 2)} | ${fmt(r.floorRatio, 2)} | ${r.service.p50} / ${r.service.p99} | ${fmt(r.redisUsPerRequest, 1)} | ` +
      `${p === undefined ? '-' : fmt(p.rps)} | ${p === undefined ? '-' : fmt(p.ratio, 2)} | ${p === undefined ? '-' : fmt(p.redisUsPerRequest, 1)} | ` +
      `${u === undefined ? '-' : fmt(u.rps)} | ${u === undefined ? '-' : fmt(u.ratio, 2)} | ${u === undefined ? '-' : u.p99} | ${u === undefined ? '-' : fmt(u.redisUsPerRequest, 1)} | ${r.service.bad + r.floor.bad + r.headers.bad + r.bare.bad + (p?.bad ?? 0) + (u?.bad ?? 0)} |`)
  }
  const byLabel = (label: string): Row | undefined => rows.find((r) => r.label === label)
  const top = byLabel('leaderboard limit=100')
  const deep = byLabel(`leaderboard limit=100 page=${deepPage}`)
  const one = byLabel('member')
  const first10 = byLabel('leaderboard limit=10')
  if (top?.uncached !== undefined && deep?.uncached !== undefined && one?.uncached !== undefined && first10?.uncached !== undefined) {
    // Across rows, throughputs are compared through their ratios to the bare route (measured in the
    // same rounds), which the machine's drift between rows moves far less than req/s.
    console.log(`\nuncached, deep page vs page 1 (limit=100): ${fmt(top.uncached.ratio / deep.uncached.ratio, 2)}x the time per request, ` +
      `${fmt(deep.uncached.redisUsPerRequest / top.uncached.redisUsPerRequest, 2)}x the Redis CPU; member vs page 1 (limit=10): ` +
      `${fmt(first10.uncached.ratio / one.uncached.ratio, 2)}x the time, ${fmt(one.uncached.redisUsPerRequest / first10.uncached.redisUsPerRequest, 2)}x the Redis CPU`)
  }
  // The budget of the extended reads: no dearer than a 100-entry page, in throughput and in Redis CPU.
  for (const label of ['around radius=50', 'members ids=100', 'leaderboard period=week limit=100', 'leaderboard season=current limit=100',
    'member history days=30', 'stats history days=30']) {
    const row = byLabel(label)
    if (row === undefined || top === undefined) continue
    const uncached = row.uncached !== undefined && top.uncached !== undefined
      ? `; uncached ${fmt(row.uncached.ratio / top.uncached.ratio, 2)}x the ratio, ${fmt(row.uncached.redisUsPerRequest / top.uncached.redisUsPerRequest, 2)}x the Redis CPU`
      : ''
    console.log(`${label} vs leaderboard limit=100: ${fmt(row.ratio / top.ratio, 2)}x the ratio to its bare route, ${fmt(row.redisUsPerRequest / top.redisUsPerRequest, 2)}x the Redis CPU${uncached}`)
  }
  writeFileSync(args.json, JSON.stringify({
    date: new Date().toISOString(),
    node: process.version,
    redis: version,
    members: MEMBERS,
    seedMembersPerSecond: seedRate,
    redisBytesPerMember: bytesPerMember,
    periodBoardBytesPerActiveMember: periodBytes,
    connections: CONNECTIONS,
    seconds: SECONDS,
    rounds: ROUNDS,
    rows
  }, null, 2))
  console.log(`\nwritten to ${args.json}`)
}

/**
 * Awards every member of the board once (this week and month, by Redis's clock) and returns
 * what the period boards cost per member: used_memory after minus before, the awards' operation
 * ids (kept 5 to 10 minutes, see the writer) deleted first so that only the boards count.
 */
async function awardEveryone (redis: RedisClient, writer: LeaderboardWriter, keys: KeyBuilder): Promise<number> {
  const members = (await redis.zrange(keys.guild(GUILD).board, 0, -1)).map(userIdFromBoardMember)
  const usedMemory = async (): Promise<number> => Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))?.[1] ?? NaN)
  const before = await usedMemory()
  const started = Date.now()
  let next = 0
  await Promise.all(Array.from({ length: 200 }, async () => {
    while (next < members.length) await writer.awardXp({ guildId: GUILD, userId: members[next++] as string, xp: 1 + next % 500 })
  }))
  const bucketOf = (ms: number): number => Math.floor(ms / DEFAULT_OPERATION_WINDOW_MS) // as src/writer/operations.ts names them
  for (let bucket = bucketOf(started); bucket <= bucketOf(Date.now()); bucket++) await redis.del(keys.operations(GUILD, bucket))
  return (await usedMemory() - before) / members.length
}

/** used_memory of a Redis with nothing in it, started the same way, for the bytes-per-member figure. */
async function emptyRedisMemory (cleanups: Cleanups, dir: string): Promise<number> {
  const empty = await startLocalRedis({ dir: join(dir, 'empty') })
  const client = createRedis({ url: empty.url, offlineQueue: true })
  try {
    return Number(/^used_memory:(\d+)/m.exec(await client.info('memory'))?.[1] ?? NaN)
  } finally {
    client.disconnect()
    await empty.stop()
  }
}

await runBenchmark(main)
