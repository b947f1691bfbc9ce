// The server process as a newcomer meets it: `npm start` without REDIS_URL runs its own
// redis-server, seeds the demo server and prints a key and a curl line that works; bad
// configuration or a missing redis-server is one clear line and exit code 1.
import t from 'tap'
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { createRedis } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'
import { monitored, RedisServer } from './helpers/redis-server.js'
import { API_CONNECTION_NAME } from '../src/app.js'
import { WRITE_API_CONNECTION_NAME } from '../src/admin/admin-app.js'
import { CLOSE_CONNECTION_NAME } from '../src/plugins/calendar-ticker.js'
import { WEBHOOKS_CONNECTION_NAME } from '../src/plugins/webhooks.js'
import { DEMO_CURL as CURL, startServer, startServerOnFreePorts, tempDir } from './helpers/server-process.js'
import { TokenStore } from '../src/tokens/token-store.js'
import { freePort, isPortFree } from '../src/redis/redis-server.js'
import { setTimeout as sleep } from 'node:timers/promises'

// The tests run side by side: each server process has a directory, ports and (demo or not) a
// redis-server of its own. At most four at once: starting (and seeding) a server is mostly CPU,
// and there are two cores.
t.jobs = 4

const REDIS_URL = /REDIS_URL=(redis:\/\/127\.0\.0\.1:(\d+))/

t.test('demo mode: a local Redis, a seeded server, and a curl line that returns a leaderboard; the key and the port are kept', async (t) => {
  const dir = tempDir(t)
  const first = startServer(t, { cwd: dir })
  const [, key = '', url = '', guildId = ''] = await first.waitFor(CURL)
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

  const second = startServer(t, { cwd: dir })
  const [, key2 = '', url2 = '', guild2] = await second.waitFor(CURL)
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
  const third = startServer(t, { cwd: dir })
  const [, key3 = '', url3 = ''] = await third.waitFor(CURL)
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
  const first = startServer(t, { cwd: dir })
  const [, key = '', , guildId = ''] = await first.waitFor(CURL)
  const redisUrl = REDIS_URL.exec(first.stdout())?.[1] ?? ''
  const redis = createRedis({ url: redisUrl, offlineQueue: true })
  t.teardown(() => { redis.disconnect() })
  const store = new ApiKeyStore(redis, new KeyBuilder())
  const [demoKey] = await store.list(guildId)
  await store.revoke(demoKey?.id ?? '')
  redis.disconnect()
  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0)

  const second = startServer(t, { cwd: dir })
  const [, key2 = '', url2 = ''] = await second.waitFor(CURL)
  t.not(key2, key, 'a new key')
  t.match(second.stdout(), '(the key kept from last time was revoked, so a new one was made)')
  t.equal((await fetch(url2, { headers: { 'x-api-key': key2 } })).status, 200)
  second.child.kill('SIGTERM')
  t.equal(await second.exited, 0)
})

t.test('without redis-server on PATH the demo says how to get one', async (t) => {
  const dir = tempDir(t)
  const run = startServer(t, { cwd: dir, env: { PATH: dir } })
  t.equal(await run.exited, 1)
  t.match(run.stderr(), /^error: redis-server was not found on PATH\. Install it .*docker compose up\n$/)
})

t.test('a bad configuration stops the start with one clear line', async (t) => {
  const run = startServer(t, { env: { PORT: 'abc', REDIS_URL: 'redis://127.0.0.1:1' } })
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
  const run = startServer(t, { env: { REDIS_URL: redis.url, METRICS_PORT: String(port), LOG_LEVEL: 'silent' } })
  t.equal(await run.exited, 1)
  t.match(run.stderr(), new RegExp(`^error: cannot listen on 127\\.0\\.0\\.1:${port} for metrics \\(METRICS_PORT\\): listen EADDRINUSE[^\\n]*\\n$`))
})

