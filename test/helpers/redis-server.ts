// Throwaway redis-server processes for tests, each on a free port with its own data directory,
// stopped in teardown: the library's launcher (src/redis/redis-server.ts) with RDB-only settings.
// Nothing here ever talks to port 6379 (freePort never picks it).
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import type { Test } from 'tap'
import { createRedis, type RedisClient } from '../../src/redis/client.js'
import { KeyBuilder } from '../../src/redis/keys.js'
import { freePort, launchRedisServer, type RedisProcess } from '../../src/redis/redis-server.js'
import { scripts } from '../../src/redis/scripts.js'

export class RedisServer {
  readonly port: number
  readonly dir: string
  readonly extraArgs: string[]
  /** The process's environment (a fake clock's, say); this process's by default. */
  readonly env: NodeJS.ProcessEnv | undefined
  #process: RedisProcess | undefined

  private constructor (port: number, dir: string, extraArgs: string[], env: NodeJS.ProcessEnv | undefined) {
    this.port = port
    this.dir = dir
    this.extraArgs = extraArgs
    this.env = env
  }

  /** Starts a redis-server on a free port; retries with another port if that one was taken. */
  static async start (extraArgs: string[] = [], env?: NodeJS.ProcessEnv): Promise<RedisServer> {
    const dir = mkdtempSync(join(tmpdir(), 'lb-redis-'))
    let lastError: unknown
    for (let attempt = 0; attempt < 5; attempt++) {
      const server = new RedisServer(await freePort(), dir, extraArgs, env)
      try {
        await server.startProcess()
        return server
      } catch (err) {
        lastError = err
      }
    }
    rmSync(dir, { recursive: true, force: true })
    throw lastError
  }

  get url (): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** The running redis-server's process id (to stall it with SIGSTOP, say). */
  get pid (): number {
    if (this.#process === undefined) throw new Error('redis-server is not running')
    return this.#process.pid
  }

  async startProcess (): Promise<void> {
    this.#process = await launchRedisServer({
      port: this.port,
      dir: this.dir,
      args: ['--save', '', '--appendonly', 'no', '--dbfilename', 'dump.rdb', ...this.extraArgs],
      ...(this.env === undefined ? {} : { env: this.env })
    })
  }

  /** Stops the server: killed outright, or with its data saved to disk when `save` is true. */
  async stop ({ save = false } = {}): Promise<void> {
    const running = this.#process
    this.#process = undefined
    await (save ? running?.stopSaving() : running?.kill())
  }

  /** Stops and starts again on the same port with the same data. */
  async restart (): Promise<void> {
    await this.stop({ save: true })
    await this.startProcess()
  }

  async close (): Promise<void> {
    await this.stop()
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/** A Redis Cluster of `size` masters, each with `replicas` replicas, on free ports. */
export class RedisCluster {
  readonly nodes: RedisServer[]

  private constructor (nodes: RedisServer[]) {
    this.nodes = nodes
  }

  /** `nodeTimeoutMs` is how long a master may be unreachable before its replica takes over. */
  static async start (size = 3, { replicas = 0, nodeTimeoutMs = 2000 } = {}): Promise<RedisCluster> {
    const nodes: RedisServer[] = []
    try {
      for (let i = 0; i < size * (1 + replicas); i++) {
        nodes.push(await RedisServer.start(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(nodeTimeoutMs)]))
      }
      const create = spawnSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', String(replicas), '--cluster-yes'], { encoding: 'utf8' })
      if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`)
      const cluster = new RedisCluster(nodes)
      await cluster.waitUntilReady()
      return cluster
    } catch (err) {
      await Promise.all(nodes.map(async (n) => { await n.close() }))
      throw err
    }
  }

  get url (): string {
    return this.nodes.map((n) => n.url).join(',')
  }

  async waitUntilReady (deadlineMs = 15_000): Promise<void> {
    const start = Date.now()
    while (Date.now() - start < deadlineMs) {
      const states = this.nodes.map((n) => spawnSync('redis-cli', ['-p', String(n.port), 'cluster', 'info'], { encoding: 'utf8' }).stdout)
      if (states.every((s) => s.includes('cluster_state:ok'))) return
      await sleep(100)
    }
    throw new Error('the test cluster did not reach cluster_state:ok')
  }

  async close (): Promise<void> {
    await Promise.all(this.nodes.map(async (n) => { await n.close() }))
  }
}

/**
 * A throwaway server with the two connections most tests want: `redis`, the library's client
 * (scripts defined), and `raw`, a plain connection for reading back what was stored.
 */
export async function redisFixture (t: Test, prefix: string): Promise<{ server: RedisServer, redis: RedisClient, raw: Redis, keys: KeyBuilder }> {
  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 5000 })
  t.teardown(() => { redis.disconnect() })
  const raw = new Redis(server.url)
  t.teardown(() => { raw.disconnect() })
  return { server, redis, raw, keys: new KeyBuilder(prefix) }
}

/** Calls of `command` (lower case, as `get` or `evalsha`) the server behind `client` has served so far (INFO commandstats). */
/**
 * A connection of its own to `client`'s server, in MONITOR mode. ioredis's own monitor() fails
 * when Redis's OK to MONITOR and the first line it feeds come in one read, which a busy server
 * does at times: it takes that line for a reply ("Command queue state error") and rejects. The
 * line is of a command run before the caller's work, so it is dropped here, and the connection kept.
 */
export async function monitorOf (client: Redis): Promise<Redis> {
  const monitor = client.duplicate({ monitor: true, lazyConnect: true })
  await new Promise<void>((resolve, reject) => {
    monitor.on('error', (err: Error) => { if (!err.message.startsWith('Command queue state error')) reject(err) })
    monitor.once('monitoring', resolve)
    monitor.connect().catch(reject)
  })
  return monitor
}

export async function commandCalls (client: Redis, command: string): Promise<number> {
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(await client.info('commandstats'))?.[1] ?? 0)
}

/** The SHA of a script in src/redis/commands, as EVALSHA names it. */
export function scriptSha (name: string): string {
  const lua = scripts().find((s) => s.name === name)?.lua
  if (lua === undefined) throw new Error(`no script ${name}`)
  return createHash('sha1').update(lua).digest('hex')
}

/**
 * Runs `work`, and hands `each` every command the Redis at `redisUrl` ran meanwhile (MONITOR: its
 * words, and the client address it came from), all of them before this resolves.
 */
export async function monitored (redisUrl: string, each: (args: string[], source: string) => void, work: () => Promise<void>): Promise<void> {
  const marker = new Redis(redisUrl)
  const monitor = await monitorOf(marker)
  const end = `end of work ${process.pid} ${Date.now()}`
  const seenEnd = new Promise<void>((resolve) => {
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (args[0]?.toLowerCase() === 'echo' && args[1] === end) resolve()
      else each(args, source)
    })
  })
  try {
    await work()
    // Redis feeds MONITOR in the order it runs commands: once the marker shows, the work's have.
    await marker.echo(end)
    await seenEnd
  } finally {
    monitor.disconnect()
    marker.disconnect()
  }
}

/** Runs `work` and counts the EVALSHA calls of the script `sha` the Redis at `redisUrl` received meanwhile (MONITOR). */
export async function scriptCalls (redisUrl: string, sha: string, work: () => Promise<void>): Promise<number> {
  let calls = 0
  await monitored(redisUrl, (args) => { if (args[0]?.toLowerCase() === 'evalsha' && args[1] === sha) calls++ }, work)
  return calls
}
