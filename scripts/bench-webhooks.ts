// Webhook delivery's budgets (issue 29): 1,000 events a second delivered to a local receiver
// from two instances, each event once, p99 from award to delivery under 1 s; and a receiver down
// for 60 s gets every event after it returns, in order.
//
//   npm run build && npx tsx scripts/bench-webhooks.ts [--seconds S] [--rate R] [--servers N] [--down S]
//
// Starts its own redis-server (AOF on) and two instances of the built service (`node
// dist/server.js`, WEBHOOK_ALLOW_PRIVATE=true, the default retry schedule), a receiver (node:http
// on loopback, every delivery's signature checked with standardwebhooks' Webhook.verify), and
// gives each of N servers (default 10) a webhook to it. Then, from this process with the library:
// 1. R awards a second (default 1,000; open loop, sent on schedule) for S seconds (default 20),
//    each lifting a new member to level 1, so each makes one `member.leveled_up` event: events
//    delivered, duplicates, p50 / p99 / max from the award's send to the delivery's arrival,
//    Redis CPU per award (INFO cpu) beside the same awards to servers with no webhook, and the two
//    instances' CPU per event delivered (/proc, Linux): what the machine's other load moves least;
// 2. the receiver stops (connections refused) for D seconds (default 60) while awards go on at
//    a tenth of R, then starts again: when the last event arrives, whether every one came, and
//    in order per server.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { Webhook } from 'standardwebhooks'
import { startLocalRedis } from '../src/demo/local-redis.js'
import { freePort } from '../src/redis/redis-server.js'
import { createRedis } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { WebhookStore } from '../src/webhooks/webhook-store.js'
import { type Cleanups, redisCpuUs, runBenchmark, startProcess } from './run-benchmark.js'
import { streamIdBefore, streamIdOf } from '../src/webhooks/events.js'

const { values: args } = parseArgs({
  options: { seconds: { type: 'string', default: '20' }, rate: { type: 'string', default: '1000' }, servers: { type: 'string', default: '10' }, down: { type: 'string', default: '60' } }
})
const SECONDS = Number(args.seconds)
const RATE = Number(args.rate)
const SERVERS = Number(args.servers)
const DOWN_SECONDS = Number(args.down)

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN

interface Arrival { serverId: string, userId: string, id: string, at: number }

/** The receiver: every delivery verified, then recorded with its arrival time. */
class Receiver {
  readonly arrivals: Arrival[] = []
  readonly ids = new Map<string, number>()
  bad = 0
  readonly #secrets = new Map<string, Webhook>()
  #server: Server | undefined

  constructor (readonly port: number) {}

  secret (serverId: string, secret: string): void {
    this.#secrets.set(serverId, new Webhook(secret))
  }

  async start (): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const at = performance.now()
        const body = Buffer.concat(chunks).toString('utf8')
        const event = JSON.parse(body) as { id: string, server_id: string, data: { user_id: string } }
        try {
          this.#secrets.get(event.server_id)?.verify(body, req.headers as Record<string, string>)
        } catch {
          this.bad++
        }
        this.ids.set(event.id, (this.ids.get(event.id) ?? 0) + 1)
        this.arrivals.push({ serverId: event.server_id, userId: event.data.user_id, id: event.id, at })
        res.writeHead(204).end()
      })
    })
    server.keepAliveTimeout = 60_000
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve))
    this.#server = server
  }

  async stop (): Promise<void> {
    const server = this.#server
    this.#server = undefined
    server?.closeAllConnections()
    await new Promise<void>((resolve) => { if (server === undefined) resolve(); else server.close(() => { resolve() }) })
  }
}

/** A process's CPU so far (user + system), ms, from /proc (Linux; NaN elsewhere). */
function processCpuMs (pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
    return (Number(fields[11]) + Number(fields[12])) * 10 // clock ticks of 10 ms
  } catch {
    return NaN
  }
}

/** Event ids in the queue's order. */
const inOrder = (ids: string[]): boolean => ids.every((id, i) => i === 0 || streamIdBefore(streamIdOf(ids[i - 1] as string), streamIdOf(id)))

