// How long this machine takes a core away from a thread that never yields it: a loop that only
// reads the clock, one per core (each pinned to its core with taskset, which it needs), and
// every gap between two readings past 0.5 ms counted. A gap is time the thread did not run: the
// OS ran something else there, or the hypervisor gave the virtual core to another machine. The
// loop allocates nothing, so Node's collector does not run in it. Redis's calls meet the same
// gaps, which SLOWLOG counts as theirs: this is what a budget like "no call over 5 ms" has to
// leave room for on this machine (docs/benchmarks.md).
//
//   npx tsx scripts/bench-stalls.ts [--seconds S] [--cores N,...]
//
// Default: 60 s on every core at once.
import { spawn } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { parseArgs } from 'node:util'

const BOUNDS_MS = [0.5, 1, 2, 4, 5, 8]

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    cores: { type: 'string' },
    child: { type: 'string' }
  }
})

/** The loop itself (a child per core): prints one JSON line, the gaps by bound and the longest. */
function measure (seconds: number): void {
  const counts = BOUNDS_MS.map(() => 0)
  let longest = 0
  const start = performance.now()
  const end = start + seconds * 1000
  let last = start
  for (;;) {
    const now = performance.now()
    const gap = now - last
    last = now
    if (gap >= BOUNDS_MS[0]!) {
      for (let i = 0; i < BOUNDS_MS.length; i++) if (gap >= BOUNDS_MS[i]!) counts[i]!++
      if (gap > longest) longest = gap
    }
    if (now >= end) break
  }
  console.log(JSON.stringify({ counts, longest }))
}

async function onCore (core: number, seconds: number): Promise<{ counts: number[], longest: number }> {
  const child = spawn('taskset', ['-c', String(core), process.execPath, ...process.execArgv, process.argv[1]!, '--child', String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const code = await new Promise<number | null>((resolve, reject) => { child.on('error', reject); child.on('close', resolve) })
  if (code !== 0) throw new Error(`the loop on core ${core} exited with ${String(code)}`)
  return JSON.parse(out) as { counts: number[], longest: number }
}

if (args.child !== undefined) {
  measure(Number(args.child))
} else {
  const seconds = Number(args.seconds)
  const cores = args.cores?.split(',').map(Number) ?? Array.from({ length: availableParallelism() }, (_, i) => i)
  console.log(`${cores.length} loops, one a core (${cores.join(', ')}), ${seconds} s; gaps counted by length`)
  console.log(`| core | ${BOUNDS_MS.map((ms) => `≥ ${ms} ms`).join(' | ')} | longest, ms |`)
  console.log(`|---|${BOUNDS_MS.map(() => '---:').join('|')}|---:|`)
  const results = await Promise.all(cores.map(async (core) => await onCore(core, seconds)))
  results.forEach(({ counts, longest }, i) => {
    console.log(`| ${cores[i]!} | ${counts.join(' | ')} | ${longest.toFixed(2)} |`)
  })
}
