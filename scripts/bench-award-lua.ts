// Where a single award's time goes inside Redis, counted in instructions, not timed: redis-server
// runs under valgrind's callgrind, which counts every instruction it executes, so two versions
// compare exactly on a machine too loaded to time them. One server of N members (default 10,000,
// bulk-set first, a weekly season, no rule set), one award-xp call as the writer sends it (caught
// with MONITOR), then that call's arguments sent again as FCALL to each version of the function
// (a new operation id and a random member each time): this checkout's award-xp; with --steps also
// its body cut short before each of its top-level statements (what each step adds); with
// --baseline the award-xp of that commit. Every member is awarded once first, so each measured
// award updates the boards rather than inserting into them. Prints the instructions per award of
// each, with --annotate the self cost of the first version's functions by kind.
//
// --cooldown S sets a cooldown of S seconds (a second: the measured awards are past the first
// pass's, and each starts one, so each reads and writes a member's cooldown).
// --fresh-day empties the day's gains and day-start hashes before each version's awards, so most
// measured awards are a member's first of the day (2,000 awards to 10,000 members: nine in ten),
// which records the member's day start; otherwise every member has had its first already.
//
//   npx tsx scripts/bench-award-lua.ts [--baseline COMMIT] [--members N] [--count C] [--steps] [--annotate] [--cooldown S] [--fresh-day]
//
// Needs valgrind (Debian's package). Unnamed functions of redis-server's Lua are reported as such:
// Debian strips the binary.
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { createRedis } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { freePort } from '../src/redis/redis-server.js'
import { scriptParts } from '../src/redis/scripts.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { type Cleanups, extractCommit, runBenchmark } from './run-benchmark.js'

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string' },
    members: { type: 'string', default: '10000' },
    count: { type: 'string', default: '2000' },
    steps: { type: 'boolean', default: false },
    annotate: { type: 'boolean', default: false },
    cooldown: { type: 'string', default: '0' },
    'fresh-day': { type: 'boolean', default: false }
  }
})
const MEMBERS = Number(args.members)
const COUNT = Number(args.count)
const GUILD = '800000000000000003'
const FUNCTION = 'award_lua_bench'

/** award-xp's file in `dir` (its name says its number of keys, which versions change). */
const awardXpFile = (dir = 'src/redis/commands'): string => readdirSync(dir).find((f) => /^award-xp-\d+\.lua$/.test(f)) ?? 'award-xp.lua'

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US')
const userId = (i: number): string => String(500_000_000_000_000_000n + BigInt(i) * 104_729n)

/** A library of one function running `prelude` once and `body` per call, as src/redis/functions.ts builds them. */
function library (prelude: string, body: string): string {
  return ['#!lua name=award_lua_bench', 'local function init ()', prelude, 'return function (KEYS, ARGV)', body, 'end', 'end',
    'local run', `redis.register_function('${FUNCTION}', function (keys, args) if run == nil then run = init() end return run(keys, args) end)`].join('\n')
}

/** The body cut after each of its top-level statements (a line at column 0 that no block continues), named by that statement. */
function steps (body: string): Array<{ label: string, body: string }> {
  const lines = body.split('\n')
  const starts = lines.map((line, i) => ({ line, i })).filter(({ line }) => /^[a-z]/.test(line) && !/^(end|else|elseif)\b/.test(line))
  return starts.map(({ line }, n) => {
    const next = starts[n + 1]?.i
    return { label: line.slice(0, 70), body: next === undefined ? body : `${lines.slice(0, next).join('\n')}\nreturn 1` }
  })
}

