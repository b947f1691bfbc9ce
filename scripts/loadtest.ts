// `npm run loadtest`: load against any deployment of the API, for operators, with autocannon.
//
//   npm run loadtest -- --url http://host:3000/api/v1/servers/<guild>/leaderboard --key lbk_…
//                       [--connections 50] [--duration 10] [--path /api/v1/...] [--revalidate]
//
// `--path` replaces the URL's path and query (so one --url can name the host). `--revalidate`
// first fetches the URL for its ETag and then sends every request with If-None-Match, as a
// polling dashboard does. Progress is shown on a terminal; the summary gives throughput,
// latency percentiles and every status seen (429s mean the key's plan limit was reached).
import autocannon from 'autocannon'
import { parseArgs } from 'node:util'

const USAGE = 'usage: npm run loadtest -- --url URL --key KEY [--connections N] [--duration SECONDS] [--path PATH] [--revalidate]'

function fail (message: string): never {
  process.stderr.write(`error: ${message}\n${USAGE}\n`)
  process.exit(2)
}

function positive (name: string, value: string, max: number): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1 || n > max) fail(`--${name} must be an integer from 1 to ${max}`)
  return n
}

let args
try {
  args = parseArgs({
    options: {
      url: { type: 'string' },
      key: { type: 'string' },
      connections: { type: 'string', default: '50' },
      duration: { type: 'string', default: '10' },
      path: { type: 'string' },
      revalidate: { type: 'boolean', default: false }
    }
  }).values
} catch (err) {
  fail((err as Error).message)
}
if (args.url === undefined || args.key === undefined) fail('--url and --key are required')
let url: URL
try {
  url = new URL(args.url)
  if (args.path !== undefined) url = new URL(args.path, url)
} catch {
  fail(`not a URL: ${args.url}`)
}
const connections = positive('connections', args.connections, 10_000)
const duration = positive('duration', args.duration, 3600)
const headers: Record<string, string> = { 'x-api-key': args.key }

const probe = await fetch(url, { headers }).catch((err: Error) => fail(`${url.href} did not answer: ${err.message}`))
await probe.arrayBuffer()
if (probe.status !== 200) fail(`${url.href} answered ${probe.status}: check the key and the path before loading it`)
if (args.revalidate) {
  const etag = probe.headers.get('etag')
  if (etag === null) fail('--revalidate: the answer carries no ETag')
  headers['if-none-match'] = etag
}

process.stderr.write(`${connections} connections for ${duration} s against ${url.href}${args.revalidate ? ' (If-None-Match)' : ''}\n`)
const result = await new Promise<autocannon.Result>((resolve, reject) => {
  const instance = autocannon({ url: url.href, connections, duration, headers }, (err, r) => { if (err !== null) reject(err); else resolve(r) })
  autocannon.track(instance, { renderProgressBar: process.stderr.isTTY, renderResultsTable: false, renderLatencyTable: false })
})

const statuses = Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => `${code}: ${count ?? 0}`).join(', ')
const lines = [
  '',
  `requests: ${result.requests.total} in ${result.duration} s, ${Math.round(result.requests.average)} req/s on average (min ${result.requests.min}, max ${result.requests.max} per second)`,
  `latency ms: p50 ${result.latency.p50}, p90 ${result.latency.p90}, p99 ${result.latency.p99}, max ${result.latency.max}`,
  `statuses: ${statuses === '' ? 'none' : statuses}; connection errors: ${result.errors}, timeouts: ${result.timeouts}`
]
if ((result.statusCodeStats?.['429']?.count ?? 0) > 0) lines.push('429s: the key reached its plan limit; use a key with a higher plan (or PLAN_LIMITS on a test deployment) to load further')
process.stdout.write(lines.join('\n') + '\n')
process.exitCode = result.errors + result.timeouts > 0 || result.non2xx - (result['3xx'] ?? 0) > 0 ? 1 : 0
