// A redis-server child process for `npm start` without REDIS_URL: the newcomer's demo runs with
// no Redis of their own, and its data survives restarts (AOF under ./.data).
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'

export const REDIS_SERVER_NOT_FOUND =
  'redis-server was not found on PATH. Install it (Debian/Ubuntu: sudo apt-get install redis-server; ' +
  'macOS: brew install redis), set REDIS_URL to a Redis you run, or use Docker: docker compose up'

export interface LocalRedisOptions {
  /** Where Redis keeps its AOF files; created if missing. */
  dir?: string
  log?: { info: (message: string) => void }
  /** The child's environment (default: this process's); its PATH decides which redis-server runs. */
  env?: NodeJS.ProcessEnv
  /** More redis-server arguments, appended after ours. */
  extraArgs?: string[]
  /** How long to wait for the first PONG. */
  timeoutMs?: number
}

export interface LocalRedis {
  url: string
  port: number
  pid: number
  /** Shuts Redis down cleanly (it fsyncs the AOF) and resolves once the process has exited. */
  stop: () => Promise<void>
}

const OUTPUT_LINES_KEPT = 20
/** Written by redis-server in the data directory, so a later start can find an orphan. */
const PID_FILE = 'redis.pid'
const PORT_ATTEMPTS = 3
const STOP_GRACE_MS = 10_000

/** Raised when the port we picked was taken before redis-server could bind it. */
class PortTakenError extends Error {}

export async function startLocalRedis (options: LocalRedisOptions = {}): Promise<LocalRedis> {
  const { dir = '.data', log, env = process.env, extraArgs = [], timeoutMs = 10_000 } = options
  const dataDir = resolve(dir)
  mkdirSync(dataDir, { recursive: true })
  await stopOrphan(join(dataDir, PID_FILE), log)
  for (let attempt = 1; ; attempt++) {
    try {
      const redis = await launch(await freePort(), dataDir, env, extraArgs, timeoutMs)
      log?.info(`started a local redis-server (pid ${redis.pid}) on ${redis.url}, data in ${dataDir}`)
      return redis
    } catch (err) {
      // Between closing our probe socket and redis-server binding, someone else may take the port.
      if (err instanceof PortTakenError && attempt < PORT_ATTEMPTS) continue
      throw err
    }
  }
}

async function launch (port: number, dataDir: string, env: NodeJS.ProcessEnv, extraArgs: string[], timeoutMs: number): Promise<LocalRedis> {
  const child = spawn('redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dataDir,
    '--appendonly', 'yes', '--save', '', '--loglevel', 'warning',
    '--pidfile', join(dataDir, PID_FILE), ...extraArgs
  ], { env, stdio: ['ignore', 'pipe', 'pipe'] })

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
    const tail = output.join('\n')
    const how = signal === null ? `with code ${code ?? '?'}` : `on ${signal}`
    const message = `redis-server exited ${how} before it answered PING${tail === '' ? '' : `:\n${tail}`}`
    failure ??= /address already in use/i.test(tail) ? new PortTakenError(message) : new Error(message)
  })

  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (failure !== undefined) throw failure
    if (await answersPing(port, pid)) break
    if (Date.now() > deadline) {
      await terminate(child)
      const tail = output.join('\n')
      throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms${tail === '' ? '' : `:\n${tail}`}`)
    }
    await sleep(50)
  }

  // Should this process end without calling stop(), still take Redis down with it rather than
  // leave an orphan holding the data directory.
  const killOnExit = (): void => { child.kill('SIGTERM') }
  process.once('exit', killOnExit)
  let stopping: Promise<void> | undefined
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid,
    stop: async () => {
      process.off('exit', killOnExit)
      stopping ??= terminate(child)
      await stopping
    }
  }
}

/** SIGTERM makes Redis shut down as SHUTDOWN does (AOF flushed and fsynced); SIGKILL only if it hangs. */
async function terminate (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => { resolve() }))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS)
  try {
    await exited
  } finally {
    clearTimeout(timer)
  }
}

/**
 * A demo redis-server whose parent was killed outright (no stop()) keeps running on the data
 * directory; a second one there would fight it over the AOF. Stop it first: only when the pid
 * file names a live redis-server (checked in /proc where there is one), never anything else.
 */
async function stopOrphan (pidFile: string, log: LocalRedisOptions['log']): Promise<void> {
  let pid: number
  try {
    pid = Number(readFileSync(pidFile, 'utf8').trim())
  } catch {
    return
  }
  if (!Number.isSafeInteger(pid) || pid <= 1 || !isRedisServer(pid)) return
  log?.info(`stopping redis-server ${pid}, left running on this data directory by an earlier start`)
  process.kill(pid, 'SIGTERM')
  const deadline = Date.now() + STOP_GRACE_MS
  while (isRedisServer(pid) && Date.now() < deadline) await sleep(50)
}

function isRedisServer (pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('redis-server')
  } catch {
    return false // no /proc (macOS): a pid alone is not proof enough to stop a process
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

/** A port the OS considers free right now: bind port 0, read what we got, let it go. */
export async function freePort (): Promise<number> {
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
    // 6379 is where a developer's own Redis lives; never start next to (or on top of) it.
    if (port !== 0 && port !== 6379) return port
  }
}
