// Writer throughput: LeaderboardWriter.awardXp (one Lua script per award) against a throwaway
// redis-server, with 1 award in flight (a bot awaiting each call) and with many in flight on one
// connection (ioredis pipelines them: a busy bot, or a backfill).
//
//   npx tsx scripts/bench-writer.ts
//
// The in-flight levels alternate in short rounds so that both see the same background load;
// the ratio to 1-in-flight is the median of the per-round ratios.
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { startLocalRedis } from '../src/demo/local-redis.js'
import { createRedis } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { type Cleanups, runBenchmark } from './run-benchmark.js'

const GUILD = '400000000000000001'
const MEMBERS = 10_000 // awards go to random members of this pool
const LEVELS = [1, 10, 100, 1000] // awards in flight
const ROUNDS = 3
const ROUND_MS = 1500

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN
const percentile = (sorted: Float64Array, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN

async function main (cleanups: Cleanups): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-writer-'))
  cleanups.push(async () => { rmSync(dir, { recursive: true, force: true }) })
  const server = await startLocalRedis({ dir }) // as the demo runs it: AOF on, fsync every second
  cleanups.push(server.stop)
  const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 30_000 })
  cleanups.push(async () => { redis.disconnect() })
  const version = /^redis_version:(\S+)/m.exec(await redis.info('server'))?.[1] ?? '?'
  console.log(`cores: ${availableParallelism()}  node: ${process.version}  redis: ${version}  (redis-server pid ${server.pid}, port ${server.port}, AOF everysec)`)
  console.log(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`)

  const keys = new KeyBuilder()
  const writer = new LeaderboardWriter(redis, keys)
  const userIds = Array.from({ length: MEMBERS }, (_, i) => String(500_000_000_000_000_000n + BigInt(i) * 104_729n))
  let state = 0x9e3779b9
  const random = (): number => {
    state ^= state << 13; state ^= state >>> 17; state ^= state << 5
    return (state >>> 0) / 2 ** 32
  }
  let gainedTotal = 0
  const award = async (): Promise<void> => {
    const i = Math.floor(random() * MEMBERS)
    const { gained } = await writer.awardXp({ guildId: GUILD, userId: userIds[i] ?? '', xp: 15 + Math.floor(random() * 11), username: `member_${i.toString(36)}` })
    gainedTotal += gained
  }

  /** Awards for `ms` with `inFlight` at a time: ops/s and each award's latency. */
  const run = async (inFlight: number, ms: number): Promise<{ rate: number, latencies: number[] }> => {
    const latencies: number[] = []
    const started = performance.now()
    const end = started + ms
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        const t = performance.now()
        await award()
        latencies.push(performance.now() - t)
      }
    }))
    return { rate: latencies.length / ((performance.now() - started) / 1000), latencies }
  }

  // Warm-up: the script is loaded, most members exist, JIT settled.
  await run(1000, 1500)

  const rates = LEVELS.map(() => [] as number[])
  const latencies = LEVELS.map(() => [] as number[])
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, level] of LEVELS.entries()) {
      const r = await run(level, ROUND_MS)
      rates[i]?.push(r.rate)
      latencies[i]?.push(...r.latencies)
    }
  }

  console.log(`awardXp on one connection, ${ROUNDS} alternating rounds of ${ROUND_MS} ms per level (ops/s: median of rounds):`)
  console.log('| awards in flight |   ops/s | vs 1 in flight | p50 latency ms | p99 latency ms |')
  console.log('|-----------------:|--------:|---------------:|---------------:|---------------:|')
  const single = rates[0] ?? []
  for (const [i, level] of LEVELS.entries()) {
    const own = rates[i] ?? []
    const ratio = median(own.map((r, round) => r / (single[round] ?? NaN)))
    const sorted = Float64Array.from(latencies[i] ?? []).sort()
    console.log(`| ${String(level).padStart(16)} | ${fmt(median(own)).padStart(7)} | ${fmt(ratio, 2).padStart(13)}x | ${fmt(percentile(sorted, 0.5), 2).padStart(14)} | ${fmt(percentile(sorted, 0.99), 2).padStart(14)} |`)
  }

  // The aggregates must still be exact after all that concurrency.
  const stats = await new LeaderboardReader(redis, keys).stats(GUILD)
  const page = await new LeaderboardReader(redis, keys).page(GUILD, 1, 1)
  console.log(`\ncheck: ${fmt(page.total)} members; stats total_xp ${fmt(stats.total_xp)} ${stats.total_xp === gainedTotal ? '=' : '!='} ${fmt(gainedTotal)} XP awarded in this run`)
  if (stats.total_xp !== gainedTotal) throw new Error('the aggregates drifted from the awards')
}

await runBenchmark(main)
