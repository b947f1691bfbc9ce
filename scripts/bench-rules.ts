// The rules' budget: batch awards with every rule on (a cooldown, a daily cap, three
// multipliers, a boost, ten role rewards) through one instance, against the same awards without
// rules, and against the code before the rules (`--baseline`), in one run:
//
//   npm run build && npx tsx scripts/bench-rules.ts [--baseline DIR] [--seconds S] [--rounds R] [--connections C]
//
// DIR is a checkout of the code before the rules, built (`git worktree add /tmp/before <commit>
// && cd /tmp/before && npm ci && npm run build`): its `dist/server.js` runs beside this one's, on
// the same redis-server (AOF on, its own), each on a server of its own, with a Redis command
// timeout of 10 s and no load shedding (a loaded machine should slow the bench, not shed it).
// Each round sends, to each in turn, POST /awards batches of 1,000 from C connections (default
// 4) for S seconds (default 5): awards/s through the instance, Redis CPU per award (INFO cpu,
// main thread user+sys, over the awards), the instance's CPU per award (its process's user+sys,
// from /proc: with Redis, what the awards a second need of the machine's cores), and for the
// rules the share of awards applied. Awards
// go to random members of a pool of 1,000,000 (so a member's next award is mostly past its
// cooldown, as in a server where most members speak now and then), 15 to 25 XP, as MEE6 gives.
import { Agent } from 'node:http'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort } from '../src/redis/redis-server.js'
import { redisNow } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { TokenStore } from '../src/tokens/token-store.js'
import { CHANNEL, everyRule, ROLE_A, ROLE_B, ROLE_C } from './every-rule.js'
import { benchRedis, type Cleanups, postJson, processCpuMs, redisCpuUs, runBenchmark, startProcess } from './run-benchmark.js'

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '4' }
  }
})
const SECONDS = Number(args.seconds)
const ROUNDS = Number(args.rounds)
const CONNECTIONS = Number(args.connections)
const MEMBERS = 1_000_000
const BATCH = 1000

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const userId = (): string => String(500_000_000_000_000_000n + BigInt(Math.floor(Math.random() * MEMBERS)) * 104_729n)
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN

interface Config {
  name: string
  port: number
  /** The instance's process, for its CPU. */
  pid: number | undefined
  guild: string
  /** Award items with the rules' fields. */
  rules: boolean
  rounds: Array<{ rate: number, cpu: number, instance: number, applied: number, unavailable: number }>
}

async function main (cleanups: Cleanups): Promise<void> {
  const { url, redis } = await benchRedis(cleanups, 'rules')

  const keys = new KeyBuilder()
  const start = async (root: string): Promise<{ adminPort: number, pid: number | undefined }> => {
    const [port, adminPort] = [await freePort(), await freePort()]
    const child = await startProcess(cleanups, [join(root, 'dist/server.js')], {
      REDIS_URL: url,
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      LOG_LEVEL: 'warn',
      // On a shared, loaded machine Redis answers late: a bench of Redis's work per award wants
      // every call applied, not shed or timed out (the same for every row).
      REDIS_COMMAND_TIMEOUT_MS: '10000',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      MAX_IN_FLIGHT: '0'
    }, `http://127.0.0.1:${adminPort}/healthz`)
    return { adminPort, pid: child.pid }
  }
  const guilds = ['800000000000000001', '800000000000000002', '800000000000000003']
  const { token } = await new TokenStore(redis, keys).create({ name: 'bench', servers: guilds, scopes: ['write'] })
  const body = (rules: boolean): string => JSON.stringify({
    awards: Array.from({ length: BATCH }, () => ({
      user_id: userId(),
      xp: 15 + Math.floor(Math.random() * 11),
      ...(rules ? { role_ids: [ROLE_A, ROLE_B, ROLE_C], channel_id: CHANNEL } : {})
    }))
  })
  const config = (name: string, instance: { adminPort: number, pid: number | undefined }, guild: string, rules: boolean): Config =>
    ({ name, port: instance.adminPort, pid: instance.pid, guild, rules, rounds: [] })
  const current = await start(process.cwd())
  const configs: Config[] = [
    ...(args.baseline === undefined ? [] : [config('before the rules', await start(args.baseline), guilds[0] as string, false)]),
    config('no rules', current, guilds[1] as string, false),
    config('every rule on', current, guilds[2] as string, true)
  ]

  await new LeaderboardWriter(redis, keys).configureGuild(guilds[2] as string, everyRule(await redisNow(redis)))

  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS })
  cleanups.push(async () => { agent.destroy() })
  const batches = async (c: Config, ms: number): Promise<{ awards: number, applied: number, unavailable: number }> => {
    let awards = 0
    let applied = 0
    // A 503 (Redis too slow for the instance's command timeout, on a loaded machine) applied
    // nothing for sure only in the count of calls: counted apart, its awards not counted.
    let unavailable = 0
    const end = performance.now() + ms
    await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        // A new body each time: a body sent again would repeat its members within their cooldown.
        const { status, text } = await postJson(agent, c.port, `/admin/v1/servers/${c.guild}/awards`, token, body(c.rules))
        if (status === 503) {
          unavailable++
          continue
        }
        if (status !== 200) throw new Error(`${c.name}: ${status} ${text.slice(0, 200)}`)
        awards += BATCH
        applied += c.rules ? (text.match(/"applied":true/g)?.length ?? 0) : BATCH
      }
    }))
    return { awards, applied, unavailable }
  }
  for (const c of configs) await batches(c, 1000) // warm-up: scripts loaded, connections open
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of configs) {
      const [cpu, instance] = [await redisCpuUs(redis), processCpuMs(c.pid)]
      const started = performance.now()
      const { awards, applied, unavailable } = await batches(c, SECONDS * 1000)
      c.rounds.push({
        rate: awards / ((performance.now() - started) / 1000),
        cpu: (await redisCpuUs(redis) - cpu) / awards,
        instance: (processCpuMs(c.pid) - instance) * 1000 / awards,
        applied: applied / awards,
        unavailable
      })
    }
  }

  const base = configs[0] as Config
  console.log(`load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  console.log(`| batches of 1,000 (${CONNECTIONS} connections) | awards/s, each round | Redis µs/award, each round | × the first row's Redis µs (median of the rounds' ratios) | the instance's µs/award, each round | applied | 503s |`)
  console.log('|---|---:|---:|---:|---:|---:|---:|')
  for (const c of configs) {
    // Rounds in which both rows had every call answered: a 503's call may still have run.
    const ratio = median(c.rounds.flatMap((r, i) => {
      const b = base.rounds[i]
      return b === undefined || r.unavailable > 0 || b.unavailable > 0 ? [] : [r.cpu / b.cpu]
    }))
    console.log(`| ${c.name} | ${c.rounds.map((r) => fmt(r.rate)).join(', ')} | ${c.rounds.map((r) => fmt(r.cpu, 1)).join(', ')} | ${fmt(ratio, 2)} | ${c.rounds.map((r) => fmt(r.instance, 1)).join(', ')} | ${c.rounds.map((r) => `${fmt(100 * r.applied)} %`).join(', ')} | ${c.rounds.map((r) => r.unavailable).join(', ')} |`)
  }
}

await runBenchmark(main)
