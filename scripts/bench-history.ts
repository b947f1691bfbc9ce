// `npm run bench:history`: the budgets of seasons and history, against a throwaway redis-server
// whose clock the bench moves (the tests' LD_PRELOAD shim, test/helpers/fake-clock.c; needs a C
// compiler), so that days and weeks pass in minutes.
//
//   npm run bench:history -- [--members N] [--days D] [--active A] [--chunk C] [--call-ms M] [--rounds R] [--only awards|close] [--baseline COMMIT] [--in-flight N] [--profile] [--compare COMMIT] [--pin] [--return-memory]
//
// "awards": the Redis CPU of an award (INFO cpu, main thread, over the awards) with seasons and
// history on (a weekly season, a closed day, so members carry a history index) against the same
// award on the code before them (commit 1186f85, or --baseline's commit, extracted from git into a temporary
// directory and loaded beside this one, on its own connection and server), R alternating rounds
// (default 10) of 10,000 awards with 100 in flight (--in-flight N) to random members of 10,000;
// the ratio is the median of the rounds' ratios.
// "close": one server of N members (default 1,000,000), a weekly season and season_retention 1:
// the first day every member is awarded XP, then each later day A random members (default
// 100,000); at each midnight the season end (on Mondays) and the day's close run alone, each with
// SLOWLOG at 2,000 µs reset before and read after (the calls over 5 ms, and from 2 to 5 ms), and
// timed; after D days (default 32, so that history_days 30 are kept) the MEMORY USAGE of every
// history key, per member per day kept.
// --profile: each close also with every command logged (SLOWLOG at 0 µs), then each script's
// calls, time inside Redis (mean, p99, max) and its commands' share; logging every command costs
// Redis time of its own, so the close's other figures are then not its usual ones.
// --compare COMMIT (with --only close): the first close (a day that touched every member) and a
// later one (A members touched), each run by this checkout's closer and by COMMIT's (extracted
// from git), in turns (the order turning each round), R rounds (--rounds), each from the same data:
// Redis is restarted from a dump saved before the close.
// Each close also counts the times the OS took the core from Redis's main thread (its
// nonvoluntary context switches): a call it was taken from runs longer by the time the core was
// away, and SLOWLOG counts that time as the call's. --pin: Redis's main thread alone on the first
// core (server_cpulist), its background threads (bio_cpulist) and this process on the second, as
// a deployment that gives Redis a core of its own runs it (needs taskset). Redis runs as
// docker-compose.yml runs it: lazy expiry, and jemalloc keeping the memory Redis frees
// (--return-memory: its default decay, which hands it back to the kernel).
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { DayCloser } from '../src/history/day-close.js'
import { createRedis, type RedisClient, redisNow } from '../src/redis/client.js'
import { KeyBuilder, userIdFromBoardMember } from '../src/redis/keys.js'
import { scripts } from '../src/redis/scripts.js'
import { seedGuild } from '../src/seed/seed-guild.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { FakeClock } from '../test/helpers/fake-clock.js'
import { RedisServer } from '../test/helpers/redis-server.js'
import { type Cleanups, extractCommit, runBenchmark } from './run-benchmark.js'

/** The code before seasons and history: main as it stood when they were merged. */
const BEFORE_HISTORY = '1186f85'
const DAY_MS = 86_400_000
/** A Monday, 00:00 UTC: the first day of the first season. */
const START = Date.UTC(2026, 5, 1)

const { values: args } = parseArgs({
  options: {
    members: { type: 'string', default: '1000000' },
    days: { type: 'string', default: '32' },
    active: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '10' },
    chunk: { type: 'string' },
    'call-ms': { type: 'string' },
    only: { type: 'string' },
    baseline: { type: 'string', default: BEFORE_HISTORY },
    'in-flight': { type: 'string', default: '100' },
    profile: { type: 'boolean', default: false },
    compare: { type: 'string' },
    pin: { type: 'boolean', default: false },
    'return-memory': { type: 'boolean', default: false }
  }
})
const MEMBERS = Number(args.members)
const DAYS = Number(args.days)
const ACTIVE = Number(args.active)
const ROUNDS = Number(args.rounds)
const BASELINE = args.baseline

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN
const load = (): string => loadavg().map((l) => l.toFixed(2)).join(' ')

