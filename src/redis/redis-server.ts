// Runs a redis-server child process: the one launcher behind the demo's local Redis, the tests'
// throwaway servers and the benchmarks. It binds 127.0.0.1 only and never port 6379.
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'

export const REDIS_SERVER_NOT_FOUND =
  'redis-server was not found on PATH. Install it (Debian/Ubuntu: sudo apt-get install redis-server; ' +
  'macOS: brew install redis), set REDIS_URL to a Redis you run, or use Docker: docker compose up'

/** Where a developer's own Redis lives: never started on, and never handed out by freePort. */
export const DEFAULT_REDIS_PORT = 6379

export interface LaunchOptions {
  port: number
  /** Working directory of the server (its RDB/AOF files). Must exist. */
  dir: string
  /** More redis-server arguments, after --port, --bind and --dir. */
  args?: string[]
  /** The child's environment (default: this process's); its PATH decides which redis-server runs. */
  env?: NodeJS.ProcessEnv
  /** How long to wait for the first PONG. */
  timeoutMs?: number
  /**
   * A process group of its own: a terminal's Ctrl-C, sent to its whole foreground group, then
   * reaches the parent alone, which stops Redis once it no longer needs it (after its drain).
   */
  ownProcessGroup?: boolean
}

export interface RedisProcess {
  url: string
  port: number
  pid: number
  /** SIGTERM: Redis shuts down as SHUTDOWN does (AOF fsynced, RDB written if save points are set). */
  stop: () => Promise<void>
  /** SHUTDOWN SAVE: an RDB snapshot is written first, whatever the save points. */
  stopSaving: () => Promise<void>
  /** SIGKILL, as a crash would; nothing is flushed. */
  kill: () => Promise<void>
}

/** The port was taken (by anything) before redis-server could bind it. */
export class PortTakenError extends Error {}

const OUTPUT_LINES_KEPT = 20
/** How long an exit waits for the child's pipes to close before it is reported without its last words. */
const PIPES_CLOSE_WAIT_MS = 1000
const STOP_GRACE_MS = 10_000

// Should this process end without stopping its servers, take them down with it rather than
// leave orphans. One listener for all of them.
const running = new Set<ChildProcess>()
let exitHookInstalled = false
function killOnExit (child: ChildProcess): void {
  running.add(child)
  child.once('exit', () => { running.delete(child) })
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once('exit', () => { for (const c of running) c.kill('SIGTERM') })
}

