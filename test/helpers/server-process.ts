// The built server as users run it (`npm start` runs dist/server.js): a child process with the
// environment given here, not this process's (NODE_OPTIONS would carry tap's hooks), its output
// kept, and stopped in teardown.
import type { Test } from 'tap'
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { built } from './built.js'

export const SERVER = built('server.js')

/** The demo banner's curl line: its key, the leaderboard's URL and the demo server's id. */
export const DEMO_CURL = /curl -H 'x-api-key: (lbk_[A-Za-z0-9_-]+)' (http:\/\/127\.0\.0\.1:\d+\/api\/v1\/servers\/(\d+)\/leaderboard)/

export interface ServerProcess {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>
  /** The first match of `pattern` in its stdout once printed; throws if it exits first. */
  waitFor: (pattern: RegExp) => Promise<RegExpExecArray>
  /** Sends `signal` as a terminal's Ctrl-C does: to its whole process group (with `processGroup`). */
  signal: (signal: NodeJS.Signals) => void
}

export interface ServerOptions {
  /** Its working directory (a demo keeps ./.data there): a new temporary one by default. */
  cwd?: string
  /** Added to the environment: PATH, HOST=127.0.0.1, PORT=0 and SHUTDOWN_DRAIN_MS=0 (no drain) unless given. */
  env?: NodeJS.ProcessEnv
  /** A process group of its own, as a shell gives a command run in a terminal. */
  processGroup?: boolean
}

/** A temporary directory, removed in teardown. */
export function tempDir (t: Test, prefix = 'lb-server-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

export function startServer (t: Test, options: ServerOptions = {}): ServerProcess {
  const { cwd = tempDir(t), env = {}, processGroup = false } = options
  const child = spawn(process.execPath, [SERVER], {
    cwd,
    env: { PATH: process.env.PATH, NODE_OPTIONS: '', HOST: '127.0.0.1', PORT: '0', SHUTDOWN_DRAIN_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: processGroup
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
  let done = false
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => { done = true; resolve(code) }))
  const signal = (name: NodeJS.Signals): void => {
    if (processGroup && child.pid !== undefined) process.kill(-child.pid, name)
    else child.kill(name)
  }
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      signal('SIGTERM')
      await exited
    }
  })
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    signal,
    waitFor: async (pattern) => {
      for (;;) {
        const match = pattern.exec(out)
        if (match !== null) return match
        if (done) throw new Error(`exited without printing ${pattern}; stdout:\n${out}\nstderr:\n${err}`)
        await sleep(50)
      }
    }
  }
}
