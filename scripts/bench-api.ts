// The whole service over HTTP: a throwaway redis-server, one server seeded with ~10k members
// through the writer library, the app built by buildApp(config) on 127.0.0.1, and autocannon
// against each endpoint, with /healthz (no auth, no Redis) as the ceiling. Then it counts the
// Redis commands each API request sends, against the budget of two round trips per request.
//
//   npx tsx scripts/bench-api.ts [seconds per endpoint=5]
//
// autocannon runs in a worker thread, so the load generator does not share the app's event
// loop; on a 2-core machine it still shares the cores with the app and Redis, so read the
// figures as ratios to /healthz measured in the same run, not as absolute capacity.
import autocannon from 'autocannon'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { buildApp } from '../src/app.js'
import { parseConfig } from '../src/config.js'
import { startLocalRedis } from '../src/demo/local-redis.js'
import { createRedis } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { scripts } from '../src/redis/scripts.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { type Cleanups, runBenchmark } from './run-benchmark.js'

const SECONDS = Number(process.argv[2] ?? 5)
const CONNECTIONS = 20
const MEMBERS = 10_000
const SEED_IN_FLIGHT = 1000
const COUNTED_REQUESTS = 200 // per endpoint, for the commands-per-request count
const GUILD = '200000000000000001'

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

/** Runs `task` for each item with at most `limit` in flight (the client pipelines them). */
async function inParallel<T> (items: T[], limit: number, task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await task(items[next++] as T)
  }))
}