async function redisCpuUs (redis: RedisClient): Promise<number> {
  const info = await redis.info('cpu')
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN)
  return (field('used_cpu_user_main_thread') + field('used_cpu_sys_main_thread')) * 1e6
}

type SlowEntry = [id: number, at: number, us: number, args: string[]]

/** Below the budget's 5 ms, the calls SLOWLOG also catches (µs): how near the budget the others came. */
const NEAR_US = 2000

/** jemalloc's options that keep the memory Redis frees, as docker-compose.yml sets them. */
const KEEP_FREED = 'dirty_decay_ms:-1,muzzy_decay_ms:-1'

/** The bench's Redis (its process changes when --compare restarts it). */
let benchServer: RedisServer | undefined

/**
 * How many times the OS has taken the core from Redis's main thread so far (its nonvoluntary
 * context switches): a call it was taken from in the middle runs as much longer as the core was
 * away, which SLOWLOG counts as the call's.
 */
function preemptions (): number {
  const pid = benchServer?.pid
  if (pid === undefined) return NaN
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8')
  return Number(/^nonvoluntary_ctxt_switches:\s*(\d+)/m.exec(status)?.[1] ?? NaN)
}

/** The scripts by SHA1, so that SLOWLOG's `evalsha` lines name theirs. */
const scriptNames = new Map(scripts().map(({ name, lua }) => [createHash('sha1').update(lua).digest('hex'), name]))

/** The script calls so far (INFO commandstats). */
async function scriptCalls (redis: RedisClient): Promise<number> {
  return Number(/^cmdstat_evalsha:calls=(\d+)/m.exec(await redis.info('commandstats'))?.[1] ?? 0)
}

/**
 * Runs `work` with SLOWLOG at 2,000 µs (NEAR_US) emptied before; returns its time, Redis's
 * main-thread CPU over it (what the work cost Redis, however little of a core the machine gave
 * it), the scripts it called, what SLOWLOG caught over 5 ms and from 2 to 5 ms (its last 1,024),
 * and the times the OS took the core from Redis.
 */
async function watched<T> (redis: RedisClient, work: () => Promise<T>, profile = false): Promise<{ value: T, ms: number, cpuMs: number, calls: number, slow: SlowEntry[], near: SlowEntry[], preempted: number, profile: string }> {
  await redis.config('SET', 'slowlog-log-slower-than', profile ? '0' : String(NEAR_US))
  await redis.config('SET', 'slowlog-max-len', profile ? '2000000' : '1024')
  await redis.slowlog('RESET')
  const [cpuBefore, callsBefore, preemptedBefore] = [await redisCpuUs(redis), await scriptCalls(redis), preemptions()]
  const started = performance.now()
  const value = await work()
  const ms = performance.now() - started
  const [cpuAfter, callsAfter, preempted] = [await redisCpuUs(redis), await scriptCalls(redis), preemptions() - preemptedBefore]
  const all = await redis.slowlog('GET', '-1') as SlowEntry[]
  await redis.config('SET', 'slowlog-log-slower-than', '5000')
  await redis.slowlog('RESET')
  const [slow, near] = [all.filter(([, , us]) => us > 5000), all.filter(([, , us]) => us > NEAR_US && us <= 5000)]
  return { value, ms, cpuMs: (cpuAfter - cpuBefore) / 1000, calls: callsAfter - callsBefore, slow, near, preempted, profile: profile ? scriptProfile(all) : '' }
}

