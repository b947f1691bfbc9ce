// The server process as a newcomer meets it: `npm start` without REDIS_URL runs its own
// redis-server, seeds the demo server and prints a key and a curl line that works; bad
// configuration or a missing redis-server is one clear line and exit code 1.
import t, { type Test } from 'tap'
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const SERVER = fileURLToPath(new URL('../src/server.ts', import.meta.url))
// Absolute, so the child finds tsx whatever its working directory.
const TSX = import.meta.resolve('tsx')

interface Run {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  exited: Promise<number | null>
}

function startServer (t: Test, cwd: string, env: NodeJS.ProcessEnv): Run {
  const child = spawn(process.execPath, ['--import', TSX, SERVER], {
    cwd,
    // NODE_OPTIONS carries tap's process hooks; the server runs as a user would run it. No drain
    // on SIGTERM: nothing is in flight, and test/shutdown.test.ts pins the drain.
    env: { PATH: process.env.PATH, NODE_OPTIONS: '', HOST: '127.0.0.1', PORT: '0', SHUTDOWN_DRAIN_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  let err = ''
  child.stdout?.on('data', (chunk: Buffer) => { out += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { err += chunk.toString() })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => { resolve(code) }))
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await exited
    }
  })
  return { child, stdout: () => out, stderr: () => err, exited }
}

async function waitFor (pattern: RegExp, read: () => string, exited: Promise<unknown>, ms = 60_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + ms
  let done = false
  exited.then(() => { done = true }, () => {})
  for (;;) {
    const match = pattern.exec(read())
    if (match !== null) return match
    if (done || Date.now() > deadline) throw new Error(`never printed ${pattern}; got:\n${read()}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'lb-server-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

const CURL = /curl -H 'x-api-key: (lbk_[A-Za-z0-9_-]+)' (http:\/\/127\.0\.0\.1:\d+\/api\/v1\/servers\/(\d+)\/leaderboard)/

t.test('demo mode: a local Redis, a seeded server, and a curl line that returns a leaderboard', async (t) => {
  const dir = tempDir(t)
  const first = startServer(t, dir, {})
  const [, key = '', url = '', guildId] = await waitFor(CURL, first.stdout, first.exited)
  t.match(first.stdout(), /REDIS_URL=redis:\/\/127\.0\.0\.1:\d+/, 'prints the REDIS_URL for the CLI')
  t.match(first.stdout(), /seeded/)
  const res = await fetch(url, { headers: { 'x-api-key': key } })
  t.equal(res.status, 200)
  const body = await res.json() as { data: unknown[], total: number }
  t.equal(body.data.length, 10)
  t.ok(body.total >= 100, `the demo server has ${body.total} members`)
  t.notOk(first.stdout().split('\n').some((line) => line.startsWith('{') && line.includes(key)), 'the JSON logs do not carry the key')

  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0, 'closes cleanly on SIGTERM, stopping its Redis')

  const second = startServer(t, dir, {})
  const [, key2 = '', url2 = '', guild2] = await waitFor(CURL, second.stdout, second.exited)
  t.equal(guild2, guildId)
  t.notMatch(second.stdout(), /seeded/, 'the data survived the restart: nothing is seeded again')
  const again = await (await fetch(url2, { headers: { 'x-api-key': key2 } })).json() as { total: number }
  t.equal(again.total, body.total)
  t.equal((await fetch(url2, { headers: { 'x-api-key': key } })).status, 200, 'the first key still works')
  second.child.kill('SIGTERM')
  t.equal(await second.exited, 0)
})

t.test('without redis-server on PATH the demo says how to get one', async (t) => {
  const dir = tempDir(t)
  const run = startServer(t, dir, { PATH: dir })
  t.equal(await run.exited, 1)
  t.match(run.stderr(), /^error: redis-server was not found on PATH\. Install it .*docker compose up\n$/)
})

t.test('a bad configuration stops the start with one clear line', async (t) => {
  const run = startServer(t, tempDir(t), { PORT: 'abc', REDIS_URL: 'redis://127.0.0.1:1' })
  t.equal(await run.exited, 1)
  t.equal(run.stderr(), 'error: invalid configuration: PORT must be integer\n')
})
