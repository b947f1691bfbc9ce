// Import and export throughput: a CSV and a MEE6 JSON leaderboard of N players imported into
// fresh servers (and once more, the rerun that changes nothing), and an export of N members as
// CSV and as JSON lines, against a throwaway redis-server run as the demo runs it (AOF everysec).
//
//   npx tsx scripts/bench-transfer.ts [--rows N] [--rounds R]
//
// Figures are rows per second over the whole call (reading the file, checking, writing to Redis;
// or reading Redis and writing the file), the median of R rounds with the range beside it, and
// the CPU time this process and Redis's main thread spent per 100,000 rows.
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { stringify } from 'csv-stringify/sync'
import { startLocalRedis } from '../src/demo/local-redis.js'
import { createRedis } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { Random } from '../src/random.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { exportMembers, type ExportFormat } from '../src/transfer/export-members.js'
import { importFile } from '../src/transfer/import-sources.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { type Cleanups, runBenchmark } from './run-benchmark.js'

const { values } = parseArgs({ options: { rows: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '3' } } })
const ROWS = Number(values.rows)
const ROUNDS = Number(values.rounds)

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US')
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN

/** Players as MEE6 lists them, with names that need quoting in CSV now and then. */
function players (count: number): Array<Record<string, unknown>> {
  const random = new Random('bench-transfer')
  const names = ['ada', 'Zoë', 'night owl', 'comma, inc.', 'the "quoted" one', '霧雨', 'émile', 'x_x']
  return Array.from({ length: count }, (_, i) => {
    const xp = Math.floor(random.next() ** 4 * 2_000_000)
    return {
      avatar: 'a_1b2c3d4e5f60718293a4b5c6d7e8f901',
      detailed_xp: [xp % 1000, 1000, xp],
      discriminator: '0',
      guild_id: '300000000000000001',
      id: String(200_000_000_000_000_000n + BigInt(i) * 7919n),
      level: 0,
      message_count: Math.floor(xp / 20),
      username: `${random.pick(names)} ${i}`,
      xp
    }
  })
}

async function main (cleanups: Cleanups): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-transfer-'))
  cleanups.push(async () => { rmSync(dir, { recursive: true, force: true }) })
  const server = await startLocalRedis({ dir: join(dir, 'redis') })
  cleanups.push(server.stop)
  const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 30_000 })
  cleanups.push(async () => { redis.disconnect() })
  const version = /^redis_version:(\S+)/m.exec(await redis.info('server'))?.[1] ?? '?'
  console.log(`cores: ${availableParallelism()}  node: ${process.version}  redis: ${version}  rows: ${fmt(ROWS)}  rounds: ${ROUNDS}`)
  console.log(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`)

  const list = players(ROWS)
  const csvPath = join(dir, 'board.csv')
  const jsonPath = join(dir, 'board.json')
  writeFileSync(csvPath, stringify(list.map((p) => ({ user_id: p.id, username: p.username, xp: p.xp, level: p.level })), { header: true }))
  // As MEE6 pages it (1000 players a page), saved as one array of pages.
  const pages = []
  for (let i = 0; i < list.length; i += 1000) pages.push({ page: i / 1000, players: list.slice(i, i + 1000), role_rewards: [] })
  writeFileSync(jsonPath, JSON.stringify(pages))

  const keys = new KeyBuilder('bench')
  const writer = new LeaderboardWriter(redis, keys)
  const reader = new LeaderboardReader(redis, keys)
  let guild = 500_000_000_000_000_000n
  const rates: Record<string, number[]> = {}
  const cpu: Record<string, Array<{ node: number, redis: number }>> = {}
  const redisCpuMs = async (): Promise<number> => {
    const info = await redis.info('cpu')
    const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN)
    return (field('used_cpu_user_main_thread') + field('used_cpu_sys_main_thread')) * 1000
  }
  /** Runs `op` and records rows/s over its wall time, and the CPU this process and Redis spent on it. */
  const measure = async (what: string, op: () => Promise<number>): Promise<void> => {
    const redisBefore = await redisCpuMs()
    const nodeBefore = process.cpuUsage()
    const ms = await op()
    const node = process.cpuUsage(nodeBefore)
    ;(cpu[what] ??= []).push({ node: (node.user + node.system) / 1000, redis: await redisCpuMs() - redisBefore })
    ;(rates[what] ??= []).push(ROWS / (ms / 1000))
  }

  const timedImport = async (what: string, path: string, guildId: string): Promise<void> => {
    await measure(what, async () => {
      const s = await importFile(writer, guildId, path)
      if (s.imported !== ROWS || s.skipped !== 0) throw new Error(`${what}: imported ${s.imported}, skipped ${s.skipped}`)
      return s.elapsedMs
    })
  }
  const timedExport = async (what: string, guildId: string, format: ExportFormat): Promise<void> => {
    await measure(what, async () => {
      const started = performance.now()
      const members = exportMembers(reader, guildId, { format })
      await pipeline(Readable.from(members), createWriteStream(join(dir, `export.${format}`)))
      if (members.exported !== ROWS) throw new Error(`${what}: exported ${members.exported}`)
      return performance.now() - started
    })
  }

  for (let round = 0; round < ROUNDS; round++) {
    const csvGuild = String(++guild)
    await timedImport('import CSV into an empty server', csvPath, csvGuild)
    await timedImport('import the same CSV again (nothing changes)', csvPath, csvGuild)
    await timedImport('import MEE6 JSON into an empty server', jsonPath, String(++guild))
    await timedExport('export CSV', csvGuild, 'csv')
    await timedExport('export JSON lines', csvGuild, 'jsonl')
    const roundTrip = String(++guild)
    await timedImport('import the exported CSV into an empty server', join(dir, 'export.csv'), roundTrip)
    const [a, b] = await Promise.all([reader.page(csvGuild, 1, 100), reader.page(roundTrip, 1, 100)])
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error('the round trip changed the leaderboard')
  }

  // CPU per 100,000 rows, which the machine's other load moves far less than the wall time.
  const per100k = (ms: number): string => fmt(ms * 100_000 / ROWS)
  console.log('| operation | rows/s (median) | range | CPU ms per 100k rows: node / redis (median) |')
  console.log('|---|---:|---|---:|')
  for (const [what, rs] of Object.entries(rates)) {
    const spent = cpu[what] ?? []
    console.log(`| ${what} | ${fmt(median(rs))} | ${fmt(Math.min(...rs))} to ${fmt(Math.max(...rs))} | ` +
      `${per100k(median(spent.map((c) => c.node)))} / ${per100k(median(spent.map((c) => c.redis)))} |`)
  }
}

await runBenchmark(main)