t.test('with ADMIN_PORT the process serves the write API there (and only there), logs and measures its requests, and both listeners close on SIGTERM', async (t) => {
  const redis = await RedisServer.start()
  t.teardown(async () => { await redis.close() })
  const { run, ports: { PORT: port, ADMIN_PORT: adminPort, METRICS_PORT: metricsPort } } =
    await startServerOnFreePorts(t, ['PORT', 'ADMIN_PORT', 'METRICS_PORT'], { env: { REDIS_URL: redis.url, LOG_LEVEL: 'info' } })
  const client = createRedis({ url: redis.url, offlineQueue: true })
  t.teardown(() => { client.disconnect() })
  const { id: tokenId, token } = await new TokenStore(client, new KeyBuilder()).create({ name: 'server test', scopes: ['write'] })
  const award = async (at: number) => await fetch(`http://127.0.0.1:${at}/admin/v1/servers/1/awards`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-request-id': `award-${at}` }, body: '{"awards":[{"user_id":"2","xp":5}]}'
  })
  t.equal((await award(adminPort)).status, 200)
  t.equal((await award(port)).status, 404, 'not on the public port')

  const lines = (): Array<Record<string, unknown>> => run.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
  await run.waitFor(new RegExp(`"reqId":"award-${adminPort}"`))
  t.match(lines().find((l) => l.reqId === `award-${adminPort}`), { route: '/admin/v1/servers/:guild_id/awards', statusCode: 200, guild: '1', tokenId },
    "the write's line carries its token's id")
  t.notOk(run.stdout().includes(token.slice(4)), 'the token is never logged')
  const started = lines().filter((l) => l.ioredisGcFix !== undefined)
  t.same(started.map((l) => l.ioredisGcFix), [{ applied: true, ioredisVersion: '5.11.1' }], 'one line at start: the ioredis young-collection fix applied')

  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  t.match(metrics, /^http_request_duration_seconds_count\{method="POST",route="\/admin\/v1\/servers\/:guild_id\/awards",status_code="200"\} 1$/m,
    'the write has its series in http_request_duration_seconds')
  const named = async (): Promise<string[]> => String(await client.client('LIST')).split('\n')
    .map((line) => / name=(\S*) /.exec(line)?.[1] ?? '').filter((name) => name !== '').sort()
  const expected = [API_CONNECTION_NAME, CLOSE_CONNECTION_NAME, WEBHOOKS_CONNECTION_NAME, WRITE_API_CONNECTION_NAME]
  // The webhooks' connection is not waited for at start: on a loaded machine it may come a moment later.
  for (let tries = 0; tries < 100 && JSON.stringify(await named()) !== JSON.stringify(expected); tries++) await sleep(100)
  t.same(await named(), expected, "CLIENT LIST names each of the process's connections (docs/operating.md, \"Redis connections\")")
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
  const run = startServer(t, { env: { REDIS_URL: redis.url, ADMIN_PORT: String(port), LOG_LEVEL: 'silent' } })
  t.equal(await run.exited, 1)
  t.match(run.stderr(), new RegExp(`^error: cannot listen on 127\\.0\\.0\\.1:${port} \\(ADMIN_PORT\\): listen EADDRINUSE`))
})

t.test('Ctrl-C in the demo says it is draining and how to stop at once, serving meanwhile; a second Ctrl-C stops it at once, its Redis too', async (t) => {
  // Signals go to the process group, as a terminal's Ctrl-C does: the local Redis must not get it.
  const run = startServer(t, { env: { SHUTDOWN_DRAIN_MS: '60000' }, processGroup: true })
  const [, key = '', url = ''] = await run.waitFor(CURL)
  const redisPort = Number(REDIS_URL.exec(run.stdout())?.[2])
  run.signal('SIGINT')
  await run.waitFor(/\n {2}Stopping: draining for 60 s \(SHUTDOWN_DRAIN_MS\), requests still served\. Ctrl-C again stops at once\.\n/)
  t.equal((await fetch(url, { headers: { 'x-api-key': key } })).status, 200, 'a read during the drain is served: the local Redis did not stop with the Ctrl-C')
  run.signal('SIGINT')
  t.equal(await run.exited, 1, 'the second Ctrl-C ends it without waiting for the drain (which would end with 0)')
  t.match(run.stdout(), /\n {2}Stopped at once\.\n/)
  t.notMatch(run.stdout(), /\n {2}Stopped\.\n/, 'not the end of a drain')
  // Its local Redis gets SIGTERM as the process exits: the port is freed once it has stopped.
  while (!await isPortFree(redisPort)) await sleep(50)
  t.pass('its local Redis stopped')
})

/** The redis-server processes whose working directory is under `dir` (a demo's local Redis runs in its .data). */
function redisServersIn (dir: string): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('redis-server') && readlinkSync(`/proc/${pid}/cwd`).startsWith(dir)
    } catch { return false } // gone meanwhile, or not ours to read
  })
}

