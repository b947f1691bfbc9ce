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
import { freePort } from '../../src/redis/redis-server.js'

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

/**
 * Starts the server with a free port for each variable of `names` (PORT, ADMIN_PORT, METRICS_PORT)
 * and waits until it listens on all of them. A port is free when picked, not when the server
 * binds it seconds later, and tests beside this one pick ports too: when one was taken meanwhile
 * (the start fails with EADDRINUSE), the server is started again on others, as RedisServer.start
 * does for its own port.
 */
export async function startServerOnFreePorts<K extends string> (t: Test, names: readonly K[], options: ServerOptions = {}):
Promise<{ run: ServerProcess, ports: Record<K, number> }> {
  for (let attempt = 1; ; attempt++) {
    const ports: Partial<Record<K, number>> = {}
    for (const name of names) {
      let port = await freePort()
      while (Object.values(ports).includes(port)) port = await freePort()
      ports[name] = port
    }
    const picked = ports as Record<K, number>
    const env = { ...options.env, ...Object.fromEntries(names.map((name) => [name, String(picked[name])])) }
    const run = startServer(t, { ...options, env })
    try {
      for (const name of names) {
        const port = picked[name]
        await run.waitFor(name === 'METRICS_PORT' ? new RegExp(`"port":${port},"msg":"metrics served`) : new RegExp(`listening at http://127\\.0\\.0\\.1:${port}\\b`))
      }
      return { run, ports: picked }
    } catch (err) {
      // The whole of its stderr, which may come after its exit.
      if (run.child.stderr !== null && !run.child.stderr.readableEnded) await new Promise((resolve) => run.child.stderr?.once('end', resolve))
      if (attempt < 5 && run.stderr().includes('EADDRINUSE')) continue
      throw err
    }
  }
}
