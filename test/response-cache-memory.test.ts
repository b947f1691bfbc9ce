// RESPONSE_CACHE_MB bounds what the response cache holds in the process's resident memory,
// compressed copies, the buffers behind them and V8's heap around its entries included: an
// instance that served 50,000 distinct URLs, each compressed (gzip and br in turn), in a process
// of its own, against the same process and load with a 1 MB cache (what serving the load alone
// grows a process by: V8's heap and the allocator, which vary with the Node version). The bodies
// are small (1.2 to 3.2 KB), the case where each entry's own objects weigh most.
import t from 'tap'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { RedisServer } from './helpers/redis-server.js'

const MB = 1024 * 1024
const CACHE_MB = 64
const URLS = 50_000
/**
 * What the cached run may grow by beyond the control run and the cache itself: the allocator's
 * and V8's share, which varies from run to run (the control alone grew by 59 to 90 MB on Node 20
 * and by 174 to 314 MB on Node 24). Measured past the cache (2026-11-25, idle and loaded): 15 to
 * 33 MB on Node 20 in four runs, -29 to 19 MB on Node 24 in seven. Before each entry was counted
 * with V8's heap around it, 50 to 112 MB on Node 20 in nine runs (13 to 40 on Node 24 in four);
 * before every byte was counted, the cached run grew by 298 MB.
 */
const MARGIN_MB = 50

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

interface Filled { before: number, after: number, arrayBuffers: number, compressed: number, requests: number }

async function fill (cacheMb: number): Promise<Filled> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/helpers/cache-memory-child.ts', server.url, String(cacheMb), String(URLS), 'small'], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: { ...process.env, NODE_OPTIONS: '' }, // not tap's process-tracking hook
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { err += chunk })
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
  if (code !== 0) throw new Error(`the child exited with ${String(code)}: ${err}`)
  return JSON.parse(out) as Filled
}

t.test(`an instance with RESPONSE_CACHE_MB=${CACHE_MB} that served ${URLS} distinct compressed URLs holds the cache's bytes in Buffers, and grows by the cache more than with a 1 MB cache`, async (t) => {
  const [cached, control] = await Promise.all([fill(CACHE_MB), fill(1)])
  t.equal(cached.compressed, cached.requests + 500, 'every response was sent compressed')
  t.ok(cached.arrayBuffers <= (CACHE_MB + 4) * MB,
    `Buffers hold ${(cached.arrayBuffers / MB).toFixed(1)} MB: the cache's ${CACHE_MB} MB and a few MB in flight`)
  const grown = (cached.after - cached.before) / MB
  const controlGrown = (control.after - control.before) / MB
  t.ok(grown <= controlGrown + CACHE_MB + MARGIN_MB,
    `resident memory grew by ${grown.toFixed(0)} MB (${(cached.before / MB).toFixed(0)} -> ${(cached.after / MB).toFixed(0)} MB); ` +
    `with a 1 MB cache, by ${controlGrown.toFixed(0)} MB; the bound is that plus ${CACHE_MB} + ${MARGIN_MB} MB`)
})
