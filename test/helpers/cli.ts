// The CLI as a user runs it: a child process (`node dist/cli/main.js`, built by ./built.ts)
// against a given Redis, with what it printed and its exit code. Each run costs about half a
// second of CPU, nearly all of it starting up, so tests run them side by side, but at most
// `atOnce` start together: more only make each one slower to start on two cores.
import { type ChildProcess, spawn } from 'node:child_process'
import type { Test } from 'tap'
import { built, ROOT } from './built.js'

export interface CliRun { code: number | null, stdout: string, stderr: string }

/** `input`, when given, is the child's standard input; otherwise it has none. */
export type Cli = (args: string[], env?: Record<string, string>, input?: string) => Promise<CliRun>

/** A runner for `t`'s tests: every child still running is killed in `t`'s teardown. */
export function cliRunner (t: Test, baseEnv: Record<string, string>, atOnce = 3): Cli {
  const children = new Set<ChildProcess>()
  t.teardown(() => { for (const child of children) child.kill('SIGKILL') })
  let running = 0
  const waiting: Array<() => void> = []

  const run = async (args: string[], env: Record<string, string>, input: string | undefined): Promise<CliRun> => {
    const child = spawn(process.execPath, [built('cli/main.js'), ...args], {
      cwd: ROOT,
      // NODE_OPTIONS carries tap's process-tracking hook, which only slows each start further.
      env: { ...process.env, NODE_OPTIONS: '', ...baseEnv, ...env },
      stdio: 'pipe'
    })
    children.add(child)
    child.stdin.end(input) // without input, standard input is empty
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
    const timer = setTimeout(() => { child.kill('SIGKILL') }, 60_000)
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
    clearTimeout(timer)
    children.delete(child)
    return { code, stdout, stderr }
  }

  return async (args, env = {}, input) => {
    if (running >= atOnce) await new Promise<void>((resolve) => waiting.push(resolve))
    running++
    try {
      return await run(args, env, input)
    } finally {
      running--
      waiting.shift()?.()
    }
  }
}

export const lines = (text: string): string[] => text.split('\n').filter((line) => line !== '')
