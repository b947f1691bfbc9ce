// The Python package (packages/python) against a live service: its unittest suite, run with the
// system's python3, talks to the server process (the built dist/server.js, both ports) on a
// redis-server of its own, with a token and an API key made by the library; each Python test
// is reported here as an assertion, a skipped one with its reason. Its webhook verifier is held
// to requests signed (and judged) by the npm standardwebhooks package. Beside: mypy --strict over
// the package and its tests, and `pip install ./packages/python` giving a typed package.
import t from 'tap'
import { execFile } from 'node:child_process'
import { cpSync, existsSync, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { promisify } from 'node:util'
import { Webhook } from 'standardwebhooks'
import { ROOT } from './helpers/built.js'
import { RedisServer } from './helpers/redis-server.js'
import { createRedis } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { TokenStore } from '../src/tokens/token-store.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'
import { startServerOnFreePorts } from './helpers/server-process.js'

const run = promisify(execFile)
const PACKAGE = join(ROOT, 'packages/python')
/** What a free-plan key may make per window: the rate-limit tests spend it, then meet a 429. */
const FREE_LIMIT = 2

// The suite waits out rate windows, Retry-After and a paused Redis: minutes on a loaded machine.
t.setTimeout(600_000)

const redis = await RedisServer.start()
t.teardown(async () => { await redis.close() })

// The server as a user runs it (test/helpers/server-process.ts). No load shedding: this is a
// test of the client, on a machine that may be busy. Redis has 1 s before a 503, so a paused
// Redis answers soon; a short rate window so that a 429's Retry-After is a second or two.
const { run: server, ports: { PORT: port, ADMIN_PORT: adminPort } } = await startServerOnFreePorts(t, ['PORT', 'ADMIN_PORT'], {
  env: {
    REDIS_URL: redis.url,
    LOG_LEVEL: 'info',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    MAX_IN_FLIGHT: '0',
    REDIS_COMMAND_TIMEOUT_MS: '1000',
    PLAN_LIMITS: JSON.stringify({ free: FREE_LIMIT }),
    RATE_LIMIT_WINDOW_MS: '3000'
  }
})

/**
 * Requests signed by the npm package, each with its own verifier's verdict at `now`. The npm
 * verifier reads the clock itself, in whole seconds: the verdicts are made again until they all
 * came within the second `now` is (a loaded machine once took past it, and the future timestamp's
 * 301 s ahead became 300).
 */
function webhookVectors (): unknown {
  for (;;) {
    const now = Math.floor(Date.now() / 1000)
    const vectors = webhookVectorsAt(now)
    if (Math.floor(Date.now() / 1000) === now) return vectors
  }
}

function webhookVectorsAt (now: number): unknown {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
  const other = 'whsec_' + Buffer.from('another webhook secret').toString('base64')
  const signer = new Webhook(secret)
  const body = JSON.stringify({ id: 'evt_1', type: 'member.leveled_up', created_at: new Date(now * 1000).toISOString(), server_id: '1100000000000000001', data: { user_id: '1200000000000000001', old_level: 9, new_level: 10, roles: { add: ['1300000000000000001'], remove: [] } } })
  const unicode = JSON.stringify({ id: 'evt_2', type: 'ping', created_at: '2026-11-25T10:00:00.000Z', server_id: '1', data: { name: 'Zoë 🚀 "quoted"\n' } })
  const headers = (id: string, at: number, signature: string) => ({ 'webhook-id': id, 'webhook-timestamp': String(at), 'webhook-signature': signature })
  const sign = (id: string, at: number, payload: string, key = signer) => key.sign(id, new Date(at * 1000), payload)
  const good = sign('msg_1', now, body)
  const cases = [
    { name: 'valid', secret, headers: headers('msg_1', now, good), body },
    { name: 'valid, non-ASCII body', secret, headers: headers('msg_2', now, sign('msg_2', now, unicode)), body: unicode },
    { name: 'secret without its whsec_ prefix', secret: secret.slice(6), headers: headers('msg_1', now, good), body },
    { name: 'wrong secret', secret: other, headers: headers('msg_1', now, good), body },
    { name: 'tampered body', secret, headers: headers('msg_1', now, good), body: body.replace('"new_level":10', '"new_level":99') },
    { name: 'another message id', secret, headers: headers('msg_9', now, good), body },
    { name: 'old timestamp', secret, headers: headers('msg_1', now - 301, sign('msg_1', now - 301, body)), body },
    { name: 'timestamp just inside the tolerance', secret, headers: headers('msg_1', now - 299, sign('msg_1', now - 299, body)), body },
    { name: 'future timestamp', secret, headers: headers('msg_1', now + 301, sign('msg_1', now + 301, body)), body },
    { name: 'one of several signatures', secret, headers: headers('msg_1', now, `v1,${Buffer.alloc(32).toString('base64')} v1a,c2lnbmF0dXJl ${good}`), body },
    { name: 'several signatures, none right', secret, headers: headers('msg_1', now, `${sign('msg_1', now, body, new Webhook(other))} v1,${Buffer.alloc(32).toString('base64')}`), body },
    { name: 'right signature under another version', secret, headers: headers('msg_1', now, good.replace('v1,', 'v2,')), body },
    { name: 'missing signature', secret, headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': String(now) }, body }
  ].map((c) => {
    // The npm verifier reads the clock itself: it judges here, at `now`, as ours does there.
    let npm = 'ok'
    try { new Webhook(c.secret).verify(c.body, c.headers) } catch (error) { npm = (error as Error).message }
    return { ...c, npm }
  })
  const signatures = [body, unicode, ''].map((payload, i) => ({ secret, id: `msg_${i}`, timestamp: now - i, body: payload, signature: sign(`msg_${i}`, now - i, payload) }))
  return { now, cases, signatures }
}

t.test("the Python package's tests pass against a live service, with both clients", async (t) => {
  const client = createRedis({ url: redis.url, offlineQueue: true })
  t.teardown(() => { client.disconnect() })
  const keys = new KeyBuilder()
  const { token } = await new TokenStore(client, keys).create({ name: 'python package tests', scopes: ['write', 'keys'] })
  const { key } = await new ApiKeyStore(client, keys).create({ servers: '*', plan: 'professional', name: 'python package tests' })
  const vectors = join(t.testdir({}), 'webhook-vectors.json')
  writeFileSync(vectors, JSON.stringify(webhookVectors()))

  const result = await run('python3', ['-m', 'unittest', 'discover', '-v', '-s', 'tests', '-t', '.'], {
    cwd: PACKAGE,
    timeout: 540_000,
    maxBuffer: 16 * 1024 * 1024,
    env: {
      ...process.env,
      PYTHONPATH: join(PACKAGE, 'src'),
      PYTHONDONTWRITEBYTECODE: '1',
      LEADERBOARD_ADMIN_URL: `http://127.0.0.1:${adminPort}/admin/v1`,
      LEADERBOARD_API_URL: `http://127.0.0.1:${port}/api/v1`,
      LEADERBOARD_TOKEN: token,
      LEADERBOARD_API_KEY: key,
      LEADERBOARD_REDIS_PID: String(redis.pid),
      LEADERBOARD_FREE_LIMIT: String(FREE_LIMIT),
      LEADERBOARD_WEBHOOK_VECTORS: vectors
    }
  }).then(({ stderr }) => ({ code: 0, stderr }), (error: { code?: number, stderr?: string }) => ({ code: error.code ?? -1, stderr: error.stderr ?? String(error) }))

  // unittest -v writes one line per test: "test_name (module.Class[.test_name]) ... ok", or
  // "... skipped 'why'" (in double quotes when the reason holds a '), "... FAIL", "... ERROR".
  const lines = [...result.stderr.matchAll(/^(test\w+) \(([\w.]+)\) \.\.\. (ok|skipped (['"])(.*)\4|FAIL|ERROR|expected failure|unexpected success)$/gm)]
  const ran = Number(/^Ran (\d+) tests? in /m.exec(result.stderr)?.[1] ?? 0)
  t.ok(ran >= 20, `${ran} Python tests ran`)
  t.equal(lines.length, ran, 'each reported here')
  for (const [, name, where, verdict, , reason] of lines) {
    const label = `${where?.replace(/\.test\w+$/, '')}.${name}`
    if (verdict === 'ok') t.pass(label)
    else if (reason !== undefined) t.pass(label, { skip: reason })
    else t.fail(label, { verdict })
  }
  t.equal(result.code, 0, 'python3 -m unittest passes', { output: result.stderr.slice(-20_000), service: (server.stdout() + server.stderr()).slice(-5000) })
})

const mypy = await run('mypy', ['--version']).then(() => true, () => false)
t.test('mypy --strict finds nothing in the package and its tests (Python 3.9 rules)', { skip: mypy ? false : 'mypy is not installed (Debian: apt-get install mypy)' }, async (t) => {
  const { stdout } = await run('mypy', ['--cache-dir', t.testdir({})], { cwd: PACKAGE, timeout: 300_000 }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }))
  t.match(stdout, /^Success: no issues found in \d+ source files$/m, stdout)
})

// Offline (no index, no build isolation) the build needs a python3 with pip, setuptools and wheel
// already installed: the first python3 on PATH that has them.
let builder: string | undefined
for (const candidate of (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'python3')).filter((file) => existsSync(file))) {
  if (await run(candidate, ['-c', 'import setuptools, wheel, pip']).then(() => true, () => false)) { builder = candidate; break }
}
t.test('pip install ./packages/python installs the package with its py.typed marker', {
  skip: builder === undefined ? 'no python3 on PATH has pip, setuptools and wheel to build with offline (Debian: apt-get install python3-pip python3-wheel)' : false
}, async (t) => {
  const python = builder ?? 'python3'
  // A copy, so that the build leaves nothing in the repository; a venv, so that nothing lands in the system.
  const dir = t.testdir({})
  cpSync(PACKAGE, join(dir, 'python'), { recursive: true, filter: (file) => !/__pycache__|\.mypy_cache/.test(file) })
  await run(python, ['-m', 'venv', '--system-site-packages', '--without-pip', join(dir, 'venv')])
  const venvPython = join(dir, 'venv', 'bin', 'python')
  const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PYTHONDONTWRITEBYTECODE: '1', PYTHONPATH: '' }
  await run(venvPython, ['-m', 'pip', 'install', '--quiet', '--no-index', '--no-build-isolation', join(dir, 'python')], { cwd: dir, timeout: 300_000, env })
  const { stdout } = await run(venvPython, ['-c', 'import guild_leaderboard, os; print(guild_leaderboard.__version__, sorted(os.listdir(os.path.dirname(guild_leaderboard.__file__))))'],
    { cwd: dir, env })
  t.match(stdout, /^\d+\.\d+\.\d+ /, 'the installed copy imports')
  t.match(stdout, /'py\.typed'/, 'py.typed is installed beside the modules')
})
