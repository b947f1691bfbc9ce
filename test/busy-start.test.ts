// An instance that answers /readyz serves (CONTRACT: a ready instance): the demo started on a
// machine whose every core is busy answers its first reads after the banner with 200. Neither the
// work of its own start nor the host's other processes are load from its traffic, and it sheds
// load for its traffic only (test/load-shedding.test.ts).
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { burnEveryCore } from './helpers/cpu-burners.js'
import { DEMO_CURL, startServer, tempDir } from './helpers/server-process.js'

const READS = 20

t.test(`the demo started with a CPU burner on each core answers its first ${READS} reads after the banner with 200, on its first start and on a restart`, async (t) => {
  burnEveryCore(t)
  const dir = tempDir(t)
  for (const start of ['first start (it seeds)', 'restart']) {
    // The defaults a newcomer runs with: load shedding on.
    const run = startServer(t, { cwd: dir })
    const [, key = '', url = ''] = await run.waitFor(DEMO_CURL)
    const statuses: number[] = []
    for (let i = 0; i < READS; i++) {
      const res = await fetch(url, { headers: { 'x-api-key': key } })
      await res.arrayBuffer()
      statuses.push(res.status)
    }
    t.same(statuses, Array(READS).fill(200), `${start}: every read answered 200`)
    run.signal('SIGTERM')
    t.equal(await run.exited, 0)
  }
})

t.test('the demo whose local Redis stalls for seconds during its start (SIGSTOP) starts when it resumes, and serves', async (t) => {
  const run = startServer(t, { cwd: tempDir(t) })
  // Its first log line comes once its local redis-server (its child) runs; the stall begins as
  // the migration is logged, when the seeding and the demo key's set-up come next.
  await run.waitFor(/ioredis young-collection fix/)
  const redisPid = await childRedisPid(run.child.pid ?? 0)
  const stalled = new Promise<void>((resolve) => {
    run.child.stdout?.on('data', (chunk: Buffer) => {
      if (!chunk.toString().includes('redis data migrated')) return
      process.kill(redisPid, 'SIGSTOP')
      resolve()
    })
  })
  t.teardown(() => { try { process.kill(redisPid, 'SIGCONT') } catch {} })
  await stalled
  // Past the request path's command timeout (500 ms) several times over.
  await sleep(3000)
  process.kill(redisPid, 'SIGCONT')
  const [, key = '', url = ''] = await run.waitFor(DEMO_CURL)
  const res = await fetch(url, { headers: { 'x-api-key': key } })
  t.equal(res.status, 200, 'its first read after the banner')
  t.equal(((await res.json()) as { total: number }).total, 500, 'the seeded crowd is served')
  run.signal('SIGTERM')
  t.equal(await run.exited, 0, 'and it stops cleanly')
})

/** The pid of the redis-server that process `parent` started (waited for: it starts first). */
async function childRedisPid (parent: number): Promise<number> {
  for (;;) {
    const found = spawnSync('pgrep', ['-P', String(parent), 'redis-server'], { encoding: 'utf8' }).stdout.trim()
    if (found !== '') return Number(found.split('\n')[0])
    await sleep(20)
  }
}