const commandName = ([command = '?', sha = '']: string[]): string =>
  command.toLowerCase() === 'evalsha' ? (scriptNames.get(sha) ?? `evalsha ${sha.slice(0, 8)}`) : command.toUpperCase()

/**
 * Every command SLOWLOG logged (at 0 µs), by script: a script's commands are logged before it,
 * so each belongs to the next script logged after it.
 */
function scriptProfile (all: SlowEntry[]): string {
  const byScript = new Map<string, { us: number[], commands: Map<string, number> }>()
  let inner = new Map<string, number>()
  for (const [, , us, args] of [...all].sort((a, b) => a[0] - b[0])) {
    const name = commandName(args)
    if (['INFO', 'CONFIG', 'SLOWLOG'].includes(name)) continue
    if (args[0]?.toLowerCase() !== 'evalsha') {
      inner.set(name, (inner.get(name) ?? 0) + us)
      continue
    }
    const seen = byScript.get(name) ?? { us: [] as number[], commands: new Map<string, number>() }
    seen.us.push(us)
    for (const [command, commandUs] of inner) seen.commands.set(command, (seen.commands.get(command) ?? 0) + commandUs)
    byScript.set(name, seen)
    inner = new Map()
  }
  const rows = [...byScript].sort((a, b) => sum(b[1].us) - sum(a[1].us)).map(([name, { us, commands }]) => {
    const sorted = [...us].sort((a, b) => a - b)
    const p99 = sorted[Math.floor(sorted.length * 0.99)] ?? 0
    const parts = [...commands].sort((a, b) => b[1] - a[1]).map(([command, commandUs]) => `${command} ${fmt(commandUs / 1000)}`).join(', ')
    return `  ${name}: ${fmt(us.length)} calls, ${fmt(sum(us) / 1000)} ms (mean ${fmt(sum(us) / us.length / 1000, 2)}, p99 ${fmt(p99 / 1000, 2)}, max ${fmt((sorted.at(-1) ?? 0) / 1000, 2)}); its commands, ms: ${parts}`
  })
  return rows.join('\n')
}

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0)

/** INFO commandstats since its last reset: each command's calls and total µs, the most first. */
async function commandTimes (redis: RedisClient): Promise<string> {
  const rows = [...(await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)]
    .map(([, name = '', calls = '0', us = '0']) => ({ name, calls: Number(calls), us: Number(us) }))
    .filter((row) => !['info', 'config', 'slowlog'].includes(row.name))
    .sort((a, b) => b.us - a.us)
  return rows.map((row) => `${row.name} ${fmt(row.calls)} calls ${fmt(row.us / 1000)} ms`).join(', ')
}

/** SLOWLOG's entries by command (a script by its name), each with how many and the longest. */
function byName (entries: SlowEntry[]): string {
  const byCommand = new Map<string, { n: number, maxUs: number }>()
  for (const [, , us, args] of entries) {
    const name = commandName(args)
    const seen = byCommand.get(name) ?? { n: 0, maxUs: 0 }
    byCommand.set(name, { n: seen.n + 1, maxUs: Math.max(seen.maxUs, us) })
  }
  return [...byCommand].sort((a, b) => b[1].n - a[1].n).map(([name, { n, maxUs }]) => `${name} ×${n} (max ${fmt(maxUs / 1000, 1)} ms)`).join(', ')
}

/** The calls of 2 to 5 ms SLOWLOG caught (its commands' too): how near the budget the others came. */
function describeNear (near: SlowEntry[]): string {
  if (near.length === 0) return 'none of 2 to 5 ms'
  return `${near.length} of 2 to 5 ms: ${byName(near)}`
}

function describeSlow (slow: SlowEntry[]): string {
  if (slow.length === 0) return 'SLOWLOG empty'
  return `SLOWLOG ${slow.length}: ${byName(slow)}`
}

/** Random members of 1..pool, `count` of them (repeats allowed), as user ids. */
function randomMembers (count: number, pool: number): string[] {
  return Array.from({ length: count }, () => String(1 + Math.floor(Math.random() * pool)))
}

