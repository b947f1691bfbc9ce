// The CPU a cached read costs, per request: the service's own (user + system, from /proc) and
// Redis's (INFO cpu, main thread), over the requests served. Throughput on a shared machine moves
// with whatever else runs; the CPU a request costs moves far less, so builds are compared by it.
//
//   npx tsx scripts/bench-cpu.ts [--builds dist,OTHER/dist,dist@LOG_LEVEL=warn] [--rounds R] [--duration S] [--connections C]
//                                [--members N] [--only WORD,...] [--all] [--peer] [--bare] [--cpu-prof DIR]
//
// Starts its own redis-server, seeds one server of N members (default 5,000), runs each build's
// `server.js` (default: this tree's dist) against it at LOG_LEVEL=info (a build written
// `DIR@NAME=value@...` runs with those variables too: one build twice, a setting's cost), and runs
// autocannon (C connections, default 50) against each endpoint (leaderboard limit=10, member,
// stats, members ids= of 100 ids, and the 304 of a limit=10 revalidation; with --all also
// limit=100, a deep page, gzip, around and a period's board) of each build in turn,
// R rounds (default 12) of S seconds (default 1.5), the builds' order turning each round. Reports the median µs per request of the
// service's CPU and of Redis's, their spread, req/s, and for each build after the first the median
// of the rounds' ratios to the first (its runs seconds apart). With --peer, the fused peer
// (scripts/bench-peer-server.ts) is measured beside them; with --bare, the bare route and the
// floor (scripts/bench-bare-server.ts: the same bytes with nothing else, and with the service's
// header lines and Redis exchange). With --cpu-prof, each service runs under `node --cpu-prof`
// and writes its profile to DIR/<build> when the bench ends.
import autocannon from 'autocannon'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { startLocalRedis } from '../src/demo/local-redis.js'
import { freePort } from '../src/redis/redis-server.js'
import { createRedis } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { seedGuild } from '../src/seed/seed-guild.js'
import { type Cleanups, processCpuMs, redisCpuUs, runBenchmark, startProcess } from './run-benchmark.js'
import { startBare, startPeer, writeFixtures } from './bench-servers.js'

const { values: args } = parseArgs({
  options: {
    builds: { type: 'string', default: 'dist' },
    rounds: { type: 'string', default: '12' },
    duration: { type: 'string', default: '1.5' },
    connections: { type: 'string', default: '50' },
    members: { type: 'string', default: '5000' },
    only: { type: 'string' },
    peer: { type: 'boolean', default: false },
    bare: { type: 'boolean', default: false },
    all: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' }
  }
})
const GUILD = '200000000000000001'
const ROUNDS = Number(args.rounds)
const SECONDS = Number(args.duration)
const CONNECTIONS = Number(args.connections)
const MEMBERS = Number(args.members)

interface Sample { requests: number, rps: number, serviceUs: number, redisUs: number, bad: number }

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle] ?? NaN : ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2
}
const fmt = (n: number, digits = 1): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