async function main (cleanups: Cleanups): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'))
  cleanups.push(async () => { rmSync(dir, { recursive: true, force: true }) })
  const redisServer = await startLocalRedis({ dir })
  cleanups.push(redisServer.stop)
  const redis = createRedis({ url: redisServer.url, offlineQueue: true, commandTimeoutMs: 60_000 })
  cleanups.push(async () => { redis.disconnect() })
  const version = /^redis_version:(\S+)/m.exec(await redis.info('server'))?.[1] ?? '?'
  console.log(`webhooks: cores ${availableParallelism()}  node ${process.version}  redis ${version}  load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  console.log(`${fmt(RATE)} awards/s to ${SERVERS} servers for ${SECONDS} s, two instances; then the receiver down for ${DOWN_SECONDS} s\n`)

  const keys = new KeyBuilder()
  const receiver = new Receiver(await freePort())
  await receiver.start()
  cleanups.push(async () => { await receiver.stop() })
  const store = new WebhookStore(redis, keys, { allowPrivate: true })
  const hooked = Array.from({ length: SERVERS }, (_, i) => String(8_000_000_000_000_000_000n + BigInt(i)))
  const bare = Array.from({ length: SERVERS }, (_, i) => String(8_100_000_000_000_000_000n + BigInt(i)))
  for (const g of hooked) {
    const { secret } = await store.create(g, { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['member.leveled_up'] })
    receiver.secret(g, secret)
  }
  const instances: Array<number | undefined> = []
  for (let i = 0; i < 2; i++) {
    const port = await freePort()
    instances.push((await startProcess(cleanups, ['dist/server.js'], { REDIS_URL: redisServer.url, PORT: String(port), WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'warn' }, `http://127.0.0.1:${port}/readyz`)).pid)
  }
  const instancesCpuMs = (): number => instances.reduce((sum: number, pid) => sum + processCpuMs(pid), 0)

  const writer = new LeaderboardWriter(redis, keys)
  let nextUser = 1_000_000
  const sentAt = new Map<string, number>()
  /** R awards a second to `guilds` for `seconds`, each a new member to level 1 (100 XP). */
  const awards = async (guilds: string[], rate: number, seconds: number, record: boolean): Promise<number> => {
    const total = Math.round(rate * seconds)
    const start = performance.now()
    const inFlight: Array<Promise<unknown>> = []
    for (let i = 0; i < total; i++) {
      const wait = start + i * 1000 / rate - performance.now()
      if (wait > 1) await sleep(wait)
      const guildId = guilds[i % guilds.length] as string
      const userId = String(nextUser++)
      if (record) sentAt.set(`${guildId}/${userId}`, performance.now())
      inFlight.push(writer.awardXp({ guildId, userId, xp: 100 }))
    }
    await Promise.all(inFlight)
    return total
  }

  // Warm-up: scripts loaded, connections open, leases taken.
  await awards(hooked, 200, 2, false)
  await sleep(2000)

  // Redis CPU per award, servers with no webhook, then with one (delivery's work included).
  let cpu = await redisCpuUs(redis)
  const bareAwards = await awards(bare, RATE, Math.min(5, SECONDS), false)
  const bareCpu = (await redisCpuUs(redis) - cpu) / bareAwards

  const before = receiver.arrivals.length
  const serviceCpu = instancesCpuMs()
  cpu = await redisCpuUs(redis)
  const started = performance.now()
  const sent = await awards(hooked, RATE, SECONDS, true)
  const sendSeconds = (performance.now() - started) / 1000
  const deadline = performance.now() + 30_000
  while (receiver.arrivals.length - before < sent && performance.now() < deadline) await sleep(50)
  await sleep(1000) // a duplicate would come within this
  const hookedCpu = (await redisCpuUs(redis) - cpu) / sent
  const serviceUsPerEvent = (instancesCpuMs() - serviceCpu) * 1000 / sent
  const got = receiver.arrivals.slice(before)
  const latencies = got.map((a) => a.at - (sentAt.get(`${a.serverId}/${a.userId}`) ?? NaN)).filter((ms) => !Number.isNaN(ms)).sort((a, b) => a - b)
  const duplicates = [...receiver.ids.values()].filter((n) => n > 1).length
  const orderedPhase1 = hooked.every((g) => inOrder(got.filter((a) => a.serverId === g).map((a) => a.id)))
  console.log('| phase | events sent | delivered | duplicates | in order per server | award to delivery p50 / p99 / max ms | Redis µs/award | instances\' µs/event |')
  console.log('|---|---:|---:|---:|---|---:|---:|---:|')
  console.log(`| no webhook, ${fmt(RATE)} awards/s | ${fmt(bareAwards)} (no events) | | | | | ${fmt(bareCpu, 1)} | |`)
  console.log(`| a webhook per server, ${fmt(sent / sendSeconds)} awards/s | ${fmt(sent)} | ${fmt(new Set(got.map((a) => a.id)).size)} | ${duplicates} | ${orderedPhase1 ? 'yes' : 'NO'} | ` +
    `${fmt(percentile(latencies, 0.5), 1)} / ${fmt(percentile(latencies, 0.99), 1)} / ${fmt(latencies.at(-1) ?? NaN, 1)} | ${fmt(hookedCpu, 1)} | ${fmt(serviceUsPerEvent)} |`)

  // The receiver down for DOWN_SECONDS while awards go on.
  await receiver.stop()
  const downAt = receiver.arrivals.length
  const downRate = RATE / 10
  const downSent = await awards(hooked, downRate, DOWN_SECONDS, false)
  const returned = performance.now()
  await receiver.start()
  const end = returned + 10 * 60_000
  while (receiver.arrivals.length - downAt < downSent && performance.now() < end) await sleep(100)
  const after = receiver.arrivals.slice(downAt)
  const catchUp = ((after.at(-1)?.at ?? NaN) - returned) / 1000
  const first = ((after[0]?.at ?? NaN) - returned) / 1000
  const ordered = hooked.every((g) => inOrder(after.filter((a) => a.serverId === g).map((a) => a.id)))
  console.log(`| receiver down ${DOWN_SECONDS} s, ${fmt(downRate)} awards/s meanwhile | ${fmt(downSent)} | ${fmt(new Set(after.map((a) => a.id)).size)} | ` +
    `${after.length - new Set(after.map((a) => a.id)).size} | ${ordered ? 'yes' : 'NO'} | first ${fmt(first, 1)} s, last ${fmt(catchUp, 1)} s after it returned | | |`)
  if (receiver.bad > 0) console.log(`\n${receiver.bad} deliveries failed standardwebhooks' verification`)
}

await runBenchmark(main)