async function main (cleanups: Cleanups): Promise<void> {
  try { execFileSync('valgrind', ['--version']) } catch { throw new Error('valgrind is not installed (apt-get install valgrind)') }
  const dir = mkdtempSync(join(tmpdir(), 'bench-award-lua-'))
  cleanups.push(async () => { rmSync(dir, { recursive: true, force: true }) })
  const port = await freePort()
  const server = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${join(dir, 'cg.out')}`,
    'redis-server', '--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' })
  cleanups.push(async () => { server.kill('SIGKILL') })
  for (let tries = 0; ; tries++) {
    const probe = new Redis(port, { lazyConnect: true, enableReadyCheck: false, retryStrategy: () => null })
    probe.on('error', () => {})
    const up = await probe.connect().then(() => true, () => false)
    probe.disconnect()
    if (up) break
    if (tries > 300) throw new Error('redis-server under valgrind did not start in 60 s')
    await sleep(200)
  }
  const redis = createRedis({ url: `redis://127.0.0.1:${port}`, offlineQueue: true, commandTimeoutMs: 600_000 })
  cleanups.push(async () => { redis.disconnect() })
  const writer = new LeaderboardWriter(redis, new KeyBuilder('lua'), { settleTimeoutMs: 600_000 })
  await writer.configureGuild(GUILD, { season: { every: 'week', timezone: 'UTC' }, cooldownSeconds: Number(args.cooldown) })
  for (let from = 0; from < MEMBERS; from += 5000) {
    await writer.bulkSetMembers(GUILD, Array.from({ length: Math.min(5000, MEMBERS - from) }, (_, j) => ({ userId: userId(from + j), xp: Math.floor(Math.random() * 50_000), username: `m${from + j}` })))
  }

  // The call as the writer sends it: its keys, and its arguments, of which the member and the operation id change per call.
  const monitor = new Redis(port, { enableReadyCheck: false })
  cleanups.push(async () => { monitor.disconnect() })
  const watching = await monitor.monitor()
  const caught = new Promise<string[]>((resolve) => {
    watching.on('monitor', (_time: string, command: string[]) => { if (command[0]?.toLowerCase() === 'fcall') resolve(command) })
  })
  await writer.awardXp({ guildId: GUILD, userId: userId(0), xp: 10 })
  const fcall = await caught
  watching.disconnect()
  const keyCount = Number(fcall[2])
  const keys = fcall.slice(3, 3 + keyCount)
  const argv = fcall.slice(3 + keyCount)
  const members = await redis.zrange(keys[0] as string, 0, -1)

  const raw = new Redis(port, { enableReadyCheck: false })
  cleanups.push(async () => { raw.disconnect() })
  let op = 0
  async function awards (count: number, member: (i: number) => string): Promise<void> {
    for (let i = 0; i < count; i += 500) {
      const pipeline = raw.pipeline()
      for (let j = i; j < Math.min(count, i + 500); j++) {
        const a = [...argv]
        a[0] = member(j)
        a[4] = `lua-bench-${++op}`
        pipeline.call('FCALL', FUNCTION, String(keyCount), ...keys, ...a)
      }
      const failed = (await pipeline.exec())?.find(([err]) => err !== null)
      if (failed?.[0] != null) throw failed[0]
    }
  }
  const callgrind = (command: string): void => { execFileSync('callgrind_control', [command, String(server.pid)], { stdio: 'ignore' }) }
  /** Instructions per call of `count` awards to random members, and the dump they were counted in. */
  async function measure (lua: string): Promise<{ perCall: number, dump: string }> {
    await raw.call('FUNCTION', 'LOAD', 'REPLACE', lua)
    // KEYS[14] and KEYS[15] of award-xp: the day's gains and its day-start hash.
    if (args['fresh-day']) await raw.del(keys[13] as string, keys[14] as string)
    await awards(100, () => members[Math.floor(Math.random() * members.length)] as string)
    callgrind('-z')
    await awards(COUNT, () => members[Math.floor(Math.random() * members.length)] as string)
    callgrind('-d')
    const dump = readdirSync(dir).filter((f) => f.startsWith('cg.out.')).sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop())).at(-1)
    if (dump === undefined) throw new Error('callgrind wrote no dump')
    const text = readFileSync(join(dir, dump), 'utf8')
    const total = /^(?:summary|totals): (\d+)/m.exec(text)?.[1]
    if (total === undefined) throw new Error(`no total in ${dump}`)
    return { perCall: Number(total) / COUNT, dump: join(dir, dump) }
  }

  const { prelude, body } = scriptParts(awardXpFile())
  await raw.call('FUNCTION', 'LOAD', 'REPLACE', library(prelude, body))
  await awards(members.length, (i) => members[i] as string)
  console.log(`award-xp under callgrind: ${fmt(MEMBERS)} members, a weekly season, ${args.cooldown === '0' ? 'no rule set' : `a cooldown of ${args.cooldown} s`}, every member awarded once${args['fresh-day'] ? ', the day\'s hashes emptied before each version' : ''}; ${fmt(COUNT)} awards a version`)
  const rows: Array<[string, number]> = []
  const first = await measure(library(prelude, body))
  rows.push(['this checkout', first.perCall])
  if (args.baseline !== undefined) {
    const dir = join(extractCommit(cleanups, args.baseline), 'src/redis/commands')
    const base = scriptParts(awardXpFile(dir), dir)
    rows.push([args.baseline, (await measure(library(base.prelude, base.body))).perCall])
  }
  console.log('| version | instructions an award |\n|---|---:|')
  for (const [name, perCall] of rows) console.log(`| ${name} | ${fmt(perCall)} |`)
  if (args.steps) {
    let before = (await measure(library(prelude, 'return 1'))).perCall
    console.log(`\n| this checkout's body, statement by statement | instructions an award, to its end | the statement's |\n|---|---:|---:|\n| (an empty body: FCALL, its KEYS and ARGV) | ${fmt(before)} | |`)
    for (const step of steps(body)) {
      const upTo = (await measure(library(prelude, step.body))).perCall
      console.log(`| \`${step.label.replaceAll('|', '\\|')}\` | ${fmt(upTo)} | ${fmt(upTo - before)} |`)
      before = upTo
    }
  }
  if (args.annotate) annotate(first.dump)
}

