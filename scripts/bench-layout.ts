// Measures the member-data layout the issue asked us to choose: one hash per server keyed by
// user_id (what src/ does: names/streaks/claims) against one hash per member. On a throwaway
// redis-server it loads the same N members in each layout and compares memory per member and
// the cost of reading a page of 100 in a Lua script.
//
//   npx tsx scripts/bench-layout.ts [members=100000]
//
// The per-server layout's keys come from src/redis/keys.ts and its page is read with the
// project's own leaderboard-page script. The per-member layout exists only here, to be compared:
// its key names are spelled in one function, `perMemberLayout`, and nowhere else.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { startLocalRedis } from '../src/demo/local-redis.js'
import { createRedis, type RedisClient } from '../src/redis/client.js'
import { boardMember, KeyBuilder } from '../src/redis/keys.js'
import { type Cleanups, runBenchmark } from './run-benchmark.js'

const MEMBERS = Number(process.argv[2] ?? 100_000)
const PAGE = 100
const BATCH = 2000 // members per pipeline while loading
// The read timings alternate layouts in short rounds, so both see the same background load;
// each ratio is the median of the per-round ratios.
const ROUNDS = 7
const ROUND_MS = 600 // each timing, per layout and round
const IN_FLIGHT = 32
const CLAIMED_SHARE = 0.3 // src/seed's crowd: about a third of members ever claimed a daily

// ---------------------------------------------------------------------------------------------
// The alternative layout, spelled here only: one HASH per member with the server's hash tag,
// so it shares the board's cluster slot.
function perMemberLayout (keys: KeyBuilder, guildId: string) {
  const keyPrefix = `${keys.prefix}:{${guildId}}:member:`
  return {
    /** Key of a member's hash; its fields are `fields` below. */
    memberKey: (userId: string) => keyPrefix + userId,
    /** What a script appends a user_id to, to find that member's hash. */
    keyPrefix,
    fields: { name: 'name', streak: 'streak', claim: 'claim' }
  }
}

// The per-member twin of src/redis/commands/leaderboard-page-3.lua: the same reads, but a name
// comes from each member's own hash. Those keys are only known once the page is read, so they
// cannot be declared in KEYS: fine on one Redis and within one cluster slot, but outside what
// Redis documents for scripts (and the alternative, a second round trip, breaks the budget).
const PER_MEMBER_PAGE_LUA = `
${readFileSync(new URL('../src/redis/commands/includes/ids.lua', import.meta.url), 'utf8')}
-- KEYS[1] board ZSET, KEYS[2] settings HASH
-- ARGV[1] start, ARGV[2] stop, ARGV[3] member key prefix, ARGV[4] the name field
local total = redis.call('ZCARD', KEYS[1])
local curve = redis.call('HGET', KEYS[2], 'curve')
local result = { total, curve }
local entries = redis.call('ZREVRANGE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES')
for i = 1, #entries, 2 do
  local id = user_id_from_member(entries[i])
  result[#result + 1] = id
  result[#result + 1] = entries[i + 1]
  result[#result + 1] = redis.call('HGET', ARGV[3] .. id, ARGV[4])
end
return result
`
// ---------------------------------------------------------------------------------------------

// The layout alone, without the page around it: the names of 100 given user_ids.
const PER_SERVER_NAMES_LUA = "return redis.call('HMGET', KEYS[1], unpack(ARGV))"
const PER_MEMBER_NAMES_LUA = `
-- ARGV[1] member key prefix, ARGV[2] the name field, ARGV[3..] user_ids
local names = {}
for i = 3, #ARGV do names[#names + 1] = redis.call('HGET', ARGV[1] .. ARGV[i], ARGV[2]) end
return names
`

type Reply = string | number | null
interface BenchCommands {
  perMemberPage: (board: string, settings: string, start: number, stop: number, keyPrefix: string, nameField: string) => Promise<Reply[]>
  perServerNames: (names: string, ...userIds: string[]) => Promise<Reply[]>
  perMemberNames: (keyPrefix: string, nameField: string, ...userIds: string[]) => Promise<Reply[]>
}

interface Member { userId: string, name: string, xp: number, streak: number, claimMs: number }

/** The same crowd for both layouts: snowflake-like ids, short names, a spread of XP. */
function crowd (n: number): Member[] {
  let state = 0x2545f491
  const random = (): number => {
    state ^= state << 13; state ^= state >>> 17; state ^= state << 5
    return (state >>> 0) / 2 ** 32
  }
  const base = 700_000_000_000_000_000n
  const now = Date.now()
  return Array.from({ length: n }, (_, i) => ({
    userId: String(base + BigInt(i) * 1_000_003n),
    name: `player_${i.toString(36)}`,
    xp: Math.floor(random() ** 3 * 5_000_000),
    streak: 1 + Math.floor(random() * 30),
    claimMs: now - Math.floor(random() * 3 * 86_400_000)
  }))
}

