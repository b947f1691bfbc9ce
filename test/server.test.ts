// The server process as a newcomer meets it: `npm start` without REDIS_URL runs its own
// redis-server, seeds the demo server and prints a key and a curl line that works; bad
// configuration or a missing redis-server is one clear line and exit code 1.
import t, { type Test } from 'tap'
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRedis } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'
import { built } from './helpers/built.js'
import { RedisServer } from './helpers/redis-server.js'
import { TokenStore } from '../src/tokens/token-store.js'
import { freePort } from '../src/redis/redis-server.js'

const SERVER = built('server.js')

// The tests run side by side: each server process has a directory, ports and (demo or not) a
// redis-server of its own, and an environment given here, not this process's. At most four at
// once: starting (and seeding) a server is mostly CPU, and there are two cores.
t.jobs = 4

interface Run {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  exited: Promise<number | null>
}

function startServer (t: Test, cwd: string, env: NodeJS.ProcessEnv): Run {
  const child = spawn(process.execPath, [SERVER], {
    cwd,
    // NODE_OPTIONS carries tap's process hooks; the server runs as a user would run it. No drain
    // on SIGTERM: nothing is in flight, and test/shutdown.test.ts pins the drain. No shedding by
    // event-loop delay: on a busy machine a process that has just started and seeded can lag past
    // the threshold for a while, and these tests are about the start, not about load
    // (test/load-shedding.test.ts pins that).
    env: { PATH: process.env.PATH, NODE_OPTIONS: '', HOST: '127.0.0.1', PORT: '0', SHUTDOWN_DRAIN_MS: '0', MAX_EVENT_LOOP_DELAY_MS: '0', ...env },
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

const REDIS_URL = /REDIS_URL=(redis:\/\/127\.0\.0\.1:(\d+))/
const CURL = /curl -H 'x-api-key: (lbk_[A-Za-z0-9_-]+)' (http:\/\/127\.0\.0\.1:\d+\/api\/v1\/servers\/(\d+)\/leaderboard)/

t.test('demo mode: a local Redis, a seeded server, and a curl line that returns a leaderboard; the key and the port are kept', async (t) => {
  const dir = tempDir(t)
  const first = startServer(t, dir, {})
  const [, key = '', url = '', guildId = ''] = await waitFor(CURL, first.stdout, first.exited)
  const [, redisUrl = '', redisPort = ''] = REDIS_URL.exec(first.stdout()) ?? []
  t.ok(redisUrl !== '', 'prints the REDIS_URL for the CLI')
  t.match(first.stdout(), /seeded; a new demo API key \(kept in \.data\/demo\.json\)/)
  const res = await fetch(url, { headers: { 'x-api-key': key } })
  t.equal(res.status, 200)
  const body = await res.json() as { data: unknown[], total: number }
  t.equal(body.data.length, 10)
  t.ok(body.total >= 100, `the demo server has ${body.total} members`)
  t.notOk(first.stdout().split('\n').some((line) => line.startsWith('{') && line.includes(key)), 'the JSON logs do not carry the key')
  const stateFile = join(dir, '.data', 'demo.json')
  t.same(JSON.parse(readFileSync(stateFile, 'utf8')), { redisPort: Number(redisPort), apiKey: key }, '.data/demo.json keeps the port and the key')
  t.equal(statSync(stateFile).mode & 0o777, 0o600, 'readable by its owner only')

  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0, 'closes cleanly on SIGTERM, stopping its Redis')

  const second = startServer(t, dir, {})
  const [, key2 = '', url2 = '', guild2] = await waitFor(CURL, second.stdout, second.exited)
  t.equal(guild2, guildId)
  t.notMatch(second.stdout(), /seeded/, 'the data survived the restart: nothing is seeded again')
  t.equal(key2, key, 'the same key, not one more never-expiring key')
  t.match(second.stdout(), /; the demo API key \(kept in/)
  t.equal(REDIS_URL.exec(second.stdout())?.[1], redisUrl, 'the same REDIS_URL as before')
  t.notMatch(second.stdout(), /is taken/)
  const again = await (await fetch(url2, { headers: { 'x-api-key': key2 } })).json() as { total: number }
  t.equal(again.total, body.total)
  const redis = createRedis({ url: redisUrl, offlineQueue: true })
  t.teardown(() => { redis.disconnect() })
  t.same((await new ApiKeyStore(redis, new KeyBuilder()).list(guildId)).map((info) => info.name), ['demo'], 'still one demo key in Redis')
  redis.disconnect()
  second.child.kill('SIGTERM')
  t.equal(await second.exited, 0)

  // While the demo is down, something else takes its Redis port.
  const squatter = createServer()
  await new Promise<void>((resolve) => squatter.listen(Number(redisPort), '127.0.0.1', resolve))
  t.teardown(() => { squatter.close() })
  const third = startServer(t, dir, {})
  const [, key3 = '', url3 = ''] = await waitFor(CURL, third.stdout, third.exited)
  const movedTo = REDIS_URL.exec(third.stdout())?.[2] ?? ''
  t.not(movedTo, redisPort, 'another port')
  t.match(third.stdout(), `Port ${redisPort}, the local Redis's port last time, is taken: it now listens on ${movedTo}, so REDIS_URL has changed.`)
  t.equal(key3, key, 'the key is still the same')
  t.equal((await fetch(url3, { headers: { 'x-api-key': key } })).status, 200, 'and works')
  t.equal((JSON.parse(readFileSync(stateFile, 'utf8')) as { redisPort: number }).redisPort, Number(movedTo), 'the new port is remembered')
  third.child.kill('SIGTERM')
  t.equal(await third.exited, 0)
})

t.test('demo mode replaces a remembered key that was revoked, and says so', async (t) => {
  const dir = tempDir(t)
  const first = startServer(t, dir, {})
  const [, key = '', , guildId = ''] = await waitFor(CURL, first.stdout, first.exited)
  const redisUrl = REDIS_URL.exec(first.stdout())?.[1] ?? ''
  const redis = createRedis({ url: redisUrl, offlineQueue: true })
  t.teardown(() => { redis.disconnect() })
  const store = new ApiKeyStore(redis, new KeyBuilder())
  const [demoKey] = await store.list(guildId)
  await store.revoke(demoKey?.id ?? '')
  redis.disconnect()
  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0)

  const second = startServer(t, dir, {})
  const [, key2 = '', url2 = ''] = await waitFor(CURL, second.stdout, second.exited)
  t.not(key2, key, 'a new key')
  t.match(second.stdout(), '(the key kept from last time was revoked, so a new one was made)')
  t.equal((await fetch(url2, { headers: { 'x-api-key': key2 } })).status, 200)
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

t.test('a port taken for METRICS_PORT stops the start with one line that names METRICS_PORT and its port, not the API\'s', async (t) => {
  const redis = await RedisServer.start()
  t.teardown(async () => { await redis.close() })
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { taken.close() })
  const port = (taken.address() as { port: number }).port
  const run = startServer(t, tempDir(t), { REDIS_URL: redis.url, METRICS_PORT: String(port), LOG_LEVEL: 'silent' })
  t.equal(await run.exited, 1)
  t.match(run.stderr(), new RegExp(`^error: cannot listen on 127\\.0\\.0\\.1:${port} for metrics \\(METRICS_PORT\\): listen EADDRINUSE[^\\n]*\\n$`))
})

t.test('with ADMIN_PORT the process serves the write API there (and only there), logs and measures its requests, and both listeners close on SIGTERM', async (t) => {
  const redis = await RedisServer.start()
  t.teardown(async () => { await redis.close() })
  const [port, adminPort, metricsPort] = [await freePort(), await freePort(), await freePort()]
  const run = startServer(t, tempDir(t), { REDIS_URL: redis.url, PORT: String(port), ADMIN_PORT: String(adminPort), METRICS_PORT: String(metricsPort), LOG_LEVEL: 'info' })
  const client = createRedis({ url: redis.url, offlineQueue: true })
  t.teardown(() => { client.disconnect() })
  const { id: tokenId, token } = await new TokenStore(client, new KeyBuilder()).create({ name: 'server test', scopes: ['write'] })
  await waitFor(new RegExp(`listening at http://127\\.0\\.0\\.1:${adminPort}`), run.stdout, run.exited)
  const award = async (at: number) => await fetch(`http://127.0.0.1:${at}/admin/v1/servers/1/awards`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-request-id': `award-${at}` }, body: '{"awards":[{"user_id":"2","xp":5}]}'
  })
  t.equal((await award(adminPort)).status, 200)
  t.equal((await award(port)).status, 404, 'not on the public port')

  const lines = (): Array<Record<string, unknown>> => run.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
  await waitFor(new RegExp(`"reqId":"award-${adminPort}"`), run.stdout, run.exited)
  t.match(lines().find((l) => l.reqId === `award-${adminPort}`), { route: '/admin/v1/servers/:guild_id/awards', statusCode: 200, guild: '1', tokenId },
    "the write's line carries its token's id")
  t.notOk(run.stdout().includes(token.slice(4)), 'the token is never logged')
  const started = lines().filter((l) => l.ioredisGcFix !== undefined)
  t.same(started.map((l) => l.ioredisGcFix), [{ applied: true, ioredisVersion: '5.11.1' }], 'one line at start: the ioredis young-collection fix applied')

  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  t.match(metrics, /^http_request_duration_seconds_count\{method="POST",route="\/admin\/v1\/servers\/:guild_id\/awards",status_code="200"\} 1$/m,
    'the write has its series in http_request_duration_seconds')
  run.child.kill('SIGTERM')
  t.equal(await run.exited, 0)
})

t.test('a port taken for ADMIN_PORT stops the start with one line that names ADMIN_PORT', async (t) => {
  const redis = await RedisServer.start()
  t.teardown(async () => { await redis.close() })
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { taken.close() })
  const port = (taken.address() as { port: number }).port
  const run = startServer(t, tempDir(t), { REDIS_URL: redis.url, ADMIN_PORT: String(port), LOG_LEVEL: 'silent' })
  t.equal(await run.exited, 1)
  t.match(run.stderr(), new RegExp(`^error: cannot listen on 127\\.0\\.0\\.1:${port} \\(ADMIN_PORT\\): listen EADDRINUSE`))
})
