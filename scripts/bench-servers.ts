// The servers `npm run bench` and scripts/bench-cpu.ts measure the service against, started as
// child processes: the bare route (and its "headers" and "floor" forms, scripts/bench-bare-server.ts)
// serving the very bytes the service answered, and the fused peer (scripts/bench-peer-server.ts).
import { writeFileSync } from 'node:fs'
import { get, type IncomingHttpHeaders } from 'node:http'
import { join } from 'node:path'
import { freePort } from '../src/redis/redis-server.js'
import type { BareFixture } from './bench-bare-server.js'
import { type Cleanups, startProcess } from './run-benchmark.js'

/** A request the bare route must answer as the service did. */
export interface FixtureRequest {
  label: string
  path: string
  headers?: Record<string, string>
  /** The status the service must have answered (default 200). */
  status?: number
}

/** A GET whose body comes as sent (fetch would decompress it). */
export async function rawGet (url: string, headers: Record<string, string>): Promise<{ status: number, headers: IncomingHttpHeaders, body: Buffer }> {
  return await new Promise((resolve, reject) => {
    get(url, { headers }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }) })
      response.on('error', reject)
    }).on('error', reject)
  })
}

/** What the service at `serviceBase` answers to each request, written to DIR/fixtures.json for the bare server; returns that file. */
export async function writeFixtures (serviceBase: string, requests: readonly FixtureRequest[], dir: string): Promise<string> {
  const fixtures: BareFixture[] = []
  for (const e of requests) {
    const response = await rawGet(serviceBase + e.path, e.headers ?? {})
    if (response.status !== (e.status ?? 200)) throw new Error(`${e.label} answered ${response.status}`)
    const headers: Record<string, string> = {}
    for (const name of ['content-type', 'content-encoding', 'etag', 'vary', 'cache-control']) {
      const value = response.headers[name]
      if (typeof value === 'string') headers[name] = value
    }
    const allHeaders: Record<string, string> = {}
    for (const [name, value] of Object.entries(response.headers)) {
      if (typeof value === 'string' && !['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(name)) allHeaders[name] = value
    }
    fixtures.push({ path: e.path, requestHeaders: e.headers ?? {}, status: response.status, headers, allHeaders, body: response.body.toString('base64') })
  }
  const file = join(dir, 'fixtures.json')
  writeFileSync(file, JSON.stringify(fixtures))
  return file
}

/** Starts scripts/bench-bare-server.ts on `fixturesFile` with `mode` (none: the bare route) and returns its base URL and process id. */
export async function startBare (cleanups: Cleanups, fixturesFile: string, ...mode: string[]): Promise<{ base: string, pid: number }> {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const child = await startProcess(cleanups, ['--import', 'tsx', 'scripts/bench-bare-server.ts', fixturesFile, String(port), ...mode], {}, `${base}/ready`)
  return { base, pid: child.pid ?? NaN }
}

/** Starts the fused peer (scripts/bench-peer-server.ts) on the Redis at `redisUrl` and returns its base URL. */
export async function startPeer (cleanups: Cleanups, redisUrl: string, nodeFlags: string[] = []): Promise<{ base: string, pid: number }> {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const child = await startProcess(cleanups, [...nodeFlags, '--import', 'tsx', 'scripts/bench-peer-server.ts', String(port), redisUrl], {}, `${base}/ready`)
  return { base, pid: child.pid ?? NaN }
}
