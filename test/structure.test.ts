// How the sources depend on each other, read from their import lines: no module imports itself
// through others (a circle), the key builder stays on the lowest layer, and the package's main
// entry, the writer library, loads no part of the server.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { built, ROOT } from './helpers/built.js'
import { InvalidParameterError, LeaderboardError, LIBRARY_ERROR_CODES } from '../src/errors.js'
import { ERROR_CODES } from '../src/http/error-codes.js'

const SRC = join(ROOT, 'src')

/**
 * Every module under src/ and the modules under src/ it imports (value or type, static or
 * re-export; with `values`, only the imports that load a module at run time).
 */
function importGraph (values = false): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(join(SRC, file), 'utf8')
    const targets = [...text.matchAll(/^(?:import|export)\b([^'"]*?)from\s+'(\.{1,2}\/[^']+)'/gm)]
      .filter((m) => !values || !/^\s*type\b/.test(m[1] ?? ''))
      .map((m) => relative(SRC, resolve(dirname(join(SRC, file)), (m[2] ?? '').replace(/\.js$/, '.ts'))))
    graph.set(file, targets)
  }
  return graph
}

/** The circles of the graph, each as the path that closes it. */
function circles (graph: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (file: string): void => {
    if (state.get(file) === 'done') return
    if (state.get(file) === 'open') {
      found.push([...path.slice(path.indexOf(file)), file])
      return
    }
    state.set(file, 'open')
    path.push(file)
    for (const next of graph.get(file) ?? []) visit(next)
    path.pop()
    state.set(file, 'done')
  }
  for (const file of graph.keys()) visit(file)
  return found
}

function reachable (graph: Map<string, string[]>, from: string): Set<string> {
  const seen = new Set<string>()
  const stack = [from]
  while (stack.length > 0) {
    const file = stack.pop() as string
    if (seen.has(file)) continue
    seen.add(file)
    stack.push(...(graph.get(file) ?? []))
  }
  return seen
}

const graph = importGraph()

t.test('no module of src/ imports itself through others', async (t) => {
  t.ok(graph.size > 50, `${graph.size} modules read`)
  t.same(circles(graph).map((c) => c.join(' -> ')), [])
})

t.test('the key builder imports nothing above it (no validation, no writer)', async (t) => {
  t.same((graph.get('redis/keys.ts') ?? []).filter((f) => !f.startsWith('redis/') && f !== 'snowflake.ts' && f !== 'client-address.ts'), [])
})

/**
 * The layers of src/, lowest first, by path. A module loads at run time only modules of its own
 * layer or below (a type import, gone at run time, may name a shape from above: the reader's
 * results are typed by the API's schemas). The client stands alone: it loads nothing outside it.
 */
const LAYERS: ReadonlyArray<[string, readonly string[]]> = [
  ['foundation', ['snowflake.ts', 'errors.ts', 'validation.ts', 'levels/', 'periods/', 'calendar/', 'settings/settings.ts', 'rules/', 'plans.ts', 'client-address.ts', 'random.ts', 'package-info.ts', 'redis-settings.ts', 'config.ts']],
  ['redis', ['redis/']],
  ['stores', ['settings/', 'seasons/', 'history/', 'calendar-ticker/', 'reader/', 'writer/', 'api-keys/', 'tokens/', 'transfer/', 'rate-limit/', 'seed/', 'webhooks/']],
  ['http', ['http/', 'schemas/', 'live/', 'logger.ts']],
  ['pipeline and app parts', ['pipeline/', 'plugins/']],
  ['routes', ['routes/']],
  ['entries', ['app.ts', 'admin/', 'server.ts', 'server-entry.ts', 'demo/', 'cli/', 'index.ts']]
]

function layerOf (file: string): number {
  return LAYERS.findIndex(([, paths]) => paths.some((path) => file === path || file.startsWith(path)))
}

t.test('layers point down: no module loads one of a higher layer (the store never loads the HTTP layer)', async (t) => {
  const upward: string[] = []
  const unplaced: string[] = []
  for (const [file, targets] of importGraph(true)) {
    if (file.startsWith('client/')) {
      for (const target of targets) if (!target.startsWith('client/')) upward.push(`${file} -> ${target} (the client stands alone)`)
      continue
    }
    const layer = layerOf(file)
    if (layer < 0) unplaced.push(file)
    for (const target of targets) {
      if (target.startsWith('client/') && file === 'index.ts') continue // the package re-exports the client
      if (layerOf(target) > layer) upward.push(`${file} (${LAYERS[layer]?.[0] ?? '?'}) -> ${target} (${LAYERS[layerOf(target)]?.[0] ?? '?'})`)
    }
  }
  t.same(unplaced, [], 'every module has a layer')
  t.same(upward, [])
})

t.test('the main entry (the writer library) reaches no server module; guild-leaderboard/server has buildApp', async (t) => {
  const library = reachable(graph, 'index.ts')
  for (const server of ['app.ts', 'logger.ts', 'server.ts']) t.notOk(library.has(server), `index.ts does not reach ${server}`)
  t.notOk([...library].some((f) => f.startsWith('plugins/') || f.startsWith('routes/')), 'nor any plugin or route')

  // As a user's process loads it: the built package by its name, and what Node loaded meanwhile.
  const probe = "const lib = await import('guild-leaderboard'); const { createRequire } = await import('node:module'); " +
    'const loaded = Object.keys(createRequire(import.meta.url).cache); ' +
    "const server = await import('guild-leaderboard/server'); " +
    "console.log(JSON.stringify({ writer: typeof lib.LeaderboardWriter, buildApp: 'buildApp' in lib, fastify: loaded.some((p) => p.includes('/node_modules/fastify/')), " +
    "pino: loaded.some((p) => p.includes('/node_modules/pino/')), serverBuildApp: typeof server.buildApp }))"
  built('index.js') // builds when the sources changed
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
  t.equal(run.status, 0, run.stderr)
  t.same(JSON.parse(run.stdout), { writer: 'function', buildApp: false, fastify: false, pino: false, serverBuildApp: 'function' })
})

t.test('error codes are typed: a code in neither vocabulary does not compile (npm run typecheck checks this file)', async (t) => {
  // @ts-expect-error 'invalid_paramter' is a typo: neither an HTTP error code nor a library one
  const typo = new LeaderboardError('invalid_paramter', 'a typo')
  t.equal(typo.code, 'invalid_paramter', 'at run time nothing stops it: the type check does')
  const code: 'invalid_parameter' = new InvalidParameterError('x').code
  t.equal(code, 'invalid_parameter', "each class's code is its literal type")
  t.same(LIBRARY_ERROR_CODES.filter((c) => (ERROR_CODES as readonly string[]).includes(c)), [], 'the two vocabularies do not overlap')
})
