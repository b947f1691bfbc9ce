// What demo mode remembers between starts, in <data dir>/demo.json: the local Redis's port, so a
// REDIS_URL printed earlier keeps working, and the demo API key, so a start does not mint one more
// never-expiring key. The file holds a key in plaintext, so only its owner may read it (0600).
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const DEMO_STATE_FILE = 'demo.json'

export interface DemoState {
  redisPort?: number
  apiKey?: string
}

export function demoStatePath (dir: string): string {
  return join(dir, DEMO_STATE_FILE)
}

/** The remembered state; anything missing, unreadable or malformed is simply not remembered. */
export function readDemoState (dir: string): DemoState {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(demoStatePath(dir), 'utf8'))
  } catch {
    return {}
  }
  if (typeof parsed !== 'object' || parsed === null) return {}
  const { redisPort, apiKey } = parsed as Record<string, unknown>
  const state: DemoState = {}
  if (Number.isInteger(redisPort) && (redisPort as number) > 0 && (redisPort as number) < 65536) state.redisPort = redisPort as number
  if (typeof apiKey === 'string' && apiKey !== '') state.apiKey = apiKey
  return state
}

/** Replaces the file whole (a crash leaves the old one or the new one), readable by its owner only. */
export function writeDemoState (dir: string, state: DemoState): void {
  mkdirSync(dir, { recursive: true })
  const path = demoStatePath(dir)
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 })
  chmodSync(temporary, 0o600) // `mode` applies only to a new file, and through the umask
  renameSync(temporary, path)
}
