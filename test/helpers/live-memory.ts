// The app in a process of its own (./live-memory-child.ts), for tests of what open streams cost
// the service's memory: what it measures is the service's alone, its clients being the test's.
import type { Test } from 'tap'
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export interface Measure {
  /** The heap and the Buffers held after full collections. */
  held: number
  rss: number
}

/** Starts the app on `socketPath` (Redis at `redisUrl`, keys under `prefix`); resolves once it listens, with its measure. */
export async function startMemoryChild (t: Test, redisUrl: string, prefix: string, socketPath: string): Promise<() => Promise<Measure>> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/helpers/live-memory-child.ts', redisUrl, prefix, socketPath], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: { ...process.env, NODE_OPTIONS: '' }, // not tap's process-tracking hook
    stdio: ['pipe', 'pipe', 'inherit']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const ready = (await lines.next()).value as string | undefined
  if (ready !== 'ready') throw new Error(`the memory child did not start: ${String(ready)}`)
  return async () => {
    child.stdin.write('memory\n')
    return JSON.parse((await lines.next()).value as string) as Measure
  }
}
