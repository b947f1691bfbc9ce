// The harness every benchmark script shares: runs `main` with a list of clean-up steps and
// runs them (newest first) whatever happens, on Ctrl-C too, so no Redis is left behind.
import { type ChildProcess, spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import type { RedisClient } from '../src/redis/client.js'

export type Cleanups = Array<() => Promise<void>>

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