/** Awards `xp` to each of `userIds`, 1,000 a call, four calls in flight. */
async function awardAll (writer: LeaderboardWriter, guildId: string, userIds: string[]): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (next < userIds.length) {
      const chunk = userIds.slice(next, next + 1000)
      next += chunk.length
      await writer.awardMany(guildId, chunk.map((userId) => ({ userId, xp: 1 + Math.floor(Math.random() * 25) })))
    }
  }))
}

interface AwardingWriter {
  awardXp: (ref: { guildId: string, userId: string, xp: number }) => Promise<unknown>
}

const IN_FLIGHT = Number(args['in-flight'])

/** The Redis CPU of `count` awards with IN_FLIGHT in flight, per award. */
async function awardCpu (redis: RedisClient, writer: AwardingWriter, guildId: string, count: number, pool: number): Promise<number> {
  const userIds = randomMembers(count, pool)
  const before = await redisCpuUs(redis)
  let next = 0
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < userIds.length) await writer.awardXp({ guildId, userId: userIds[next++] as string, xp: 10 })
  }))
  return (await redisCpuUs(redis) - before) / count
}

async function benchAwards (cleanups: Cleanups, server: RedisServer, clock: FakeClock): Promise<void> {
  const POOL = 10_000
  const COUNT = 10_000
  const baselineDir = extractCommit(cleanups, BASELINE)
  const before = {
    client: await import(pathToFileURL(join(baselineDir, 'src/redis/client.ts')).href) as typeof import('../src/redis/client.js'),
    keys: await import(pathToFileURL(join(baselineDir, 'src/redis/keys.ts')).href) as typeof import('../src/redis/keys.js'),
    writer: await import(pathToFileURL(join(baselineDir, 'src/writer/leaderboard-writer.ts')).href) as { LeaderboardWriter: new (redis: unknown, keys: unknown) => AwardingWriter & { bulkSetMembers: LeaderboardWriter['bulkSetMembers'] } }
  }
  // Each its own connection: both define commands of the same names with different scripts.
  const redisBefore = before.client.createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 30_000 })
  const redisNowClient = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 30_000 })
  cleanups.push(async () => { redisBefore.disconnect(); redisNowClient.disconnect() })
  const writerBefore = new before.writer.LeaderboardWriter(redisBefore, new before.keys.KeyBuilder('before'))
  const writer = new LeaderboardWriter(redisNowClient, new KeyBuilder('now'))
  const GUILD = '500000000000000001'
  const crowd = Array.from({ length: POOL }, (_, i) => ({ userId: String(i + 1), xp: 1000 + i, username: `member${i + 1}` }))
  // History starts with the first write: the day after it is the first whole day, closed next.
  clock.set(START - 3_600_000)
  await writerBefore.bulkSetMembers(GUILD, crowd)
  await writer.configureGuild(GUILD, { season: { every: 'week', timezone: 'UTC' } })
  await writer.bulkSetMembers(GUILD, crowd)
  clock.set(START + DAY_MS + DAY_MS / 2)
  const closed = await new DayCloser(redisNowClient, new KeyBuilder('now')).closeDue(GUILD)
  console.log(`awards: ${fmt(POOL)} members a server, ${closed.length} day closed (members carry a history index), a weekly season; ${ROUNDS} rounds of ${fmt(COUNT)} awards, ${IN_FLIGHT} in flight, load ${load()}`)
  // One round of each first, so that both have their scripts loaded and their day's first touches behind them in part.
  await awardCpu(redisBefore, writerBefore, GUILD, COUNT, POOL)
  await awardCpu(redisNowClient, writer, GUILD, COUNT, POOL)
  const ratios: number[] = []
  const rows: Array<[number, number]> = []
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['before', 'now'] as const : ['now', 'before'] as const
    const us: Record<string, number> = {}
    for (const which of order) {
      us[which] = which === 'before'
        ? await awardCpu(redisBefore, writerBefore, GUILD, COUNT, POOL)
        : await awardCpu(redisNowClient, writer, GUILD, COUNT, POOL)
    }
    rows.push([us.before ?? NaN, us.now ?? NaN])
    ratios.push((us.now ?? NaN) / (us.before ?? NaN))
  }
  console.log(`| round | ${BASELINE}: Redis µs/award | this checkout | ratio |`)
  console.log('|---|---|---|---|')
  rows.forEach(([b, n], i) => { console.log(`| ${i + 1} | ${fmt(b, 1)} | ${fmt(n, 1)} | ${fmt(n / b, 3)} |`) })
  console.log(`median ratio: ${fmt(median(ratios), 3)} (range ${fmt(Math.min(...ratios), 3)} to ${fmt(Math.max(...ratios), 3)}); load ${load()}\n`)
}

