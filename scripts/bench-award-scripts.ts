// The award scripts of two commits side by side on one Redis: each commit's library (its
// src/, extracted from git beside this checkout's node_modules) on its own connection and key
// prefix, a server of N members each (default 1,000,000, bulk-set first), every rule on
// (scripts/every-rule.ts, as scripts/bench-rules.ts sets them) and a weekly season. R rounds (default
// 6), the two taking turns (the order turning each round), of C awards (default 20,000) to random
// members: batches of 1,000 through awardMany, four in flight, or with --single single awardXp
// calls, 100 in flight (--in-flight N); --plain: no rule set (the weekly season and history only, as
// `npm run bench:history -- --only awards` awards), and awards of 10 XP. Reports Redis's main-thread CPU per award (INFO cpu) of each and the
// median of the rounds' ratios; --stats adds INFO commandstats per award over all rounds, each side's own.
//
// --warm: each side's cooldowns filled first as an active server's are (every member's last award
// in the hour before, past the cooldown), so an award moves a kept time rather than adding one.
//
//   npx tsx scripts/bench-award-scripts.ts [--baseline COMMIT] [--members N] [--rounds R] [--count C] [--single [--in-flight N]] [--plain] [--stats] [--warm]
//
// COMMIT defaults to main; "this checkout" is the working tree's src/.
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import type { RedisClient } from '../src/redis/client.js'
import type { KeyBuilder } from '../src/redis/keys.js'
import type { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { CHANNEL, everyRule, ROLE_A, ROLE_B, ROLE_C } from './every-rule.js'
import { benchRedis, type Cleanups, extractCommit, redisCpuUs, runBenchmark } from './run-benchmark.js'

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string', default: 'main' },
    members: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '6' },
    count: { type: 'string', default: '20000' },
    single: { type: 'boolean', default: false },
    plain: { type: 'boolean', default: false },
    'in-flight': { type: 'string', default: '100' },
    stats: { type: 'boolean', default: false },
    warm: { type: 'boolean', default: false }
  }
})
const MEMBERS = Number(args.members)
const ROUNDS = Number(args.rounds)
const COUNT = Number(args.count)
const GUILD = '800000000000000002'

const fmt = (n: number, digits = 1): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN
const userId = (i: number): string => String(500_000_000_000_000_000n + BigInt(i) * 104_729n)
const randomUser = (): string => userId(Math.floor(Math.random() * MEMBERS))

interface Side {
  name: string
  redis: RedisClient
  writer: LeaderboardWriter
}

async function side (cleanups: Cleanups, url: string, root: string, name: string, prefix: string): Promise<Side> {
  const load = async <T>(path: string): Promise<T> => await import(pathToFileURL(join(root, path)).href) as T
  const { createRedis } = await load<typeof import('../src/redis/client.js')>('src/redis/client.ts')
  const { KeyBuilder, boardMember } = await load<typeof import('../src/redis/keys.js')>('src/redis/keys.ts')
  const { LeaderboardWriter } = await load<typeof import('../src/writer/leaderboard-writer.js')>('src/writer/leaderboard-writer.ts')
  const keys = new KeyBuilder(prefix)
  // Each its own connection: both define commands of the same names with different scripts.
  const redis = createRedis({ url, offlineQueue: true, commandTimeoutMs: 60_000 })
  cleanups.push(async () => { redis.disconnect() })
  const writer = new LeaderboardWriter(redis, keys, { settleTimeoutMs: 600_000 })
  await writer.configureGuild(GUILD, { season: { every: 'week', timezone: 'UTC' }, ...(args.plain ? {} : everyRule(Date.now())) })
  for (let from = 0; from < MEMBERS; from += 5000) {
    const members = Array.from({ length: Math.min(5000, MEMBERS - from) }, (_, j) => ({ userId: userId(from + j), xp: Math.floor(Math.random() * 50_000), username: `m${from + j}` }))
    await writer.bulkSetMembers(GUILD, members)
  }
  if (args.warm) await warmCooldowns(redis, keys, boardMember)
  return { name, redis, writer }
}

/**
 * --warm: every member's last award at a time spread over the hour before (past the cooldown),
 * kept as the side's version keeps cooldowns (a sorted set, or hashes by the hour when its
 * KeyBuilder has `cooldownHour`): an active server's steady state, where an award past its
 * cooldown moves a time that is already kept, and the oldest age out as the rounds go on.
 */
