// A V8 CPU profile of the service under load (scripts/bench-cpu.ts --cpu-prof) divided among the
// layers of a request: each sample goes to the first layer named along its stack, from the
// innermost frame out, passing through Node's streams, sockets and files, so a system call is
// counted where it was made (the response's write in Node's HTTP, the log's in the logger, the
// command's in the Redis client).
//
//   npx tsx scripts/profile-layers.ts PROFILE.cpuprofile [--us US_PER_REQUEST]
//
// With --us (the service's CPU per request measured alongside, bench-cpu's figure), each layer is
// also given in µs per request. The profile samples wall time while the process runs, so on a
// loaded machine a system call's share includes time the kernel spent elsewhere after it: shares
// are for ranking, and the paired CPU measurement is the figure.
import { parseArgs } from 'node:util'
import { readProfile } from './cpu-profile.js'

/** Frames a sample passes through to its layer: streams, sockets and files serve every layer. */
const TRANSPARENT = /^node:(net|fs|buffer|internal\/(streams|stream_base_commons|fs|buffer|util))/

/** Layers in the order a stack is searched for them: the first whose pattern matches a frame's url (or name) takes the sample. */
const LAYERS: Array<[string, RegExp]> = [
  ['logging (the request line, its write)', /\/dist\/logger\.js|sonic-boom|\/pino\//],
  ['@fastify/rate-limit (its wrapper of the limiter)', /@fastify\/rate-limit|rate-limit\/store\.js/],
  ['limiter and data version: batching, Redis client, the write to Redis', /ioredis|dataloader|\/dist\/redis\/|sliding-window\.js|leaderboard-reader\.js/],
  ['admission (dist/pipeline/admission.js)', /pipeline\/admission\.js/],
  ['authentication (dist/pipeline/auth.js, the key cache)', /pipeline\/auth\.js|lru-cache/],
  ['cache lookup, ETag, headers, body (reads.js, http/)', /pipeline\/reads\.js|\/dist\/http\//],
  ['metrics (onResponse)', /plugins\/metrics\.js|prom-client/],
  ['other hooks of the service (request id, security headers, drain, in-flight, query checks)', /\/dist\/app\.js|pipeline\/(lifecycle|shedding|read-routes|access)\.js/],
  ['Fastify (routing, hooks, reply, validation and serialization)', /\/fastify\/|find-my-way|fast-json-stringify|ajv|@fastify\//],
  ['Node HTTP: parsing, the response and its write', /node:_http/],
  ['Node event loop, timers, promises', /node:internal\/(process\/task_queues|timers)|node:events/]
]

const { values: args, positionals } = parseArgs({ allowPositionals: true, options: { us: { type: 'string' } } })
const file = positionals[0]
if (file === undefined) throw new Error('usage: profile-layers.ts PROFILE.cpuprofile [--us US_PER_REQUEST]')
const { profile, byId, parent } = readProfile(file)

const time = new Map<string, number>()
let busy = 0
for (const [i, id] of profile.samples.entries()) {
  const dt = profile.timeDeltas[i + 1] ?? 0
  const leaf = byId.get(id)?.callFrame
  if (leaf === undefined || leaf.functionName === '(idle)') continue
  busy += dt
  let layer = leaf.functionName === '(garbage collector)' ? 'garbage collection' : undefined
  for (let at: number | undefined = id; layer === undefined && at !== undefined; at = parent.get(at)) {
    const frame = byId.get(at)?.callFrame
    if (frame === undefined) break
    if (!TRANSPARENT.test(frame.url)) layer = LAYERS.find(([, pattern]) => pattern.test(frame.url))?.[0]
  }
  layer ??= 'other (program, start-up, unattributed natives)'
  time.set(layer, (time.get(layer) ?? 0) + dt)
}
const us = args.us === undefined ? undefined : Number(args.us)
console.log(`${file}: ${(busy / 1e6).toFixed(2)} s busy`)
for (const [layer, t] of [...time].sort((a, b) => b[1] - a[1])) {
  const share = t / busy
  console.log(`${(100 * share).toFixed(1).padStart(5)} %${us === undefined ? '' : `  ${(share * us).toFixed(1).padStart(5)} µs`}  ${layer}`)
}
