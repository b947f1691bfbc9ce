// Summarizes a V8 CPU profile (`node --cpu-prof`, as scripts/bench-cpu.ts --cpu-prof writes) as
// text: where the samples fell by place (the service's own files, each dependency, Node's
// modules, garbage collection), the functions with the most self time, and the inclusive time
// of the functions named with --frames (a hook: itself and everything it called).
//
//   npx tsx scripts/profile-summary.ts PROFILE.cpuprofile [--top N] [--frames name,name,...] [--per N]
//
// Percentages are of the samples when the process was not idle. With --per N (the requests the
// profiled process served while profiled), each line also says µs per request.
import { parseArgs } from 'node:util'
import { type CallFrame, readProfile } from './cpu-profile.js'

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '40' }, frames: { type: 'string' }, per: { type: 'string' } }
})
const file = positionals[0]
if (file === undefined) throw new Error('usage: profile-summary.ts PROFILE.cpuprofile [--top N] [--frames a,b] [--per REQUESTS]')
const { profile, byId, parent } = readProfile(file)

/** Where a frame's code lives: the service's file, a dependency, Node's module, or V8's own. */
function place ({ url, functionName }: CallFrame): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(compiled: validators, serializers)'
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (dependency !== null) return dependency[1] ?? url
  if (url.startsWith('node:')) return url
  const own = /\/(?:dist|src)\/(.+)$/.exec(url)
  return own !== null ? `service: ${own[1] ?? url}` : url
}

const selfByPlace = new Map<string, number>()
const selfByFunction = new Map<string, number>()
const inclusive = new Map<string, number>()
const frames = new Set(args.frames?.split(',').map((name) => name.trim()) ?? [])
let busy = 0
let idle = 0
for (const [i, id] of profile.samples.entries()) {
  const dt = profile.timeDeltas[i + 1] ?? 0 // a sample's delta is the time until the next
  const node = byId.get(id)
  if (node === undefined) continue
  if (node.callFrame.functionName === '(idle)') { idle += dt; continue }
  busy += dt
  const where = place(node.callFrame)
  selfByPlace.set(where, (selfByPlace.get(where) ?? 0) + dt)
  const name = `${node.callFrame.functionName || '(anonymous)'} ${where}:${node.callFrame.lineNumber + 1}`
  selfByFunction.set(name, (selfByFunction.get(name) ?? 0) + dt)
  if (frames.size > 0) {
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const fn = byId.get(at)?.callFrame.functionName ?? ''
      if (frames.has(fn) && !seen.has(fn)) {
        seen.add(fn)
        inclusive.set(fn, (inclusive.get(fn) ?? 0) + dt)
      }
    }
  }
}

const requests = args.per === undefined ? undefined : Number(args.per)
const line = (us: number, label: string): string =>
  `${(100 * us / busy).toFixed(1).padStart(5)} %${requests === undefined ? '' : `  ${(us / requests).toFixed(2).padStart(6)} µs/req`}  ${label}`
const sorted = (map: Map<string, number>): Array<[string, number]> => [...map].sort((a, b) => b[1] - a[1])

console.log(`${file}: ${(busy / 1e6).toFixed(2)} s busy, ${(idle / 1e6).toFixed(2)} s idle, ${profile.samples.length} samples`)
console.log('\nself time by place:')
for (const [where, us] of sorted(selfByPlace)) if (us / busy >= 0.002) console.log(line(us, where))
console.log(`\nfunctions, self time (top ${args.top}):`)
for (const [name, us] of sorted(selfByFunction).slice(0, Number(args.top))) console.log(line(us, name))
if (frames.size > 0) {
  console.log('\ninclusive time of the named frames:')
  for (const name of frames) console.log(line(inclusive.get(name) ?? 0, name))
}