/** The close benches' server. */
const CLOSE_GUILD = '600000000000000001'

/**
 * The close benches' first day: the server configured (a weekly season, `season_retention` 1),
 * its crowd seeded, then every member awarded XP, so that the day's close touches every one.
 * Returns the members' ids.
 */
async function firstDay (redis: RedisClient, writer: LeaderboardWriter, keys: KeyBuilder, clock: FakeClock): Promise<string[]> {
  const k = keys.guild(CLOSE_GUILD)
  clock.set(START - 3_600_000)
  await writer.configureGuild(CLOSE_GUILD, { season: { every: 'week', timezone: 'UTC' }, seasonRetention: 1, historyDays: 30 })
  let started = performance.now()
  await seedGuild(writer, { guildId: CLOSE_GUILD, members: MEMBERS, seed: 'bench-history' })
  console.log(`close: seeded ${fmt(MEMBERS)} members in ${fmt((performance.now() - started) / 1000, 1)} s; load ${load()}`)
  clock.set(START + 3_600_000)
  started = performance.now()
  // The seeded crowd's ids (seedGuild spells them as a bot's snowflakes).
  const members: string[] = []
  let cursor = '0'
  do {
    const [next, flat] = await redis.zscan(k.board, cursor, 'COUNT', 10_000)
    cursor = next
    for (let i = 0; i < flat.length; i += 2) members.push(userIdFromBoardMember(flat[i] as string))
  } while (cursor !== '0')
  await awardAll(writer, CLOSE_GUILD, members)
  console.log(`day 1: every member awarded XP in ${fmt((performance.now() - started) / 1000, 1)} s (the season's board holds ${fmt(await redis.zcard(k.seasonCurrent))})`)
  return members
}

