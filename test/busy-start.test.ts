// An instance that answers /readyz serves (CONTRACT: a ready instance): the demo started on a
// machine whose every core is busy answers its first reads after the banner with 200. Neither the
// work of its own start nor the host's other processes are load from its traffic, and it sheds
// load for its traffic only (test/load-shedding.test.ts).
import t from 'tap'
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
