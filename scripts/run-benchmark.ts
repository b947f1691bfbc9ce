// The harness every benchmark script shares: runs `main` with a list of clean-up steps and
// runs them (newest first) whatever happens, on Ctrl-C too, so no Redis is left behind.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { type Agent, request } from 'node:http'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { startLocalRedis } from '../src/demo/local-redis.js'
import { createRedis, type RedisClient } from '../src/redis/client.js'

export type Cleanups = Array<() => Promise<void>>

/** Node's arguments for the built service as `npm start` runs it (its V8 options, then dist/server.js). */
export function serviceArgv (): string[] {
  const { scripts } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }
  const [node, ...argv] = scripts.start.split(/\s+/)
  if (node !== 'node' || argv.at(-1) !== 'dist/server.js') throw new Error(`npm start is not "node [options] dist/server.js": ${scripts.start}`)
  return argv
}

export async function runBenchmark (main: (cleanups: Cleanups) => Promise<void>): Promise<void> {
  const cleanups: Cleanups = []
  const cleanUp = async (): Promise<void> => {
    for (const step of cleanups.splice(0).reverse()) {
      try { await step() } catch (err) { console.error('cleanup failed:', err) }
    }
  }
  process.once('SIGINT', () => { cleanUp().finally(() => process.exit(130)).catch(() => {}) })
  try {
    await main(cleanups)
  } catch (err) {
    console.error(err)
    process.exitCode = 1
  } finally {
    await cleanUp()
  }
}

/** Starts a node child process and resolves once `url` answers 200. */
export async function startProcess (cleanups: Cleanups, argv: string[], env: NodeJS.ProcessEnv, url: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  cleanups.push(async () => {
    if (child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await Promise.race([exited, sleep(15_000)])
    child.kill('SIGKILL')
  })
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`${argv.join(' ')} exited with ${child.exitCode}`)
    const ok = await fetch(url).then((r) => r.ok, () => false)
    if (ok) return child
    await sleep(100)
  }
  throw new Error(`${url} did not answer in 30 s`)
}

/** Redis's main-thread CPU so far (INFO cpu, user + sys), µs: the difference over a run is its Redis cost. */
export async function redisCpuUs (redis: RedisClient): Promise<number> {
  const info = await redis.info('cpu')
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN)
  return (field('used_cpu_user_main_thread') + field('used_cpu_sys_main_thread')) * 1e6
}

/** A process's CPU so far (user + system), ms, from /proc (Linux; NaN elsewhere). */
export function processCpuMs (pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
    return (Number(fields[11]) + Number(fields[12])) * 10 // clock ticks of 10 ms
  } catch {
    return NaN
  }
}

/** One POST of a JSON body with a bearer token on `agent`: the status, the body, and the time it took, ms. */
export async function postJson (agent: Agent, port: number, path: string, token: string, body: string): Promise<{ status: number, ms: number, text: string }> {
  const started = performance.now()
  return await new Promise((resolve, reject) => {
    const req = request({
      agent,
      host: '127.0.0.1',
      port,
      path,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
    }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.once('end', () => { resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, text: Buffer.concat(chunks).toString('utf8') }) })
    })
    req.once('error', reject)
    req.end(body)
  })
}

/**
 * A redis-server of the bench's own (AOF on, in a temporary directory) and a client of it, both
 * cleaned up; prints the machine's line (cores, Node, Redis, load average) under `name`.
 */
export async function benchRedis (cleanups: Cleanups, name: string): Promise<{ url: string, redis: RedisClient }> {
  const dir = mkdtempSync(join(tmpdir(), `bench-${name.replace(/\W+/g, '-')}-`))
  cleanups.push(async () => { rmSync(dir, { recursive: true, force: true }) })
  const server = await startLocalRedis({ dir })
  cleanups.push(server.stop)
  const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 60_000 })
  cleanups.push(async () => { redis.disconnect() })
  const version = /^redis_version:(\S+)/m.exec(await redis.info('server'))?.[1] ?? '?'
  console.log(`${name}: cores ${availableParallelism()}  node ${process.version}  redis ${version}  load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  return { url: server.url, redis }
}

/** A commit's src/ (and package.json), extracted from git into a temporary directory beside a link to this checkout's node_modules: another version of the library to load beside this one. */
export function extractCommit (cleanups: Cleanups, commit: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'bench-commit-'))
  cleanups.push(async () => { rmSync(dir, { recursive: true, force: true }) })
  execFileSync('sh', ['-c', `git archive ${commit} src package.json | tar -x -C ${dir}`])
  symlinkSync(resolve('node_modules'), join(dir, 'node_modules'))
  return dir
}
