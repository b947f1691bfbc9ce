// `npm run bench` (its live-updates part; alone: `npm run bench:streams`): one instance of the
// built service, run as `npm start` runs it (its V8 options too), holding many open leaderboard
// streams (default 10,000: one API key per 5 streams, 10 servers), against its own redis-server
// (AOF on, as deployed).
//
//   npm run bench:streams -- [--streams N] [--servers S] [--rounds R] [--stalled A]
//
// It reports the service's resident memory (with its JavaScript heap and external memory, from its
// METRICS_PORT) before any stream, with every stream open and after the rounds, the time from an
// award to the event's arrival at each client of the server awarded (p50/p99/max over every client and round:
// each round of 4 s awards XP on every server at once, at a random point of the watcher's
// second), and Redis CPU per change (INFO cpu, main thread, before and after R rounds, over R × S
// changes) with the same rounds run first with one stream per server and then with all of them:
// the watcher's Redis work should not grow with streams. With --stalled A, then A more streams of
// 100-member pages whose clients never read (an attacker's) while every server's page changes
// four times a second for 60 s: the service's resident memory every 10 s, which must not grow.
// The clients are raw node:http requests in this process (one socket each), so the process needs
// a file-descriptor limit above the stream count (`ulimit -n`).
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { startLocalRedis } from '../src/demo/local-redis.js'
import { freePort } from '../src/redis/redis-server.js'
import { createRedis, type RedisClient } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { seedGuild } from '../src/seed/seed-guild.js'
import { type Cleanups, runBenchmark, serviceArgv } from './run-benchmark.js'

const { values: args } = parseArgs({
  options: {
    streams: { type: 'string', default: '10000' },
    servers: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '10' },
    stalled: { type: 'string', default: '0' }
  }
})
const STREAMS = Number(args.streams)
const SERVERS = Number(args.servers)
const ROUNDS = Number(args.rounds)
const STALLED = Number(args.stalled)
/** How long the stalled streams' pages change, and how often the service's memory is read meanwhile. */
const STALLED_MS = 60_000
const STALLED_SAMPLE_MS = 10_000
const STREAMS_PER_KEY = 5
const MEMBERS = 200
const OPEN_CONCURRENCY = 200
/** Each round's length: a random wait under a second, the award, its delivery, the rest idle. */
const ROUND_MS = 4000
const guildOf = (i: number): string => String(2100000000000000000n + BigInt(i))

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

async function redisCpuUs (redis: RedisClient): Promise<number> {
  const info = await redis.info('cpu')
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN)
  return (field('used_cpu_user_main_thread') + field('used_cpu_sys_main_thread')) * 1e6
}

function rssMb (pid: number): number {
  const kb = Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN)
  return kb / 1024
}

/** The service's resident memory, and its JavaScript heap and memory outside it (its METRICS_PORT, Node's own figures). */
async function memory (pid: number, metrics: string): Promise<string> {
  const rss = rssMb(pid)
  const text = await fetch(metrics).then(async (r) => await r.text(), () => '')
  const mb = (name: string): string => fmt(Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? NaN) / 1024 / 1024)
  return `${fmt(rss)} MB (heap ${mb('nodejs_heap_size_used_bytes')} MB used of ${mb('nodejs_heap_size_total_bytes')}, external ${mb('nodejs_external_memory_bytes')})`
}

/** One open stream: counts the `leaderboard` events it receives and when the last came. */
class Client {
  readonly guild: number
  events = 0
  lastEventAt = 0
  #tail = ''
  #response: IncomingMessage | undefined

  constructor (guild: number) {
    this.guild = guild
  }

  /** Opens the stream; resolves with the status (200, or the refusal's, to retry). `stalled`: never reads it. */
  async open (base: string, path: string, key: string, stalled = false): Promise<number> {
    return await new Promise((resolve, reject) => {
      const req = httpRequest(`${base}${path}`, { headers: { 'x-api-key': key, accept: 'text/event-stream' }, agent: false }, (response) => {
        if (response.statusCode !== 200) {
          response.resume()
          resolve(response.statusCode ?? 0)
          return
        }
        this.#response = response
        if (stalled) {
          response.pause()
          resolve(200)
          return
        }
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          const text = this.#tail + chunk
          const found = text.split('event: leaderboard').length - 1
          if (found > 0) {
            this.events += found
            this.lastEventAt = performance.now()
          }
          this.#tail = text.slice(-20)
        })
        resolve(200)
      })
      req.on('error', reject)
      req.end()
    })
  }

  close (): void {
    this.#response?.destroy()
  }
}

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN
}