async function benchClose (cleanups: Cleanups, server: RedisServer, clock: FakeClock): Promise<void> {
  const GUILD = CLOSE_GUILD
  const keys = new KeyBuilder('lb')
  const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 60_000 })
  cleanups.push(async () => { redis.disconnect() })
  // On a shared machine a batch of awards can wait many seconds for Redis's core: wait, rather than give up.
  const writer = new LeaderboardWriter(redis, keys, { settleTimeoutMs: 600_000 })
  const closer = new DayCloser(redis, keys, {
    ...(args.chunk === undefined ? {} : { chunk: Number(args.chunk) }),
    ...(args['call-ms'] === undefined ? {} : { callMs: Number(args['call-ms']) })
  })
  const k = keys.guild(GUILD)
  const members = await firstDay(redis, writer, keys, clock)
  const membersHashBefore = Number(await redis.memory('USAGE', k.members, 'SAMPLES', 0))

  console.log('| day closed | season end: ms (Redis CPU ms), SLOWLOG | close: ms | Redis CPU ms | script calls | Redis CPU per call, ms (mean) | SLOWLOG | load |')
  console.log('|---|---|---:|---:|---:|---:|---|---|')
  const closeMs: number[] = []
  const closeCpuMs: number[] = []
  let byCommand = ''
  const endMs: number[] = []
  let slowCalls = 0
  for (let day = 1; day <= DAYS; day++) {
    clock.set(START + day * DAY_MS + 60_000)
    let endCell = '-'
    if (day % 7 === 0) {
      const end = await watched(redis, async () => await writer.seasons.endIfDue(GUILD, undefined, await redisNow(redis)))
      if (!end.value) throw new Error(`the season due on day ${day} did not end`)
      endMs.push(end.ms)
      slowCalls += end.slow.length
      endCell = `${fmt(end.ms, 1)} (${fmt(end.cpuMs, 1)}), ${describeSlow(end.slow)}`
      if (day === 7) {
        // At once a manual end: with season_retention 1 it drops the first season's board, every member's.
        const manual = await watched(redis, async () => await writer.endSeason(GUILD, { name: 'by hand' }))
        slowCalls += manual.slow.length
        endCell += `; by hand, dropping a board of ${fmt(MEMBERS)}: ${fmt(manual.ms, 1)} (${fmt(manual.cpuMs, 1)}), ${describeSlow(manual.slow)}`
      }
    }
    await redis.config('RESETSTAT')
    const close = await watched(redis, async () => await closer.closeDue(GUILD), args.profile)
    byCommand = await commandTimes(redis)
    if (close.value.length !== 1) throw new Error(`day ${day}: closed ${close.value.join(', ')}`)
    closeMs.push(close.ms)
    closeCpuMs.push(close.cpuMs)
    slowCalls += close.slow.length
    console.log(`| ${close.value[0] ?? ''} | ${endCell} | ${fmt(close.ms)} | ${fmt(close.cpuMs)} | ${fmt(close.calls)} | ${fmt(close.cpuMs / close.calls, 2)} | ${describeSlow(close.slow)}; ${describeNear(close.near)}; preempted ${fmt(close.preempted)} | ${load()} |`)
    if (close.profile !== '') console.log(`(each script, µs inside Redis as SLOWLOG logged them at 0 µs:)\n${close.profile}`)
    if (day === 1) {
      const membersHashAfter = Number(await redis.memory('USAGE', k.members, 'SAMPLES', 0))
      console.log(`(the first close gave every member a history index: the member records grew by ${fmt((membersHashAfter - membersHashBefore) / MEMBERS, 1)} bytes a member, once)`)
    }
    if (day < DAYS) await awardAll(writer, GUILD, randomMembers(ACTIVE, members.length).map((i) => members[Number(i) - 1] as string))
  }
  console.log(`the last close's commands (INFO commandstats: µs inside Redis, a script's own beside the commands it called): ${byCommand}`)
  console.log(`season ends: ${endMs.length}, max ${fmt(Math.max(...endMs), 1)} ms; closes: ${closeMs.length}, median ${fmt(median(closeMs))} ms (Redis CPU ${fmt(median(closeCpuMs))} ms), max ${fmt(Math.max(...closeMs))} ms (Redis CPU ${fmt(Math.max(...closeCpuMs))} ms); Redis calls over 5 ms: ${slowCalls}`)

  // What history keeps: every key of the server's history, per member per day kept.
  const histKeys: string[] = []
  let cursor = '0'
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${k.hist}*`, 'COUNT', 1000)
    cursor = next
    histKeys.push(...found)
  } while (cursor !== '0')
  let bytes = 0
  const byKind = new Map<string, number>()
  for (const key of histKeys) {
    const used = Number(await redis.memory('USAGE', key, 'SAMPLES', 0))
    bytes += used
    const kind = key.slice(k.hist.length).replace(/\d{4}-\d\d-\d\d/, '<day>')
    byKind.set(kind, (byKind.get(kind) ?? 0) + used)
  }
  const kept = (await redis.hkeys(k.histStats)).length
  console.log(`history: ${histKeys.length} keys, ${kept} days kept, ${fmt(bytes / 1e6, 1)} MB: ${fmt(bytes / MEMBERS / kept, 2)} bytes per member per day kept`)
  for (const [kind, used] of byKind) console.log(`  ${k.hist}${kind}: ${fmt(used / 1e6, 2)} MB`)
  for (const day of (await redis.hkeys(k.histStats)).sort()) {
    const [ranks, changes] = await Promise.all([keys.histRanks(GUILD, day), keys.histChanges(GUILD, day)]
      .map(async (key) => Number(await redis.memory('USAGE', key, 'SAMPLES', 0) ?? 0)))
    console.log(`  ${day}: ranks ${fmt((ranks ?? 0) / MEMBERS, 2)} + changes ${fmt((changes ?? 0) / MEMBERS, 2)} bytes per member`)
  }
  const today = new Date(START + DAYS * DAY_MS).toISOString().slice(0, 10)
  const live = [keys.dayGains(GUILD, today), keys.dayStart(GUILD, today)]
  for (const key of live) console.log(`  (live, today's: ${key}: ${fmt(Number(await redis.memory('USAGE', key, 'SAMPLES', 0) ?? 0) / 1e6, 2)} MB)`)
  console.log(`load ${load()}`)
}