async function load (redis: RedisClient, members: Member[], add: (p: ReturnType<RedisClient['pipeline']>, m: Member) => void): Promise<void> {
  for (let i = 0; i < members.length; i += BATCH) {
    const pipeline = redis.pipeline()
    for (const m of members.slice(i, i + BATCH)) add(pipeline, m)
    for (const [err] of await pipeline.exec() ?? []) if (err !== null) throw err
  }
}

/** Allocated bytes without client buffers, so a loader's query buffer does not count as data. */
async function dataMemory (redis: RedisClient): Promise<number> {
  await sleep(200)
  const info = await redis.info('memory')
  const field = (name: string): number => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? NaN)
  return field('used_memory') - field('mem_clients_normal')
}

/** Reads per second over `ms`: pages at pseudo-random offsets, `inFlight` scripts at a time. */
async function timePages (ms: number, inFlight: number, read: (start: number) => Promise<unknown>): Promise<number> {
  let next = 0
  const started = performance.now()
  const end = started + ms
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (performance.now() < end) {
      const i = next++
      await read(((i * 7_919) % Math.floor(MEMBERS / PAGE)) * PAGE)
    }
  }))
  return next / ((performance.now() - started) / 1000)
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN
const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

async function main (cleanups: Cleanups): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-layout-'))
  cleanups.push(async () => { rmSync(dir, { recursive: true, force: true }) })
  // No AOF: this compares memory and reads, and an AOF rewrite mid-load would only add noise.
  const server = await startLocalRedis({ dir, extraArgs: ['--appendonly', 'no'] })
  cleanups.push(server.stop)
  const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 60_000 })
  cleanups.push(async () => { redis.disconnect() })
  redis.defineCommand('perMemberPage', { numberOfKeys: 2, lua: PER_MEMBER_PAGE_LUA })
  redis.defineCommand('perServerNames', { numberOfKeys: 1, lua: PER_SERVER_NAMES_LUA })
  redis.defineCommand('perMemberNames', { numberOfKeys: 0, lua: PER_MEMBER_NAMES_LUA })
  const bench = redis as unknown as BenchCommands

  const version = /^redis_version:(\S+)/m.exec(await redis.info('server'))?.[1] ?? '?'
  console.log(`cores: ${availableParallelism()}  node: ${process.version}  redis: ${version}  (redis-server pid ${server.pid}, port ${server.port}, AOF off)`)
  console.log(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  console.log(`members per layout: ${fmt(MEMBERS)}, page size ${PAGE}\n`)

  const keys = new KeyBuilder()
  const members = crowd(MEMBERS)
  const perServer = keys.guild('100000000000000001')
  const perMemberBoard = keys.guild('100000000000000002')
  const alt = perMemberLayout(keys, '100000000000000002')

  // Memory: the board (common to both) first, then names, then streak + last claim for the
  // members who claimed (a share, then everyone).
  const claimedFirst = Math.round(MEMBERS * CLAIMED_SHARE)
  const m0 = await dataMemory(redis)
  await load(redis, members, (p, m) => { p.zadd(perServer.board, m.xp, boardMember(m.userId)) })
  const m1 = await dataMemory(redis)
  await load(redis, members, (p, m) => { p.hset(perServer.names, m.userId, m.name) })
  const m2 = await dataMemory(redis)
  const addServerClaim = (p: ReturnType<RedisClient['pipeline']>, m: Member): void => {
    p.hset(perServer.streaks, m.userId, m.streak).hset(perServer.claims, m.userId, m.claimMs)
  }
  await load(redis, members.slice(0, claimedFirst), addServerClaim)
  const m3 = await dataMemory(redis)
  await load(redis, members.slice(claimedFirst), addServerClaim)
  const m4 = await dataMemory(redis)

  await load(redis, members, (p, m) => { p.zadd(perMemberBoard.board, m.xp, boardMember(m.userId)) })
  const m5 = await dataMemory(redis)
  await load(redis, members, (p, m) => { p.hset(alt.memberKey(m.userId), alt.fields.name, m.name) })
  const m6 = await dataMemory(redis)
  const addMemberClaim = (p: ReturnType<RedisClient['pipeline']>, m: Member): void => {
    p.hset(alt.memberKey(m.userId), alt.fields.streak, m.streak, alt.fields.claim, m.claimMs)
  }
  await load(redis, members.slice(0, claimedFirst), addMemberClaim)
  const m7 = await dataMemory(redis)
  await load(redis, members.slice(claimedFirst), addMemberClaim)
  const m8 = await dataMemory(redis)

  const perMember = (bytes: number): number => bytes / MEMBERS
  const rows: Array<[string, number, number]> = [
    ['name only', perMember(m2 - m1), perMember(m6 - m5)],
    [`name; streak + claim for ${fmt(CLAIMED_SHARE * 100)}%`, perMember(m3 - m1), perMember(m7 - m5)],
    ['name + streak + claim, all', perMember(m4 - m1), perMember(m8 - m5)]
  ]
  console.log('Memory of member data (INFO memory: used_memory minus mem_clients_normal, delta / members):')
  console.log('| member data                   | per-server hashes | per-member hashes | per-member / per-server |')
  console.log('|-------------------------------|------------------:|------------------:|------------------------:|')
  for (const [label, server, member] of rows) {
    console.log(`| ${label.padEnd(29)} | ${fmt(server, 1).padStart(10)} B/memb | ${fmt(member, 1).padStart(10)} B/memb | ${fmt(member / server, 2).padStart(22)}x |`)
  }
  console.log(`| board ZSET (same in both)     | ${fmt(perMember(m1 - m0), 1).padStart(10)} B/memb | ${fmt(perMember(m5 - m4), 1).padStart(10)} B/memb |                         |`)
  const [namesEncoding, memberEncoding] = await Promise.all([
    redis.object('ENCODING', perServer.names), redis.object('ENCODING', alt.memberKey(members[0]?.userId ?? ''))])
  console.log(`encodings: per-server names hash = ${String(namesEncoding)}, one per-member hash = ${String(memberEncoding)}; keys in the db: ${fmt(await redis.dbsize())}\n`)

  // Both layouts must serve the same page before their speed means anything.
  const readServer = async (start: number) => await redis.leaderboardPage(perServer.board, perServer.names, perServer.settings, start, start + PAGE - 1)
  const readMember = async (start: number) => await bench.perMemberPage(perMemberBoard.board, perMemberBoard.settings, start, start + PAGE - 1, alt.keyPrefix, alt.fields.name)
  const idsAt = (start: number): string[] => members.slice(start, start + PAGE).map((m) => m.userId)
  const namesServer = async (start: number) => await bench.perServerNames(perServer.names, ...idsAt(start))
  const namesMember = async (start: number) => await bench.perMemberNames(alt.keyPrefix, alt.fields.name, ...idsAt(start))
  for (const start of [0, Math.floor(MEMBERS / 2)]) {
    if (JSON.stringify(await readServer(start)) !== JSON.stringify(await readMember(start)) ||
      JSON.stringify(await namesServer(start)) !== JSON.stringify(await namesMember(start))) {
      throw new Error(`the two layouts disagree on the page at rank ${start + 1}`)
    }
  }
  for (const read of [readServer, readMember, namesServer, namesMember]) await timePages(300, IN_FLIGHT, read) // warm-up

  const runs: Array<{ label: string, inFlight: number, server: (start: number) => Promise<unknown>, member: (start: number) => Promise<unknown> }> = [
    { label: 'page script, 1 in flight', inFlight: 1, server: readServer, member: readMember },
    { label: `page script, ${IN_FLIGHT} in flight`, inFlight: IN_FLIGHT, server: readServer, member: readMember },
    { label: `names of 100 ids only, ${IN_FLIGHT} in flight`, inFlight: IN_FLIGHT, server: namesServer, member: namesMember }
  ]
  const timings = runs.map(() => ({ server: [] as number[], member: [] as number[] }))
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, run] of runs.entries()) {
      timings[i]?.server.push(await timePages(ROUND_MS, run.inFlight, run.server))
      timings[i]?.member.push(await timePages(ROUND_MS, run.inFlight, run.member))
    }
  }
  console.log(`Reading ${PAGE} members in one EVALSHA from one client, scripts/s (median of ${ROUNDS} alternating rounds of ${ROUND_MS} ms; ratio = median of per-round ratios):`)
  console.log('  page script = ZCARD + curve + ZREVRANGE WITHSCORES + id decode + names (src\'s leaderboard-page vs its per-member twin)')
  console.log('| read                                 | per-server hashes | per-member hashes | per-server / per-member |')
  console.log('|--------------------------------------|------------------:|------------------:|------------------------:|')
  const ratios: number[] = []
  for (const [i, run] of runs.entries()) {
    const { server = [], member = [] } = timings[i] ?? {}
    const ratio = median(server.map((s, round) => s / (member[round] ?? NaN)))
    ratios.push(ratio)
    console.log(`| ${run.label.padEnd(36)} | ${fmt(median(server)).padStart(17)} | ${fmt(median(member)).padStart(17)} | ${fmt(ratio, 2).padStart(22)}x |`)
  }
  console.log('')

  const verdict = (label: string, server: number, member: number): string => server <= member
    ? `${label}: per-server is ${fmt(member / server, 2)}x smaller`
    : `${label}: per-member is ${fmt(server / member, 2)}x smaller`
  console.log(`Memory, ${rows.map(([label, server, member]) => verdict(label, server, member)).join('; ')}.`)
  const [pageSeq = NaN, pagePipe = NaN, namesOnly = NaN] = ratios
  console.log(`Reads: per-server / per-member throughput = ${fmt(pagePipe, 2)}x for the page script with Redis busy, ${fmt(pageSeq, 2)}x with one in flight, ${fmt(namesOnly, 2)}x for the name lookups alone.`)
  console.log('The per-server layout also declares every key its scripts touch; the per-member page script cannot.')
}

await runBenchmark(main)