t.test('Ctrl-C while the demo starts (before the app is ready, and while it seeds) stops it with 0, no error, and its Redis stopped', async (t) => {
  // The first line is logged before the app is ready; the second while it gets ready, the
  // demo's seeding of a new directory coming next.
  for (const moment of [/young-collection fix/, /redis data migrated/]) {
    const dir = tempDir(t)
    // A stop while starting drains nothing; a long drain setting only lengthens the grace the
    // stop gets (drain + CLOSE_GRACE_MS) before exiting 1, which a loaded machine can outlast.
    const run = startServer(t, { cwd: dir, processGroup: true, env: { SHUTDOWN_DRAIN_MS: '30000' } })
    await run.waitFor(moment)
    run.signal('SIGINT')
    t.equal(await run.exited, 0, `exit code 0 (Ctrl-C after ${String(moment)})`)
    t.notMatch(run.stderr(), /Error|at /, 'nothing on stderr but what a stop says')
    t.notMatch(run.stdout(), /"level":50/, 'no error logged')
    t.match(run.stdout(), /\n {2}Stopped\.\n/, 'it says it stopped')
    t.same(redisServersIn(dir), [], 'its local Redis stopped')
  }
})

t.test('a stop before the write API has started leaves it unstarted: it never connects to Redis', async (t) => {
  const redis = await RedisServer.start()
  t.teardown(async () => { await redis.close() })
  const named = new Set<string>()
  let code: number | null = null
  await monitored(redis.url, (args) => {
    if (args[0]?.toLowerCase() === 'client' && args[1]?.toLowerCase() === 'setname' && args[2] !== undefined) named.add(args[2])
  }, async () => {
    // Held stopped, Redis keeps the API's start waiting for it, so the stop comes while the API
    // gets ready, before the write API's start begins.
    process.kill(redis.pid, 'SIGSTOP')
    const run = startServer(t, { env: { REDIS_URL: redis.url, ADMIN_PORT: '0', SHUTDOWN_DRAIN_MS: '30000' } })
    try {
      await run.waitFor(/young-collection fix/)
      run.signal('SIGINT')
      await run.waitFor(/stopping while starting/)
    } finally {
      // Whatever happened: a stopped Redis would hold its own teardown (SIGTERM waits for SIGCONT).
      process.kill(redis.pid, 'SIGCONT')
    }
    code = await run.exited
  })
  t.equal(code, 0, 'it stops with 0')
  t.ok(named.has(API_CONNECTION_NAME), `the API connected as ${API_CONNECTION_NAME}`)
  t.notOk(named.has(WRITE_API_CONNECTION_NAME), `no ${WRITE_API_CONNECTION_NAME} connection was made`)
})

t.test('the demo says when it has stopped after Ctrl-C and its drain', async (t) => {
  const run = startServer(t, { env: { SHUTDOWN_DRAIN_MS: '100' }, processGroup: true })
  await run.waitFor(CURL)
  run.signal('SIGINT')
  t.equal(await run.exited, 0)
  t.match(run.stdout(), /\n {2}Stopping: draining for 0\.1 s \(SHUTDOWN_DRAIN_MS\), requests still served\. Ctrl-C again stops at once\.\n[^]*\n {2}Stopped\.\n/)
})

t.test('the demo serves the write API on PORT + 1 unless ADMIN_PORT is set, and says so when that port is taken', async (t) => {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const taken = createServer()
    // Taken by this server, or already by another process: either way the demo cannot have it.
    await new Promise<void>((resolve) => taken.once('error', () => { resolve() }).listen(port + 1, '127.0.0.1', resolve))
    t.teardown(() => { taken.close() })
    const run = startServer(t, { env: { PORT: String(port) } })
    t.equal(await run.exited, 1)
    // PORT itself taken by a test beside this one between its pick and the bind: again, on another.
    if (attempt < 5 && run.stderr().startsWith(`error: cannot listen on 127.0.0.1:${port}:`)) continue
    t.match(run.stderr(), `error: cannot listen on 127.0.0.1:${port + 1} (ADMIN_PORT, which the demo sets to PORT + 1 when it is unset: set ADMIN_PORT to a free port): listen EADDRINUSE`)
    break
  }
})