interface Closer { closeDue: (guildId: string) => Promise<string[]> }
type CloserKind = 'this' | 'baseline'

async function benchCloseCompare (cleanups: Cleanups, server: RedisServer, clock: FakeClock, commit: string): Promise<void> {
  const GUILD = CLOSE_GUILD
  const keys = new KeyBuilder('lb')
  const baselineDir = extractCommit(cleanups, commit)
  const before = {
    client: await import(pathToFileURL(join(baselineDir, 'src/redis/client.ts')).href) as typeof import('../src/redis/client.js'),
    keys: await import(pathToFileURL(join(baselineDir, 'src/redis/keys.ts')).href) as typeof import('../src/redis/keys.js'),
    close: await import(pathToFileURL(join(baselineDir, 'src/history/day-close.ts')).href) as { DayCloser: new (redis: unknown, keys: unknown) => Closer }
  }
  const connect = (kind: CloserKind): { closer: Closer, disconnect: () => void } => {
    if (kind === 'this') {
      const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 60_000 })
      return { closer: new DayCloser(redis, keys), disconnect: () => { redis.disconnect() } }
    }
    const redis = before.client.createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 60_000 })
    return { closer: new before.close.DayCloser(redis, new before.keys.KeyBuilder('lb')), disconnect: () => { redis.disconnect() } }
  }
  let redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 60_000 })
  const writer = new LeaderboardWriter(redis, keys, { settleTimeoutMs: 600_000 })
  const members = await firstDay(redis, writer, keys, clock)
  // The two days' data, each saved before its close.
  const saved = (name: string): string => join(server.dir, `${name}.rdb`)
  const save = async (name: string): Promise<void> => {
    await redis.save()
    copyFileSync(join(server.dir, 'dump.rdb'), saved(name))
  }
  await save('first')
  clock.set(START + DAY_MS + 60_000)
  const { closer, disconnect } = connect('this')
  await closer.closeDue(GUILD)
  disconnect()
  await awardAll(writer, GUILD, randomMembers(ACTIVE, members.length).map((i) => members[Number(i) - 1] as string))
  await save('later')
  redis.disconnect()
  console.log(`compare: ${fmt(MEMBERS)} members; the first close (every member touched) and a later one (${fmt(ACTIVE)} random awards), this checkout against ${commit}, ${ROUNDS} rounds; load ${load()}`)
  console.log('| round | close | closer | ms | Redis CPU ms | script calls | SLOWLOG | load |')
  console.log('|---|---|---|---:|---:|---:|---|---|')
  const figures = new Map<string, { ms: number[], cpuMs: number[], slow: number[] }>()
  for (let round = 0; round < ROUNDS; round++) {
    for (const [day, name] of [[1, 'first'], [2, 'later']] as const) {
      const order: CloserKind[] = (round + day) % 2 === 0 ? ['this', 'baseline'] : ['baseline', 'this']
      for (const kind of order) {
        await server.stop()
        copyFileSync(saved(name), join(server.dir, 'dump.rdb'))
        clock.set(START + day * DAY_MS + 60_000)
        await server.startProcess()
        redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 60_000 })
        const run = connect(kind)
        const close = await watched(redis, async () => await run.closer.closeDue(GUILD))
        run.disconnect()
        redis.disconnect()
        if (close.value.length !== 1) throw new Error(`${name}: closed ${close.value.join(', ')}`)
        const label = kind === 'this' ? 'this checkout' : commit
        const seen = figures.get(`${name} ${label}`) ?? { ms: [], cpuMs: [], slow: [] }
        seen.ms.push(close.ms)
        seen.cpuMs.push(close.cpuMs)
        seen.slow.push(close.slow.length)
        figures.set(`${name} ${label}`, seen)
        console.log(`| ${round + 1} | ${name} | ${label} | ${fmt(close.ms)} | ${fmt(close.cpuMs)} | ${fmt(close.calls)} | ${describeSlow(close.slow)}; ${describeNear(close.near)}; preempted ${fmt(close.preempted)} | ${load()} |`)
      }
    }
  }
  for (const [name, { ms, cpuMs, slow }] of figures) {
    console.log(`${name}: median ${fmt(median(ms))} ms (${fmt(Math.min(...ms))} to ${fmt(Math.max(...ms))}), Redis CPU median ${fmt(median(cpuMs))} ms (${fmt(Math.min(...cpuMs))} to ${fmt(Math.max(...cpuMs))}), calls over 5 ms ${slow.join(', ')}`)
  }
}