async function main (cleanups: Cleanups): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-cpu-'))
  cleanups.push(async () => { rmSync(dir, { recursive: true, force: true }) })
  const server = await startLocalRedis({ dir })
  cleanups.push(server.stop)
  const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 60_000 })
  cleanups.push(async () => { redis.disconnect() })
  const keys = new KeyBuilder()
  await seedGuild(new LeaderboardWriter(redis, keys), { guildId: GUILD, members: MEMBERS, seed: 'bench' })
  const { key } = await new ApiKeyStore(redis, keys).create({ guildId: GUILD, plan: 'professional', name: 'bench' })

  const specs = args.builds.split(',').map((spec) => {
    const [dir = 'dist', ...settings] = spec.split('@')
    return { build: resolve(dir), settings: Object.fromEntries(settings.map((setting) => setting.split('=', 2) as [string, string])), suffix: settings.map((s) => ` ${s}`).join('') }
  })
  const builds = specs.map((spec) => spec.build)
  const labels = specs.map(({ build, suffix }) => (basename(build) === 'dist' ? basename(dirname(build)) : basename(build)) + suffix)
  const env = {
    REDIS_URL: server.url,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    PLAN_LIMITS: JSON.stringify({ free: 1e9, starter: 1e9, professional: 1e9 })
  }
  const services: Array<{ label: string, base: string, pid: number, tag?: string }> = []
  for (const [i, build] of builds.entries()) {
    const label = labels[i] ?? build
    const settings = specs[i]?.settings ?? {}
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const profileDir = args['cpu-prof'] === undefined ? undefined : resolve(args['cpu-prof'], label.replaceAll(/[^\w.=-]+/g, '_'))
    if (profileDir !== undefined) mkdirSync(profileDir, { recursive: true })
    const flags = profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDir]
    const child = await startProcess(cleanups, [...flags, join(build, 'server.js')], { ...env, ...settings, PORT: String(port) }, `${base}/readyz`)
    services.push({ label, base, pid: child.pid ?? NaN })
  }

  const api = `/api/v1/servers/${GUILD}`
  const auth = { 'x-api-key': key }
  const first = services[0]?.base ?? ''
  const page = await (await fetch(`${first}${api}/leaderboard?limit=1&page=${Math.ceil(MEMBERS / 2)}`, { headers: auth })).json() as { data: Array<{ user_id: string }> }
  const member = page.data[0]?.user_id
  if (member === undefined) throw new Error('the seeded board is not served')
  const hundred = await (await fetch(`${first}${api}/leaderboard?limit=100`, { headers: auth })).json() as { data: Array<{ user_id: string }> }
  const ids = hundred.data.map((row) => row.user_id).join(',')
  if (args.peer) services.push({ label: 'fused peer', ...await startPeer(cleanups, server.url) })
  // Each build's own tag: a build of another version tags its bodies otherwise.
  for (const service of services) service.tag = (await fetch(`${service.base}${api}/leaderboard?limit=10`, { headers: auth })).headers.get('etag') ?? ''
  const deepPage = Math.ceil(MEMBERS / 100)
  const endpoints: Array<{ label: string, path: string, status: number, headers?: Record<string, string>, more?: true }> = [
    { label: 'leaderboard limit=10', path: `${api}/leaderboard?limit=10`, status: 200 },
    { label: 'member', path: `${api}/members/${member}`, status: 200 },
    { label: 'stats', path: `${api}/stats`, status: 200 },
    { label: 'members ids=100', path: `${api}/members?ids=${ids}`, status: 200 },
    { label: '304 (limit=10)', path: `${api}/leaderboard?limit=10`, status: 304 },
    // The other rows of `npm run bench` whose routes are older than seasons and history, so that
    // builds from before them are compared on every row they serve (--all).
    { label: 'leaderboard limit=100', path: `${api}/leaderboard?limit=100`, status: 200, more: true },
    { label: `leaderboard limit=100 page=${deepPage}`, path: `${api}/leaderboard?limit=100&page=${deepPage}`, status: 200, more: true },
    { label: 'leaderboard limit=100 gzip', path: `${api}/leaderboard?limit=100`, status: 200, headers: { 'accept-encoding': 'gzip' }, more: true },
    { label: 'around radius=50', path: `${api}/members/${member}/around?radius=50`, status: 200, more: true },
    { label: 'leaderboard period=week limit=100', path: `${api}/leaderboard?period=week&limit=100`, status: 200, more: true }
  ]
  const only = args.only?.split(',').map((word) => word.trim()).filter((word) => word !== '')
  const chosen = only === undefined
    ? endpoints.filter((e) => args.all || e.more !== true)
    : endpoints.filter((e) => only.some((word) => e.label.split(/[ ()]/).includes(word)))
  if (args.bare) {
    // The bare route answers what the first build answered, to the same requests (its tag included).
    const tag = services[0]?.tag ?? ''
    const requests = chosen.map((e) => ({ ...e, headers: e.status === 304 ? { ...auth, 'if-none-match': tag } : { ...auth, ...e.headers } }))
    const fixtures = await writeFixtures(first, requests, dir)
    for (const [label, mode] of [['floor', [server.url, GUILD]], ['bare route', []]] as const) {
      services.push({ label, ...await startBare(cleanups, fixtures, ...mode), tag })
    }
  }
  labels.splice(0, labels.length, ...services.map((service) => service.label))

  const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ')
  console.log(`node ${process.version}, ${MEMBERS} members, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s; builds: ${labels.join(', ')}; load average ${load()}`)
  const samples = new Map<string, Sample[][]>() // endpoint -> round -> build
  for (const { path, status, headers } of chosen) {
    for (const { base, tag } of services) { // warm-up: each build's JIT and caches
      await autocannon({ url: base + path, connections: CONNECTIONS, duration: 1, headers: status === 304 ? { ...auth, 'if-none-match': tag ?? '' } : { ...auth, ...headers } })
    }
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const e of chosen) {
      const samplesOfRound: Sample[] = new Array(services.length)
      for (let turn = 0; turn < services.length; turn++) {
        const i = (round + turn) % services.length
        const { base, pid, tag } = services[i] as { base: string, pid: number, tag?: string }
        const headers = e.status === 304 ? { ...auth, 'if-none-match': tag ?? '' } : { ...auth, ...e.headers }
        const cpu0 = processCpuMs(pid)
        const redis0 = await redisCpuUs(redis)
        const r = await autocannon({ url: base + e.path, connections: CONNECTIONS, duration: SECONDS, headers })
        const redis1 = await redisCpuUs(redis)
        const cpu1 = processCpuMs(pid)
        const good = e.status === 200 ? r['2xx'] : r['3xx']
        samplesOfRound[i] = {
          requests: r.requests.total,
          rps: r.requests.average,
          serviceUs: (cpu1 - cpu0) * 1000 / r.requests.total,
          redisUs: (redis1 - redis0) / r.requests.total,
          bad: r.requests.total - good + r.errors + r.timeouts
        }
      }
      const list = samples.get(e.label) ?? []
      list.push(samplesOfRound)
      samples.set(e.label, list)
    }
    process.stdout.write(`round ${round + 1}/${ROUNDS} done (load average ${load()})\n`)
  }

  console.log('\n| endpoint | build | service µs/request: median (range) | Redis µs/request | req/s | service CPU / first build | req/s / first build | bad |')
  console.log('|---|---|---:|---:|---:|---:|---:|---:|')
  for (const e of chosen) {
    const rounds = samples.get(e.label) ?? []
    for (const [i, label] of labels.entries()) {
      const mine = rounds.map((round) => round[i] as Sample)
      const service = mine.map((s) => s.serviceUs)
      const vsFirst = i === 0 ? '' : fmt(median(rounds.map((round) => (round[i] as Sample).serviceUs / (round[0] as Sample).serviceUs)), 3)
      const rpsVsFirst = i === 0 ? '' : fmt(median(rounds.map((round) => (round[i] as Sample).rps / (round[0] as Sample).rps)), 3)
      console.log(`| ${e.label} | ${label} | ${fmt(median(service))} (${fmt(Math.min(...service))} to ${fmt(Math.max(...service))}) | ` +
        `${fmt(median(mine.map((s) => s.redisUs)), 2)} | ${fmt(median(mine.map((s) => s.rps)), 0)} | ${vsFirst} | ${rpsVsFirst} | ${mine.reduce((n, s) => n + s.bad, 0)} |`)
    }
  }
  console.log(`load average at the end: ${load()}`)
}

await runBenchmark(main)