/** The self cost of a dump's functions per award, by kind (Lua's own functions are unnamed in Debian's binary). */
function annotate (dump: string): void {
  const out = execFileSync('callgrind_annotate', ['--threshold=100', dump], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  const total = Number(/([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS/.exec(out)?.[1]?.replaceAll(',', '') ?? NaN)
  const kinds = new Map<string, number>()
  for (const [, irText = '', fn = '', object = ''] of out.matchAll(/^\s*([\d,]+) \([\s\d.]+%\)\s+\S+?:(\S+)(?: \[(.*)\])?$/gm)) {
    const ir = Number(irText.replaceAll(',', ''))
    if (ir > total / 2) continue // the functions on the stack when the dump was taken (main and its callers)
    const address = /^0x([0-9a-f]+)/.exec(fn)?.[1]
    const kind = object.includes('jemalloc') || /^z(malloc|free|realloc|calloc)/.test(fn)
      ? 'malloc and free'
      : object.includes('libc.so')
        ? (/strtod|str_to_mpn|round_and_return/.test(fn) ? 'libc: strings to numbers (strtod)' : /printf|hack_digit/.test(fn) ? 'libc: numbers to strings (printf)' : 'libc: other (memcmp, memcpy, …)')
        : address !== undefined && object.includes('redis')
          ? 'Lua, unnamed (the VM, its collector, tables, strings, cjson)'
          : /^lua/.test(fn) ? 'Lua API and the script bridge (lua_*, luaCallFunction, …)' : 'Redis (commands, dispatch, replies, networking)'
    kinds.set(kind, (kinds.get(kind) ?? 0) + ir)
  }
  console.log('\n| where, self cost | instructions an award |\n|---|---:|')
  for (const [kind, ir] of [...kinds].sort((a, b) => b[1] - a[1])) console.log(`| ${kind} | ${fmt(ir / COUNT)} |`)
}

await runBenchmark(main)