async function main (cleanups: Cleanups): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-history-'))
  cleanups.push(async () => { rmSync(dir, { recursive: true, force: true }) })
  const clock = FakeClock.inDirectory(dir)
  // --pin: Redis's main thread on the first core, everything else (its background threads, this
  // process's) on the second, so that no other thread takes the core from a call in the middle.
  const pinned = args.pin ? ['--server_cpulist', '0', '--bio_cpulist', '1', '--aof_rewrite_cpulist', '1', '--bgsave_cpulist', '1'] : []
  if (args.pin) execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' })
  // As docker-compose.yml runs it: a big key that expires as the bench moves its clock a day is
  // freed by a background thread, not inside the close being measured; and Redis's jemalloc keeps
  // the memory Redis frees (--return-memory: its default decay, handing it back to the kernel).
  const keep = args['return-memory'] ? {} : { MALLOC_CONF: KEEP_FREED, JE_MALLOC_CONF: KEEP_FREED }
  const server = await RedisServer.start(['--lazyfree-lazy-expire', 'yes', ...pinned], { ...clock.env(), ...keep })
  benchServer = server
  cleanups.push(async () => { await server.close() })
  const probe = createRedis({ url: server.url, offlineQueue: true })
  const version = /^redis_version:(\S+)/m.exec(await probe.info('server'))?.[1] ?? '?'
  const decay = /opt\.dirty_decay_ms: (-?\d+)/.exec(String(await probe.call('MEMORY', 'MALLOC-STATS')))?.[1] ?? '?'
  probe.disconnect()
  console.log(`cores: ${availableParallelism()}  node: ${process.version}  redis: ${version} (jemalloc dirty_decay_ms ${decay}${args.pin ? ', pinned' : ''})  load average at start: ${load()}\n`)
  if (args.only === undefined || args.only === 'awards') await benchAwards(cleanups, server, clock)
  if (args.compare !== undefined) await benchCloseCompare(cleanups, server, clock, args.compare)
  else if (args.only === undefined || args.only === 'close') await benchClose(cleanups, server, clock)
}

await runBenchmark(main)