async function main (cleanups: Cleanups): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-api-'))
  cleanups.push(async () => { rmSync(dir, { recursive: true, force: true }) })
  const server = await startLocalRedis({ dir }) // as the demo runs it: AOF on, fsync every second
  cleanups.push(server.stop)

  const config = parseConfig({
    redisUrl: server.url,
    logLevel: 'silent',
    planLimits: { free: 1e9, starter: 1e9, professional: 1e9 }
  })
  const keys = new KeyBuilder(config.redisPrefix)
  const admin = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 30_000 })
  cleanups.push(async () => { admin.disconnect() })
  const version = /^redis_version:(\S+)/m.exec(await admin.info('server'))?.[1] ?? '?'
  console.log(`cores: ${availableParallelism()}  node: ${process.version}  redis: ${version}  (redis-server pid ${server.pid}, port ${server.port}, AOF everysec)`)
  console.log(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)

  // Seed: every member gets XP and a name, every other one a daily claim.
  const writer = new LeaderboardWriter(admin, keys)
  const userIds = Array.from({ length: MEMBERS }, (_, i) => String(300_000_000_000_000_000n + BigInt(i) * 7_919n))
  const seedStarted = performance.now()
  await inParallel([...userIds.entries()], SEED_IN_FLIGHT, async ([i, userId]) => {
    await writer.setXp({ guildId: GUILD, userId, xp: (i * 7_577) % 250_000, username: `member_${i.toString(36)}` })
    if (i % 2 === 0) await writer.claimDaily({ guildId: GUILD, userId })
  })
  console.log(`seeded ${fmt(MEMBERS)} members (${fmt(MEMBERS * 1.5)} writer calls, ${SEED_IN_FLIGHT} in flight) in ${fmt(performance.now() - seedStarted)} ms`)
  const { key } = await new ApiKeyStore(admin, keys).create({ guildId: GUILD, plan: 'professional', name: 'bench' })

  const app = buildApp(config)
  cleanups.push(async () => { await app.close() })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  console.log(`app listening on ${base}; autocannon: ${CONNECTIONS} connections, ${SECONDS} s per endpoint, in a worker thread\n`)

  const member = userIds[Math.floor(MEMBERS / 2)] ?? ''
  const api = `/api/v1/servers/${GUILD}`
  const endpoints: Array<{ label: string, path: string, auth: boolean }> = [
    { label: 'leaderboard limit=10', path: `${api}/leaderboard?limit=10`, auth: true },
    { label: 'leaderboard limit=100', path: `${api}/leaderboard?limit=100`, auth: true },
    { label: 'leaderboard page=900 limit=10', path: `${api}/leaderboard?page=900&limit=10`, auth: true },
    { label: 'member', path: `${api}/members/${member}`, auth: true },
    { label: 'stats', path: `${api}/stats`, auth: true }
  ]
  const healthz = { label: '/healthz', path: '/healthz', auth: false }
  const headersFor = (auth: boolean): Record<string, string> => auth ? { 'x-api-key': key } : {}

  // Every endpoint must answer 200 with real data before its speed means anything.
  for (const e of [...endpoints, healthz]) {
    const response = await fetch(base + e.path, { headers: headersFor(e.auth) })
    const body = await response.text()
    if (response.status !== 200) throw new Error(`${e.label} answered ${response.status}: ${body}`)
    if (e.path.includes('leaderboard') && (JSON.parse(body) as { data: unknown[] }).data.length === 0) {
      throw new Error(`${e.label} returned an empty page`)
    }
  }

  const cannon = async (e: { path: string, auth: boolean }, seconds: number): Promise<autocannon.Result> => {
    return await autocannon({ url: base + e.path, connections: CONNECTIONS, duration: seconds, headers: headersFor(e.auth), workers: 1 })
  }
  await cannon(endpoints[0] ?? healthz, 2) // warm-up: JIT, connection pools, scripts loaded

  // The machine is shared and noisy: /healthz runs before, between and after the endpoints,
  // and each endpoint's ratio is taken against the mean of the two /healthz runs around it.
  const ceilingSeconds = Math.max(1, Math.round(SECONDS * 0.4))
  const ceilings: autocannon.Result[] = [await cannon(healthz, ceilingSeconds)]
  const rows: Array<{ label: string, result: autocannon.Result, ceilingRps: number }> = []
  for (const e of endpoints) {
    const result = await cannon(e, SECONDS)
    const before = ceilings.at(-1)?.requests.average ?? NaN
    ceilings.push(await cannon(healthz, ceilingSeconds))
    rows.push({ label: e.label, result, ceilingRps: (before + (ceilings.at(-1)?.requests.average ?? NaN)) / 2 })
  }

  console.log('| endpoint                      |    req/s | p50 ms | p99 ms | vs /healthz | non-2xx | errors |')
  console.log('|-------------------------------|---------:|-------:|-------:|------------:|--------:|-------:|')
  const row = (label: string, r: autocannon.Result, ratio: string): void => {
    console.log(`| ${label.padEnd(29)} | ${fmt(r.requests.average).padStart(8)} | ${fmt(r.latency.p50).padStart(6)} | ${fmt(r.latency.p99).padStart(6)} | ${ratio.padStart(11)} | ${String(r.non2xx).padStart(7)} | ${String(r.errors).padStart(6)} |`)
  }
  const best = ceilings.reduce((a, b) => a.requests.average >= b.requests.average ? a : b)
  row('/healthz (best of its runs)', best, '1.00x')
  for (const { label, result, ceilingRps } of rows) row(label, result, `${fmt(result.requests.average / ceilingRps, 3)}x`)
  console.log(`(vs /healthz: req/s over the mean of the /healthz runs just before and after it; those ${ceilings.length} runs of ${ceilingSeconds} s gave ${ceilings.map((c) => fmt(c.requests.average)).join(', ')} req/s)\n`)

  await countCommands(server.url, base, headersFor(true), endpoints, config.apiKeyCacheTtlMs)
}

/**
 * Commands the app sends Redis per API request, with its key cache warm: MONITOR shows each
 * command a client sends (and, tagged "lua", each one a script runs, which are not round trips),
 * and INFO commandstats counts the EVALSHA calls.
 */