async function warmCooldowns (redis: RedisClient, keys: KeyBuilder, member: (userId: string) => string): Promise<void> {
  const [seconds = '0', micros = '0'] = await redis.time()
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
  const hourly = (keys as Partial<Pick<KeyBuilder, 'cooldownHour'>>).cooldownHour?.bind(keys)
  for (let from = 0; from < MEMBERS; from += 5000) {
    const pipeline = redis.pipeline()
    for (let i = from; i < Math.min(MEMBERS, from + 5000); i++) {
      const at = now - 60_000 - Math.floor(Math.random() * 3_540_000)
      if (hourly === undefined) pipeline.zadd(keys.guild(GUILD).cooldowns, at, member(userId(i)))
      else pipeline.hset(hourly(GUILD, Math.floor(at / 3_600_000)), member(userId(i)), at)
    }
    await pipeline.exec()
  }
}

async function awards (s: Side, count: number): Promise<void> {
  let left = count
  if (args.single) {
    await Promise.all(Array.from({ length: Number(args['in-flight']) }, async () => {
      while (left-- > 0) await s.writer.awardXp({ guildId: GUILD, userId: randomUser(), xp: 10 })
    }))
    return
  }
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (left > 0) {
      left -= 1000
      await s.writer.awardMany(GUILD, Array.from({ length: 1000 }, () => args.plain
        ? { userId: randomUser(), xp: 10 }
        : { userId: randomUser(), xp: 15 + Math.floor(Math.random() * 11), roleIds: [ROLE_A, ROLE_B, ROLE_C], channelId: CHANNEL }))
    }
  }))
}

/** Adds this round's INFO commandstats (since the RESETSTAT before it) to `into`: command -> [calls, µs]. */
async function addCommandStats (redis: RedisClient, into: Map<string, [number, number]>): Promise<void> {
  for (const [, name = '', calls = '0', us = '0'] of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    const [c, u] = into.get(name) ?? [0, 0]
    into.set(name, [c + Number(calls), u + Number(us)])
  }
}

function commandStats (stats: Map<string, [number, number]>, count: number): string {
  return [...stats].map(([name, [calls, us]]) => ({ name, calls: calls / count, us: us / count }))
    // A command a call sends once (an HMGET of the call's members) is rare an award but not cheap.
    .filter((row) => row.calls >= 0.05 || row.us >= 0.05)
    .sort((a, b) => b.us - a.us)
    .map((row) => `${row.name} ${fmt(row.calls, 2)} (${fmt(row.us, 2)} µs)`).join(', ')
}

async function main (cleanups: Cleanups): Promise<void> {
  const { url, redis } = await benchRedis(cleanups, 'award-scripts')
  const sides = [
    await side(cleanups, url, extractCommit(cleanups, args.baseline), args.baseline, 'a'),
    await side(cleanups, url, process.cwd(), 'this checkout', 'b')
  ] as const
  console.log(`${args.single ? `single awards, ${args['in-flight']} in flight` : 'batches of 1,000'}, ${args.plain ? 'no rule set' : 'every rule on'}, ${fmt(MEMBERS, 0)} members a server, ${ROUNDS} rounds of ${fmt(COUNT, 0)}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  for (const s of sides) await awards(s, Math.min(COUNT, 4000)) // scripts loaded, connections open
  const rows: Array<[number, number]> = []
  const stats = [new Map<string, [number, number]>(), new Map<string, [number, number]>()] as const
  for (let round = 0; round < ROUNDS; round++) {
    const us = [0, 0]
    for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
      const s = sides[i as 0 | 1]
      if (args.stats) await redis.config('RESETSTAT')
      const before = await redisCpuUs(redis)
      await awards(s, COUNT)
      us[i] = (await redisCpuUs(redis) - before) / COUNT
      if (args.stats) await addCommandStats(redis, stats[i as 0 | 1])
    }
    rows.push([us[0] ?? NaN, us[1] ?? NaN])
  }
  if (args.stats) for (const i of [0, 1] as const) console.log(`${sides[i].name}, commands an award over the rounds (µs inside Redis): ${commandStats(stats[i], COUNT * ROUNDS)}`)
  console.log(`| round | ${sides[0].name}: Redis µs/award | ${sides[1].name} | ratio |`)
  console.log('|---|---:|---:|---:|')
  rows.forEach(([a, b], i) => { console.log(`| ${i + 1} | ${fmt(a)} | ${fmt(b)} | ${fmt(b / a, 3)} |`) })
  const ratios = rows.map(([a, b]) => b / a)
  console.log(`median ${fmt(median(rows.map(([a]) => a)))} against ${fmt(median(rows.map(([, b]) => b)))} µs, ratio ${fmt(median(ratios), 3)} (${fmt(Math.min(...ratios), 3)} to ${fmt(Math.max(...ratios), 3)}); load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
}

await runBenchmark(main)
