// The lists in the documentation that would go stale by themselves, checked against the code:
// every configuration variable, error code (with its status), metric, operationId and named
// schema the service has is documented, and the documentation names none it does not have.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import { ENV_NAMES } from '../src/config.js'
import { STATUS_BY_CODE } from '../src/http/error-codes.js'

const root = new URL('..', import.meta.url)
const docsDir = new URL('docs/', root)
const pages = ['README.md', ...(() => { try { return readdirSync(docsDir).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`) } catch { return [] } })()]
const text = pages.map((page) => readFileSync(new URL(page, root), 'utf8')).join('\n')

/** The first cell of every table row that opens with a `code` span: the names a table documents. */
function tableNames (pattern: RegExp): Set<string> {
  return new Set([...text.matchAll(/^\| `([^`]+)`/gm)].map((m) => m[1] ?? '').filter((name) => pattern.test(name)))
}

/** The first cells (code spans) of the rows of every table whose header opens with `| Variable |`. */
function variableTables (): Set<string> {
  const names = new Set<string>()
  for (const table of text.matchAll(/^\| Variable \|.*\n\|[-| ]+\|\n((?:\|.*\n?)+)/gm)) {
    for (const row of (table[1] ?? '').matchAll(/^\| `([^`]+)`/gm)) names.add(row[1] ?? '')
  }
  return names
}

t.test('every configuration variable is in the configuration table, and the table names no other', async (t) => {
  const documented = variableTables()
  const known = new Set(Object.values(ENV_NAMES))
  t.same([...known].filter((name) => !documented.has(name)), [], 'documented')
  t.same([...documented].filter((name) => !known.has(name)), [], 'none that the service does not read')
})

t.test('every error code is in the errors table with its status, and the table names no other', async (t) => {
  const rows = [...text.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map((m) => [m[2], Number(m[1])] as const)
  t.same(Object.fromEntries(rows), STATUS_BY_CODE)
})

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

t.test('every metric the service registers is in the metrics table, and the table names no other', async (t) => {
  const { app } = await buildTestApp(t, server.url, { metricsPort: 0 })
  const scraped = await (await fetch(`http://127.0.0.1:${app.metricsAddress()?.port ?? 0}/metrics`)).text()
  const ours = new Set([...scraped.matchAll(/^# TYPE ((?:leaderboard|http)_[a-z_]+) /gm)].map((m) => m[1] ?? ''))
  t.ok(ours.size >= 5, [...ours].join(', '))
  const documented = tableNames(/^(leaderboard|http)_[a-z_]+$/)
  t.same([...ours].filter((name) => !documented.has(name)), [], 'documented')
  t.same([...documented].filter((name) => !ours.has(name)), [], 'none that the service does not serve')
})

t.test('every operationId and named schema of the OpenAPI document is named in the docs', async (t) => {
  const { app } = await buildTestApp(t, server.url)
  const document = (await app.inject({ url: '/api/v1/openapi.json' })).json() as {
    paths: Record<string, Record<string, { operationId?: string }>>, components: { schemas: Record<string, unknown> }
  }
  const operationIds = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId ?? ''))
  t.ok(operationIds.length >= 7)
  const mentioned = (name: string): boolean => text.includes(`\`${name}\``)
  t.same(operationIds.filter((id) => !mentioned(id)), [], 'operationIds')
  t.same(Object.keys(document.components.schemas).filter((name) => !mentioned(name)), [], 'schemas')
})

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
function anchorOf (heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replaceAll(' ', '-')
}

t.test('every link between the README and the docs names a file and a heading that exist', async (t) => {
  const anchors = new Map<string, Set<string>>()
  for (const page of pages) {
    const body = readFileSync(new URL(page, root), 'utf8').replace(/^```[\s\S]*?^```/gm, '')
    anchors.set(page, new Set([...body.matchAll(/^#{1,4} (.+)$/gm)].map((m) => anchorOf(m[1] ?? ''))))
  }
  const broken: string[] = []
  let links = 0
  for (const page of pages) {
    const body = readFileSync(new URL(page, root), 'utf8')
    for (const [, target = ''] of body.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue // an outside address
      links++
      const [path = '', anchor] = target.split('#')
      const file = path === '' ? page : new URL(path, new URL(page, root)).pathname.slice(new URL(root).pathname.length)
      if (!anchors.has(file)) {
        if (path === '' || !/\.md$/.test(file)) continue // a file of the repository, not a page
        broken.push(`${page}: ${target} (no such page)`)
      } else if (anchor !== undefined && anchors.get(file)?.has(anchor) !== true) {
        broken.push(`${page}: ${target} (no such heading)`)
      }
    }
  }
  t.ok(links > 30, `${links} links`)
  t.same(broken, [])
})
