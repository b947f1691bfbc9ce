// The demo's own redis-server: started on a free port, persistent across restarts, stopped for
// good, and explaining itself when there is no redis-server to start.
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { startLocalRedis, type LocalRedis } from '../src/demo/local-redis.js'
import { readDemoState, writeDemoState } from '../src/demo/demo-state.js'

const root = mkdtempSync(join(tmpdir(), 'lb-local-redis-'))
t.teardown(() => { rmSync(root, { recursive: true, force: true }) })

/** Starts one and makes sure teardown stops it even when an assertion fails midway. */
async function start (t: Test, options: Parameters<typeof startLocalRedis>[0]): Promise<LocalRedis> {
  const redis = await startLocalRedis(options)
  t.teardown(async () => { await redis.stop() })
  return redis
}

function isAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

/** Alive and not a zombie: an orphan's exit may wait for a reaper that is slow to come. */
function isRunning (pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

async function acceptsConnections (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => { resolve(false) })
  })
}

async function withClient<T> (t: Test, url: string, use: (redis: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null })
  t.teardown(() => { client.disconnect() })
  try {
    return await use(client)
  } finally {
    client.disconnect()
  }
}

t.test('data written before stop() is there after a start on the same directory', async (t) => {
  const dir = join(root, 'persist', '.data') // does not exist yet: startLocalRedis creates it
  const lines: string[] = []
  const first = await start(t, { dir, log: { info: (line) => { lines.push(line) } } })
  t.not(first.port, 6379, 'never the default Redis port')
  t.equal(first.url, `redis://127.0.0.1:${first.port}`)
  t.match(lines.join('\n'), String(first.pid), 'the start is logged with the pid')
  t.equal(await withClient(t, first.url, async (r) => await r.set('demo:greeting', 'hello')), 'OK')

  await first.stop()
  t.notOk(isAlive(first.pid), 'stop() leaves no redis-server process')
  t.notOk(await acceptsConnections(first.port), 'nothing listens on the port any more')
  t.ok(existsSync(join(dir, 'appendonlydir')), 'the data is kept as an AOF in the data directory')
  await t.resolves(first.stop(), 'a second stop() is harmless')

  const second = await start(t, { dir })
  t.equal(await withClient(t, second.url, async (r) => await r.get('demo:greeting')), 'hello')
  await second.stop()
  t.notOk(isAlive(second.pid))
})

t.test('stop() resolves when redis-server has already gone', async (t) => {
  const redis = await start(t, { dir: join(root, 'gone') })
  process.kill(redis.pid, 'SIGKILL')
  await t.resolves(redis.stop())
  t.notOk(isAlive(redis.pid))
})

t.test('without redis-server on PATH, the error says how to get one', async (t) => {
  const emptyBin = join(root, 'empty-bin')
  mkdirSync(emptyBin)
  await t.rejects(startLocalRedis({ dir: join(root, 'enoent'), env: { ...process.env, PATH: emptyBin } }), {
    message: /^redis-server was not found on PATH\. Install it \(Debian\/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis\), set REDIS_URL to a Redis you run, or use Docker: docker compose up$/
  })
})

t.test('a redis-server that exits at once is reported with its own last words', async (t) => {
  await t.rejects(startLocalRedis({ dir: join(root, 'bad-config'), extraArgs: ['--no-such-directive', 'yes'] }), {
    message: /redis-server exited with code 1 before it answered PING:[\s\S]*no-such-directive/
  })
})

t.test('a redis-server orphaned by a killed demo is stopped before a new start on its directory', async (t) => {
  const dir = join(root, 'orphan', '.data')
  // A demo process that dies by SIGKILL never gets to stop its Redis.
  const script = `import { startLocalRedis } from ${JSON.stringify(new URL('../src/demo/local-redis.ts', import.meta.url).href)}
const redis = await startLocalRedis({ dir: ${JSON.stringify(dir)} })
process.stdout.write(redis.pid + ' ' + redis.port + '\\n')
setInterval(() => {}, 1000)`
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), '--input-type=module', '-e', script], {
    env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'inherit']
  })
  const [orphanPid = 0, orphanPort = 0] = await new Promise<number[]>((resolve) => {
    child.stdout.once('data', (chunk: Buffer) => { resolve(chunk.toString().trim().split(' ').map(Number)) })
  })
  const orphanUrl = `redis://127.0.0.1:${orphanPort}`
  await withClient(t, orphanUrl, async (r) => await r.set('demo:kept', 'yes'))
  child.kill('SIGKILL')
  await new Promise((resolve) => child.once('exit', resolve))
  t.ok(isRunning(orphanPid), 'the orphan outlived its parent')
  t.teardown(() => { if (isRunning(orphanPid)) process.kill(orphanPid, 'SIGKILL') })

  const lines: string[] = []
  const next = await start(t, { dir, log: { info: (line) => { lines.push(line) } } })
  t.notOk(isRunning(orphanPid), 'the orphan was stopped')
  t.match(lines.join('\n'), `stopping redis-server ${orphanPid}`)
  t.equal(await withClient(t, next.url, async (r) => await r.get('demo:kept')), 'yes', 'its data was flushed and is served by the new one')
})

t.test('a start asked for the port of last time gets it, and another (saying which was taken) when it is taken', async (t) => {
  const dir = join(root, 'port', '.data')
  const first = await start(t, { dir })
  t.equal(first.portTaken, undefined)
  await first.stop()

  const again = await start(t, { dir, port: first.port })
  t.equal(again.port, first.port, 'the same port as before')
  t.equal(again.url, first.url, 'so a REDIS_URL printed earlier still works')
  t.equal(again.portTaken, undefined)
  await again.stop()

  // Someone else takes the port while the demo is down.
  const squatter = createServer()
  await new Promise<void>((resolve) => squatter.listen(first.port, '127.0.0.1', resolve))
  t.teardown(() => { squatter.close() })
  const moved = await start(t, { dir, port: first.port })
  t.not(moved.port, first.port, 'another port')
  t.equal(moved.portTaken, first.port, 'and it says which port was taken')
  t.equal(await withClient(t, moved.url, async (r) => await r.ping()), 'PONG')
})

t.test('a remembered port of 6379 is never used: that is where a developer\'s own Redis lives', async (t) => {
  const redis = await start(t, { dir: join(root, 'default-port'), port: 6379 })
  t.not(redis.port, 6379)
  t.equal(redis.portTaken, undefined, 'not reported as taken: it was never tried')
})

t.test('the demo state file holds the port and the key, readable by its owner only, and a broken one is ignored', async (t) => {
  const dir = join(root, 'state', '.data')
  t.same(readDemoState(dir), {}, 'nothing remembered before the first start')
  writeDemoState(dir, { redisPort: 41234, apiKey: 'lbk_0123456789abcdef_x' })
  t.same(readDemoState(dir), { redisPort: 41234, apiKey: 'lbk_0123456789abcdef_x' })
  t.equal(statSync(join(dir, 'demo.json')).mode & 0o777, 0o600, 'mode 0600: it holds a key')

  writeFileSync(join(dir, 'demo.json'), '{"redisPort": 41235}', { mode: 0o644 })
  writeDemoState(dir, { redisPort: 41236 })
  t.equal(statSync(join(dir, 'demo.json')).mode & 0o777, 0o600, 'a file left readable by others is made private on the next write')

  for (const text of ['not json', '[]', 'null', '{"redisPort": "41234", "apiKey": 7}', '{"redisPort": 70000}']) {
    writeFileSync(join(dir, 'demo.json'), text)
    t.same(readDemoState(dir), {}, `${text}: nothing usable remembered`)
  }
})
