// What an award costs Redis at the least, whatever the script around it: batches of awards to
// random members of a pool of 1,000,000 (as scripts/bench-rules.ts sends them through the
// service) applied by scripts that do only part of what award-batch does, so the rate Redis
// could take with nothing else to do is measured beside what the service reaches:
//
//   npx tsx scripts/bench-award-floor.ts [--seconds S] [--rounds R] [--in-flight N]
//
// - "boards": the board's `ZADD XX INCR` (or `ZADD` for a member new to it) and the week's and
//   the month's `ZINCRBY`, nothing else: the three sorted sets every award updates;
// - the same updates made by one `ZMSCORE` and one `ZADD` a board a call (whether the commands'
//   own overhead, paid per award, is what costs, or the skip lists' walks);
// - "boards + cooldown and cap": also, per award, the cooldown's and the day's gains' `HGET`s,
//   and per call one `HSET` of the call's cooldowns and one of its day's gains, as award-batch
//   writes them (includes/cooldowns.lua, includes/calendar-counting.lua).
// Each variant on a server of its own, taking turns, R rounds (default 3) of S seconds (default
// 4), calls of 250 awards (the writer's) with N calls in flight (default 16: bench-rules' four
// connections each sending a batch of 1,000), gains of 112 to 187 (bench-rules' 15 to 25 XP
// with every multiplier and the boost). Redis with AOF on, as the service's compose file runs it.
// Awards/s here are Redis's alone: the bench process only draws ids and waits.
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { benchRedis, type Cleanups, redisCpuUs, runBenchmark } from './run-benchmark.js'

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '3' },
    'in-flight': { type: 'string', default: '16' }
  }
})
const SECONDS = Number(args.seconds)
const ROUNDS = Number(args.rounds)
const IN_FLIGHT = Number(args['in-flight'])
const MEMBERS = 1_000_000
const CALL = 250

const BOARDS = `
local board, week, month = KEYS[1], KEYS[2], KEYS[3]
for i = 1, #ARGV, 2 do
  local member, gain = ARGV[i], ARGV[i + 1]
  if not redis.call('ZADD', board, 'XX', 'INCR', gain, member) then redis.call('ZADD', board, gain, member) end
  redis.call('ZINCRBY', week, gain, member)
  redis.call('ZINCRBY', month, gain, member)
end
return #ARGV / 2
`

// The same updates made by one ZMSCORE and one ZADD per board a call (a member twice in a call
// adds up in a table first).
const BOARDS_BATCHED = `
local n = #ARGV / 2
local members, gains, at = {}, {}, {}
local m = 0
for i = 1, #ARGV, 2 do
  local member, gain = ARGV[i], tonumber(ARGV[i + 1])
  local j = at[member]
  if j then gains[j] = gains[j] + gain else
    m = m + 1
    members[m], gains[m], at[member] = member, gain, m
  end
end
for b = 1, 3 do
  local scores = redis.call('ZMSCORE', KEYS[b], unpack(members))
  local scored = {}
  for j = 1, m do
    scored[2 * j - 1] = (tonumber(scores[j]) or 0) + gains[j]
    scored[2 * j] = members[j]
  end
  redis.call('ZADD', KEYS[b], unpack(scored))
end
return n
`

const BOARDS_AND_RULES = `
local board, week, month, cooldowns, gains = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now = ARGV[1]
local started, gained = {}, {}
local s, g = 0, 0
for i = 2, #ARGV, 2 do
  local member, gain = ARGV[i], ARGV[i + 1]
  local last = redis.call('HGET', cooldowns, member)
  if not last or tonumber(last) + 60000 <= tonumber(now) then
    local before = tonumber(redis.call('HGET', gains, member) or 0)
    if not redis.call('ZADD', board, 'XX', 'INCR', gain, member) then redis.call('ZADD', board, gain, member) end
    redis.call('ZINCRBY', week, gain, member)
    redis.call('ZINCRBY', month, gain, member)
    started[s + 1], started[s + 2] = member, now
    gained[g + 1], gained[g + 2] = member, before + tonumber(gain)
    s, g = s + 2, g + 2
  end
end
if s > 0 then redis.call('HSET', cooldowns, unpack(started)) end
if g > 0 then redis.call('HSET', gains, unpack(gained)) end
return s / 2
`

const userId = (): string => String(500_000_000_000_000_000n + BigInt(Math.floor(Math.random() * MEMBERS)) * 104_729n)
const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

interface Variant { name: string, sha: string, keys: string[], now: boolean, rounds: Array<{ rate: number, cpu: number, applied: number }> }

async function main (cleanups: Cleanups): Promise<void> {
  const { redis } = await benchRedis(cleanups, 'award-floor')
  const load = async (body: string): Promise<string> => await redis.script('LOAD', body) as string
  const keys = (tag: string, n: number): string[] => ['board', 'week', 'month', 'cooldowns', 'gains'].slice(0, n).map((k) => `floor:{${tag}}:${k}`)
  const variants: Variant[] = [
    { name: 'boards', sha: await load(BOARDS), keys: keys('a', 3), now: false, rounds: [] },
    { name: 'boards, one ZMSCORE and one ZADD each a call', sha: await load(BOARDS_BATCHED), keys: keys('c', 3), now: false, rounds: [] },
    { name: 'boards + cooldown and cap', sha: await load(BOARDS_AND_RULES), keys: keys('b', 5), now: true, rounds: [] }
  ]
  const calls = async (v: Variant, ms: number): Promise<{ awards: number, applied: number }> => {
    let awards = 0
    let applied = 0
    const end = performance.now() + ms
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < end) {
        const argv: string[] = v.now ? [String(Date.now())] : []
        for (let i = 0; i < CALL; i++) argv.push(userId(), String(112 + Math.floor(Math.random() * 76)))
        const done = Number(await redis.evalsha(v.sha, v.keys.length, ...v.keys, ...argv))
        applied += done
        awards += CALL
      }
    }))
    return { awards, applied }
  }
  for (const v of variants) await calls(v, 1000)
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of variants) {
      const cpu = await redisCpuUs(redis)
      const started = performance.now()
      const { awards, applied } = await calls(v, SECONDS * 1000)
      v.rounds.push({ rate: awards / ((performance.now() - started) / 1000), cpu: (await redisCpuUs(redis) - cpu) / awards, applied: applied / awards })
    }
  }
  const sizes = await Promise.all(variants.map(async (v) => await redis.zcard(v.keys[0] as string)))
  console.log(`load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  console.log(`| calls of ${CALL}, ${IN_FLIGHT} in flight | awards/s, each round | Redis µs/award, each round | applied | board at the end |`)
  console.log('|---|---:|---:|---:|---:|')
  variants.forEach((v, i) => {
    console.log(`| ${v.name} | ${v.rounds.map((r) => fmt(r.rate)).join(', ')} | ${v.rounds.map((r) => fmt(r.cpu, 1)).join(', ')} | ${v.rounds.map((r) => `${fmt(100 * r.applied)} %`).join(', ')} | ${fmt(sizes[i] ?? 0)} |`)
  })
}

await runBenchmark(main)