async function waitUntil (check: () => boolean, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (check()) return true
    await sleep(20)
  }
  return check()
}

async function main (cleanups: Cleanups): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-streams-'))
  cleanups.push(async () => { rmSync(dir, { recursive: true, force: true }) })
  const redisServer = await startLocalRedis({ dir })
  cleanups.push(async () => { await redisServer.stop() })
  const redis = createRedis({ url: redisServer.url, offlineQueue: true, commandTimeoutMs: 10_000 })
  cleanups.push(async () => { redis.disconnect() })
  const keys = new KeyBuilder('bench')
  const writer = new LeaderboardWriter(redis, keys)
  const apiKeys = new ApiKeyStore(redis, keys)

  for (let g = 0; g < SERVERS; g++) await seedGuild(writer, { guildId: guildOf(g), members: MEMBERS, seed: `bench-${g}` })
  const keyCount = Math.ceil(STREAMS / STREAMS_PER_KEY)
  const streamKeys: string[] = []
  // The first stream of each server has a key of its own (key g), however few the streams; the stalled streams' keys come after.
  const firstStalledKey = Math.max(keyCount, SERVERS)
  for (let i = 0; i < firstStalledKey + Math.ceil(STALLED / STREAMS_PER_KEY); i++) {
    streamKeys.push((await apiKeys.create({ guildId: guildOf(i % SERVERS), plan: 'professional', name: `stream-bench-${i}` })).key)
  }

  const port = await freePort()
  const metricsPort = await freePort()
  const base = `http://127.0.0.1:${port}`
  const metrics = `http://127.0.0.1:${metricsPort}/metrics`
  const service: ChildProcess = spawn(process.execPath, serviceArgv(), {
    env: { ...process.env, REDIS_URL: redisServer.url, REDIS_PREFIX: 'bench', PORT: String(port), METRICS_PORT: String(metricsPort), HOST: '127.0.0.1', LOG_LEVEL: 'warn', SHUTDOWN_DRAIN_MS: '0' },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  cleanups.push(async () => {
    if (service.exitCode !== null) return
    const exited = new Promise((resolve) => service.once('exit', resolve))
    service.kill('SIGTERM')
    await Promise.race([exited, sleep(15_000)])
    service.kill('SIGKILL')
  })
  let up = false
  for (let i = 0; i < 300 && !up; i++) {
    up = await fetch(`${base}/healthz`).then((r) => r.ok, () => false)
    if (!up) await sleep(100)
  }
  if (!up) throw new Error('the service did not start within 30 s')
  const pid = service.pid ?? 0
  const idle = await memory(pid, metrics)

  const clients: Client[] = []
  cleanups.push(async () => { for (const c of clients) c.close() })
  const path = (g: number): string => `/api/v1/servers/${guildOf(g)}/leaderboard/stream?limit=10`
  let refusals = 0
  /** Opens stream `i` (key i / 5, server key % servers), retrying a 503 (shed while opening fast). */
  async function openStream (i: number, stalled = false): Promise<void> {
    const keyIndex = Math.floor(i / STREAMS_PER_KEY)
    const client = new Client(keyIndex % SERVERS)
    for (;;) {
      const status = await client.open(base, stalled ? path(client.guild).replace('limit=10', 'limit=100') : path(client.guild), streamKeys[keyIndex] ?? '', stalled)
      if (status === 200) break
      refusals++
      if (status !== 503) throw new Error(`stream ${i}: ${status}`)
      await sleep(200)
    }
    clients.push(client)
  }

  /** R rounds: XP awarded on every server at once; returns the latency of every client of those servers, and Redis CPU per change. */
  async function rounds (label: string, open: Client[]): Promise<{ latencies: number[], cpuPerChangeUs: number }> {
    const latencies: number[] = []
    await sleep(1500) // past every stream's first event
    const cpuBefore = await redisCpuUs(redis)
    for (let r = 0; r < ROUNDS; r++) {
      const roundStart = performance.now()
      // At a random point of the watcher's second, so the latencies sample it evenly.
      await sleep(Math.random() * 1000)
      const before = open.map((c) => c.events)
      const awardedAt = performance.now()
      await Promise.all(Array.from({ length: SERVERS }, async (_, g) => {
        await writer.awardXp({ guildId: guildOf(g), userId: '1', xp: 10 + r })
      }))
      const delivered = await waitUntil(() => open.every((c, i) => c.events > (before[i] ?? 0)), ROUND_MS - 1000)
      if (!delivered) console.error(`${label}, round ${r + 1}: ${open.filter((c, i) => c.events <= (before[i] ?? 0)).length} clients got no event within ${ROUND_MS - 1000} ms`)
      for (const [i, c] of open.entries()) if (c.events > (before[i] ?? 0)) latencies.push(c.lastEventAt - awardedAt)
      // Rounds of a fixed length: both runs span the same number of the watcher's seconds (its
      // version reads), so what differs in Redis CPU is what the streams cost.
      await sleep(Math.max(0, roundStart + ROUND_MS - performance.now()))
    }
    const cpuUs = await redisCpuUs(redis) - cpuBefore
    return { latencies: latencies.sort((a, b) => a - b), cpuPerChangeUs: cpuUs / (ROUNDS * SERVERS) }
  }

  // One stream per server first, then the rest.
  for (let g = 0; g < SERVERS; g++) await openStream(g * STREAMS_PER_KEY)
  const few = await rounds(`${SERVERS} streams`, [...clients])

  const started = performance.now()
  const rest = Array.from({ length: STREAMS }, (_, i) => i).filter((i) => i % STREAMS_PER_KEY !== 0 || Math.floor(i / STREAMS_PER_KEY) >= SERVERS)
  for (let next = 0; next < rest.length; next += OPEN_CONCURRENCY) {
    await Promise.all(rest.slice(next, next + OPEN_CONCURRENCY).map(async (i) => { await openStream(i) }))
  }
  const openSeconds = (performance.now() - started) / 1000
  await waitUntil(() => clients.every((c) => c.events >= 1), 30_000)
  const opened = await memory(pid, metrics)
  const many = await rounds(`${clients.length} streams`, clients)
  const after = await memory(pid, metrics)

  const row = (label: string, r: { latencies: number[], cpuPerChangeUs: number }): string =>
    `${label.padEnd(16)} ${fmt(percentile(r.latencies, 0.5)).padStart(7)} ms ${fmt(percentile(r.latencies, 0.99)).padStart(7)} ms ${fmt(r.latencies.at(-1) ?? NaN).padStart(7)} ms ` +
    `${fmt(r.cpuPerChangeUs).padStart(8)} µs   (${fmt(r.latencies.length)} deliveries)`
  console.log('')
  console.log(`live updates: ${SERVERS} servers of ${MEMBERS} members, one key per ${STREAMS_PER_KEY} streams, ${ROUNDS} rounds of an award on every server`)
  console.log(`opened ${fmt(clients.length)} streams in ${fmt(openSeconds, 1)} s (${refusals} refusals retried)`)
  console.log(`service RSS before any stream: ${idle}`)
  console.log(`service RSS with every stream open: ${opened}`)
  console.log(`service RSS after the rounds: ${after}`)
  console.log('streams            award → event at each client       Redis CPU')
  console.log('                       p50        p99        max      per change')
  console.log(row(`${SERVERS}`, few))
  console.log(row(`${clients.length}`, many))
  if (STALLED > 0) await stalledStreams()

  /**
   * An attacker's streams: STALLED more (100-member pages), whose clients never read, while every
   * server's page changes for STALLED_MS; the service's resident memory every STALLED_SAMPLE_MS.
   */
  async function stalledStreams (): Promise<void> {
    const first = firstStalledKey * STREAMS_PER_KEY
    const ids = Array.from({ length: STALLED }, (_, i) => first + i)
    for (let next = 0; next < ids.length; next += OPEN_CONCURRENCY) {
      await Promise.all(ids.slice(next, next + OPEN_CONCURRENCY).map(async (i) => { await openStream(i, true) }))
    }
    const samples = [rssMb(pid)]
    const started = performance.now()
    let awards = 0
    let nextSample = started + STALLED_SAMPLE_MS
    while (performance.now() - started < STALLED_MS) {
      await Promise.all(Array.from({ length: SERVERS }, async (_, g) => {
        await writer.awardXp({ guildId: guildOf(g), userId: String(1 + (awards % MEMBERS)), xp: 7 })
      }))
      awards++
      await sleep(250)
      if (performance.now() >= nextSample) {
        samples.push(rssMb(pid))
        nextSample += STALLED_SAMPLE_MS
      }
    }
    console.log(`${fmt(STALLED)} streams of 100-member pages never read, ${fmt(awards * SERVERS)} awards over ${STALLED_MS / 1000} s: ` +
      `service RSS ${samples.map((mb) => fmt(mb)).join(', ')} MB (every ${STALLED_SAMPLE_MS / 1000} s)`)
  }
}

await runBenchmark(main)