async function countCommands (url: string, base: string, headers: Record<string, string>, endpoints: Array<{ label: string, path: string }>, keyCacheTtlMs: number): Promise<void> {
  const scriptBySha = new Map(scripts().map((s) => [createHash('sha1').update(s.lua).digest('hex'), s.name]))
  const stats = new Redis(url)
  // monitor() opens a second connection; the first one must be closed too, or it reconnects forever.
  const monitorBase = new Redis(url, { lazyConnect: true })
  const monitor = await monitorBase.monitor()
  try {
    await stats.ping()
    const own = `${stats.stream.localAddress ?? ''}:${stats.stream.localPort ?? ''}`
    const seen: Array<{ command: string, source: string }> = []
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      const [name = '', sha = ''] = args
      const command = name.toLowerCase() === 'evalsha' ? `EVALSHA ${scriptBySha.get(sha) ?? sha}` : name.toUpperCase()
      seen.push({ command, source })
    })
    const commandStats = async (): Promise<Map<string, number>> => {
      const info = await stats.info('commandstats')
      return new Map([...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map(([, name = '', calls = '0']) => [name, Number(calls)]))
    }
    const processed = async (): Promise<number> => Number(/^total_commands_processed:(\d+)/m.exec(await stats.info('stats'))?.[1] ?? NaN)

    console.log(`Redis commands per request, key cache warm (${COUNTED_REQUESTS} sequential requests each; the budget is 2):`)
    console.log('| endpoint                      | sent by the app / request | EVALSHA+EVAL / request (commandstats) | what was sent (per request)                         |')
    console.log('|-------------------------------|--------------------------:|--------------------------------------:|-----------------------------------------------------|')
    const processedPerRequest: number[] = []
    const sentPerRequest: number[] = []
    for (const e of endpoints) {
      // Warm the key cache (and check the endpoint) just before counting: it lives a few seconds.
      const warm = await fetch(base + e.path, { headers })
      if (warm.status !== 200) throw new Error(`${e.label} answered ${warm.status}`)
      await warm.arrayBuffer()
      await stats.ping() // MONITOR is live once the PING shows up; everything before is skipped
      seen.length = 0
      const before = await commandStats()
      const processedBefore = await processed()
      for (let i = 0; i < COUNTED_REQUESTS; i++) {
        const response = await fetch(base + e.path, { headers })
        if (response.status !== 200) throw new Error(`${e.label} answered ${response.status}`)
        await response.arrayBuffer()
      }
      const processedAfter = await processed()
      const after = await commandStats()
      await stats.ping()
      const scriptCalls = ['evalsha', 'eval'].reduce((sum, name) => sum + (after.get(name) ?? 0) - (before.get(name) ?? 0), 0)
      // The bench's own INFO and PING come from its stats connection; scripts' inner commands say "lua".
      const fromApp = seen.filter((s) => s.source !== 'lua' && s.source !== own)
      const breakdown = new Map<string, number>()
      for (const { command } of fromApp) breakdown.set(command, (breakdown.get(command) ?? 0) + 1)
      const what = [...breakdown].map(([command, n]) => `${fmt(n / COUNTED_REQUESTS, 2)} x ${command}`).join(', ')
      processedPerRequest.push((processedAfter - processedBefore - 1) / COUNTED_REQUESTS) // -1: the first INFO stats
      sentPerRequest.push(fromApp.length / COUNTED_REQUESTS)
      console.log(`| ${e.label.padEnd(29)} | ${fmt(fromApp.length / COUNTED_REQUESTS, 2).padStart(25)} | ${fmt(scriptCalls / COUNTED_REQUESTS, 2).padStart(37)} | ${what.padEnd(51)} |`)
    }
    console.log(`(An apiKeyLookup, if listed, is the key cache expiring mid-count: once per key per instance every ${keyCacheTtlMs} ms, not per request.)`)
    const same = processedPerRequest.every((n, i) => Math.abs(n - (sentPerRequest[i] ?? NaN)) < 0.01)
    console.log(`(INFO stats total_commands_processed rose by ${processedPerRequest.map((n) => fmt(n, 2)).join(' / ')} per request` +
      (same ? ', the same count.)' : ': this Redis also counts the commands a script runs, so that figure is not a round-trip count.)'))
  } finally {
    monitor.disconnect()
    monitorBase.disconnect()
    stats.disconnect()
  }
}

await runBenchmark(main)
