// RESPONSE_CACHE_MB bounds what the response cache holds in the process's resident memory,
// compressed copies and the buffers behind them included: an instance that served 50,000
// distinct URLs, each compressed (gzip and br in turn), in a process of its own.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { RedisServer } from './helpers/redis-server.js'

const MB = 1024 * 1024
const CACHE_MB = 64
/** What the process may grow by besides the cache: V8's heap grown to serve the load, allocator slack (measured: 95-115 MB). */
const OVERHEAD_MB = 160

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

t.test(`an instance with RESPONSE_CACHE_MB=${CACHE_MB} that served 50,000 distinct compressed URLs holds the cache's bytes in Buffers and grows by at most the cache plus ${OVERHEAD_MB} MB`, async (t) => {
  const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/helpers/cache-memory-child.ts', server.url, String(CACHE_MB), '50000'], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: { ...process.env, NODE_OPTIONS: '' }, // not tap's process-tracking hook
    encoding: 'utf8',
    timeout: 110_000
  })
  t.equal(child.status, 0, child.stderr)
  const { before, after, arrayBuffers, compressed, requests } = JSON.parse(child.stdout) as Record<string, number>
  t.equal(compressed, (requests as number) + 500, 'every response was sent compressed')
  t.ok(arrayBuffers as number <= (CACHE_MB + 4) * MB,
    `Buffers hold ${((arrayBuffers as number) / MB).toFixed(1)} MB: the cache's ${CACHE_MB} MB and a few MB in flight`)
  const grown = ((after as number) - (before as number)) / MB
  t.ok(grown <= CACHE_MB + OVERHEAD_MB, `resident memory grew by ${grown.toFixed(0)} MB (${((before as number) / MB).toFixed(0)} -> ${((after as number) / MB).toFixed(0)} MB)`)
})