/** Starts redis-server on `port` and resolves once that very process answers PING. */
export async function launchRedisServer (options: LaunchOptions): Promise<RedisProcess> {
  const { port, dir, args = [], env = process.env, timeoutMs = 10_000, ownProcessGroup = false } = options
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, ...args],
    { env, stdio: ['ignore', 'pipe', 'pipe'], detached: ownProcessGroup })

  // redis-server logs to stdout (a bind failure shows up there) and reports config errors on
  // stderr, so keep the tail of both for the error message. Both pipes are drained for the
  // child's whole life: a full pipe would block Redis on its next log line.
  const output: string[] = []
  const keep = (chunk: Buffer): void => {
    output.push(...chunk.toString('utf8').split('\n').filter((line) => line.trim() !== ''))
    output.splice(0, Math.max(0, output.length - OUTPUT_LINES_KEPT))
  }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)

  const pid = child.pid
  if (pid === undefined) {
    // The spawn itself failed; Node says why on the next tick.
    const err = await new Promise<NodeJS.ErrnoException>((resolve) => child.once('error', resolve))
    throw err.code === 'ENOENT' ? new Error(REDIS_SERVER_NOT_FOUND) : new Error(`could not start redis-server: ${err.message}`)
  }

  let failure: Error | undefined
  child.on('error', (err) => { failure ??= new Error(`redis-server failed: ${err.message}`) })
  child.once('exit', (code, signal) => {
    const fail = (): void => {
      const tail = output.join('\n')
      const how = signal === null ? `with code ${code ?? '?'}` : `on ${signal}`
      const message = `redis-server exited ${how} before it answered PING${tail === '' ? '' : `:\n${tail}`}`
      failure ??= /address already in use/i.test(tail) ? new PortTakenError(message) : new Error(message)
    }
    // Its last words may still be in the pipes when the exit is seen (a loaded machine): the
    // error waits for them to close, though not for long, as a child it forked could hold them.
    // Unreferenced: only a start still waiting for PING needs it, and that start keeps this process up.
    const timer = setTimeout(fail, PIPES_CLOSE_WAIT_MS).unref()
    child.once('close', () => {
      clearTimeout(timer)
      fail()
    })
  })

  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (failure !== undefined) throw failure
    if (await answersPing(port, pid)) break
    if (Date.now() > deadline) {
      await terminate(child, 'SIGTERM')
      const tail = output.join('\n')
      throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms${tail === '' ? '' : `:\n${tail}`}`)
    }
    await sleep(25)
  }

  killOnExit(child)
  let stopping: Promise<void> | undefined
  const once = (how: () => Promise<void>) => async (): Promise<void> => {
    stopping ??= how()
    await stopping
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid,
    stop: once(async () => { await terminate(child, 'SIGTERM') }),
    kill: once(async () => { await terminate(child, 'SIGKILL') }),
    stopSaving: once(async () => { await terminate(child, 'SHUTDOWN SAVE', port) })
  }
}

/** Ends the child and resolves once it has exited; SIGKILL if it hangs. */
async function terminate (child: ChildProcess, how: 'SIGTERM' | 'SIGKILL' | 'SHUTDOWN SAVE', port = 0): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => { resolve() }))
  if (how === 'SHUTDOWN SAVE') {
    const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0, retryStrategy: () => null })
    client.on('error', () => {})
    // The connection drops as Redis exits, so the command never gets its answer.
    await client.call('SHUTDOWN', 'SAVE').catch(() => {})
    client.disconnect()
  } else {
    child.kill(how)
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS)
  try {
    await exited
  } finally {
    clearTimeout(timer)
  }
}

/** True once our child answers: the process_id check rules out a Redis that beat it to the port. */
async function answersPing (port: number, pid: number): Promise<boolean> {
  const probe = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    connectTimeout: 1000,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null
  })
  probe.on('error', () => {}) // a refused connection is the expected answer until Redis is up
  try {
    await probe.connect()
    if (await probe.ping() !== 'PONG') return false
    return new RegExp(`^process_id:${pid}\\r?$`, 'm').test(await probe.info('server'))
  } catch {
    return false
  } finally {
    probe.disconnect()
  }
}

/** True when nothing listens on 127.0.0.1:`port` right now (a bind succeeds). */
export async function isPortFree (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const server = createServer()
    server.unref()
    server.once('error', () => { resolve(false) })
    server.listen(port, '127.0.0.1', () => { server.close(() => { resolve(true) }) })
  })
}

/**
 * Ports freePort picks from: below the range the OS gives outgoing connections their local ports
 * from (Linux 32768 to 60999, macOS and Windows from 49152), with a Redis Cluster node's bus port
 * (its port + 10000) below it too. A port the OS hands out for port 0 is one of those, and between
 * its release and the bind that wants it any new connection (a Redis client's) may take it.
 */
const PICKED_PORTS = { from: 10_000, to: 22_767 }

/** A port free right now, picked at random from PICKED_PORTS (the OS's own choice if none is). */
export async function freePort (): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = PICKED_PORTS.from + Math.floor(Math.random() * (PICKED_PORTS.to - PICKED_PORTS.from + 1))
    if (port !== DEFAULT_REDIS_PORT && await isPortFree(port)) return port
  }
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer()
      server.unref()
      server.on('error', reject)
      server.listen(0, '127.0.0.1', () => {
        const address = server.address()
        const port = typeof address === 'object' && address !== null ? address.port : 0
        server.close(() => { resolve(port) })
      })
    })
    if (port !== 0 && port !== DEFAULT_REDIS_PORT) return port
  }
}
