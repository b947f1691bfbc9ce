// A redis-server child process for `npm start` without REDIS_URL: the newcomer's demo runs with
// no Redis of their own, and its data survives restarts (AOF under ./.data). It comes back on
// the port it had before when it can, so a REDIS_URL printed earlier keeps working.
import { mkdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  DEFAULT_REDIS_PORT, freePort, isPortFree, launchRedisServer, PortTakenError, type RedisProcess
} from '../redis/redis-server.js'

export interface LocalRedisOptions {
  /** Where Redis keeps its AOF files; created if missing. */
  dir?: string
  /** The port to come back on (the one used last time); another is picked if it is taken. */
  port?: number
  log?: { info: (message: string) => void }
  /** The child's environment (default: this process's); its PATH decides which redis-server runs. */
  env?: NodeJS.ProcessEnv
  /** More redis-server arguments, appended after ours. */
  extraArgs?: string[]
  /** How long to wait for the first PONG. */
  timeoutMs?: number
}

export interface LocalRedis extends RedisProcess {
  /** The port asked for with `port`, when it was taken and another was used instead. */
  portTaken?: number
}

/** Written by redis-server in the data directory, so a later start can find an orphan. */
const PID_FILE = 'redis.pid'
const PORT_ATTEMPTS = 3
const STOP_GRACE_MS = 10_000

export async function startLocalRedis (options: LocalRedisOptions = {}): Promise<LocalRedis> {
  const { dir = '.data', log, env = process.env, extraArgs = [], timeoutMs = 10_000 } = options
  const dataDir = resolve(dir)
  mkdirSync(dataDir, { recursive: true })
  await stopOrphan(join(dataDir, PID_FILE), log)
  const args = ['--appendonly', 'yes', '--save', '', '--loglevel', 'warning', '--pidfile', join(dataDir, PID_FILE), ...extraArgs]
  const wanted = options.port !== undefined && options.port !== DEFAULT_REDIS_PORT ? options.port : undefined
  let portTaken: number | undefined
  let next = wanted
  if (next !== undefined && !await isPortFree(next)) {
    portTaken = next
    next = undefined
  }
  for (let attempt = 1; ; attempt++) {
    const port = next ?? await freePort()
    try {
      // Its own process group: Ctrl-C stops the service, which stops Redis after its drain.
      const redis = await launchRedisServer({ port, dir: dataDir, args, env, timeoutMs, ownProcessGroup: true })
      log?.info(`started a local redis-server (pid ${redis.pid}) on ${redis.url}, data in ${dataDir}`)
      return portTaken === undefined ? redis : { ...redis, portTaken }
    } catch (err) {
      // Between our check and redis-server binding, someone else may take the port.
      if (!(err instanceof PortTakenError) || attempt >= PORT_ATTEMPTS) throw err
      if (port === wanted) portTaken = wanted
      next = undefined
    }
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
