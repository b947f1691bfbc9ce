// The write API's budgets (run by `npm run bench` after the read rows, or alone):
//
//   npm run build && npx tsx scripts/bench-write-api.ts [--seconds S] [--connections C]
//
// Starts its own redis-server (AOF on) and the built service (`node dist/server.js`) with
// ADMIN_PORT set, then measures, one after the other:
// - the library: awardXp with 1,000 calls in flight on one connection (what a TypeScript bot
//   does), awards/s and Redis CPU per award (INFO cpu, main thread user+sys, over the awards);
// - batch awards: C connections (default 4) each sending POST /awards with 1,000 awards, the next
//   as soon as the last is answered, for S seconds (default 5): awards/s, Redis CPU per award;
// - single awards at 1,000 requests a second (open loop: sent on schedule, whatever the answers)
//   for S seconds: p50 / p99 / max latency.
// Awards go to random members of a pool of 10,000 of one server, as in scripts/bench-writer.ts.
import { Agent } from 'node:http'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '../src/redis/redis-server.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { TokenStore } from '../src/tokens/token-store.js'
import { benchRedis, type Cleanups, postJson, redisCpuUs, runBenchmark, startProcess } from './run-benchmark.js'

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, connections: { type: 'string', default: '4' } } })
const SECONDS = Number(args.seconds)
const CONNECTIONS = Number(args.connections)
const GUILD = '300000000000000001'
const MEMBERS = 10_000
const BATCH = 1000
const SINGLE_RATE = 1000

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const userIds = Array.from({ length: MEMBERS }, (_, i) => String(500_000_000_000_000_000n + BigInt(i) * 104_729n))
const randomUser = (): string => userIds[Math.floor(Math.random() * MEMBERS)] ?? '1'

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN

async function main (cleanups: Cleanups): Promise<void> {
  const { url, redis } = await benchRedis(cleanups, 'write API')

  const keys = new KeyBuilder()
  const [port, adminPort] = [await freePort(), await freePort()]
  await startProcess(cleanups, ['dist/server.js'], { REDIS_URL: url, PORT: String(port), ADMIN_PORT: String(adminPort), LOG_LEVEL: 'info' }, `http://127.0.0.1:${adminPort}/healthz`)
  const { token } = await new TokenStore(redis, keys).create({ name: 'bench', servers: [GUILD], scopes: ['write'] })

  // The library, as a TypeScript bot uses it: 1,000 awardXp calls in flight on one connection.
  const writer = new LeaderboardWriter(redis, keys)
  const library = async (ms: number): Promise<number> => {
    let done = 0
    const end = performance.now() + ms
    await Promise.all(Array.from({ length: 1000 }, async () => {
      while (performance.now() < end) {
        await writer.awardXp({ guildId: GUILD, userId: randomUser(), xp: 15 + Math.floor(Math.random() * 11) })
        done++
      }
    }))
    return done
  }
  await library(1000) // warm-up: every member exists, scripts loaded
  let cpu = await redisCpuUs(redis)
  let started = performance.now()
  const libraryAwards = await library(SECONDS * 1000)
  const libraryRate = libraryAwards / ((performance.now() - started) / 1000)
  const libraryCpu = (await redisCpuUs(redis) - cpu) / libraryAwards

  // Batches of 1,000 awards from a handful of connections.
  const batchAgent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS })
  const batchBody = (): string => JSON.stringify({
    awards: Array.from({ length: BATCH }, () => ({ user_id: randomUser(), xp: 15 + Math.floor(Math.random() * 11) }))
  })
  const bodies = Array.from({ length: 64 }, batchBody)
  const batches = async (ms: number): Promise<{ awards: number, bad: number }> => {
    let awards = 0
    let bad = 0
    const end = performance.now() + ms
    await Promise.all(Array.from({ length: CONNECTIONS }, async (_, c) => {
      for (let i = c; performance.now() < end; i += CONNECTIONS) {
        const { status } = await postJson(batchAgent, adminPort, `/admin/v1/servers/${GUILD}/awards`, token, bodies[i % bodies.length] ?? '')
        if (status === 200) awards += BATCH
        else bad++
      }
    }))
    return { awards, bad }
  }
  await batches(1000)
  cpu = await redisCpuUs(redis)
  started = performance.now()
  const batch = await batches(SECONDS * 1000)
  const batchRate = batch.awards / ((performance.now() - started) / 1000)
  const batchCpu = (await redisCpuUs(redis) - cpu) / batch.awards
  batchAgent.destroy()

  // Single awards at 1,000 a second, sent on schedule: a second unrecorded first (the agent opens
  // its connections, as a bot's stay open), then SECONDS recorded.
  const singleAgent = new Agent({ keepAlive: true, maxSockets: 64 })
  const singles = async (seconds: number): Promise<{ latencies: number[], bad: number, rate: number }> => {
    const latencies: number[] = []
    let bad = 0
    const total = SINGLE_RATE * seconds
    const start = performance.now()
    const inFlight: Array<Promise<void>> = []
    for (let i = 0; i < total; i++) {
      const wait = start + i * 1000 / SINGLE_RATE - performance.now()
      if (wait > 1) await sleep(wait)
      const body = JSON.stringify({ awards: [{ user_id: randomUser(), xp: 20 }] })
      inFlight.push(postJson(singleAgent, adminPort, `/admin/v1/servers/${GUILD}/awards`, token, body).then(({ status, ms }) => {
        if (status === 200) latencies.push(ms)
        else bad++
      }))
    }
    await Promise.all(inFlight)
    return { latencies, bad, rate: total / ((performance.now() - start) / 1000) }
  }
  await singles(1)
  const { latencies, bad: singleBad, rate: singleRate } = await singles(SECONDS)
  singleAgent.destroy()
  latencies.sort((a, b) => a - b)

  console.log('| write path | awards/s | Redis µs/award | latency p50 / p99 / max ms | errors |')
  console.log('|---|---:|---:|---:|---:|')
  console.log(`| library \`awardXp\`, 1,000 in flight | ${fmt(libraryRate)} | ${fmt(libraryCpu, 1)} | | 0 |`)
  console.log(`| \`POST /awards\`, batches of ${fmt(BATCH)} from ${CONNECTIONS} connections | ${fmt(batchRate)} | ${fmt(batchCpu, 1)} | | ${batch.bad} |`)
  console.log(`| \`POST /awards\`, single awards at ${fmt(SINGLE_RATE)}/s | ${fmt(singleRate)} | | ${fmt(percentile(latencies, 0.5), 1)} / ${fmt(percentile(latencies, 0.99), 1)} / ${fmt(latencies.at(-1) ?? NaN, 1)} | ${singleBad} |`)
}

await runBenchmark(main)
