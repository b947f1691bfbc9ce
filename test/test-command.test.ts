// The README's test command is what CI runs, and it takes the fast path by itself: test files
// load their TypeScript through tsx (.taprc), never through tap's default ts-node plugin, also on
// the first run after a fresh install (npm test's pretest rebuilds tap's test class first).
import t from 'tap'
import { readFileSync } from 'node:fs'

const read = (path: string): string => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8')

t.test("the README's test command is the command CI runs", async (t) => {
  const command = /^(.+?)\s+# installs and runs the test suite/m.exec(read('README.md'))?.[1]
  t.equal(command, 'npm ci && npm test', "the README's quick start names it")
  const ci = read('.ci/run').split('\n').filter((line) => !line.trimStart().startsWith('#'))
  t.ok(ci.some((line) => line.trim() === command), '.ci/run runs that very line')
  const runs = ci.filter((line) => !line.trimStart().startsWith('echo'))
  t.same(runs.filter((line) => /\bnpm (ci|test)\b/.test(line)), [command ?? ''], 'the only line that installs the project or runs its tests')
  t.same(runs.filter((line) => /\b(npx tap|tap build)\b/.test(line)), [], 'no step of tap of its own before it (a build, say)')
})

t.test('this test process loads TypeScript through tsx, not through ts-node', async (t) => {
  const args = process.execArgv.join(' ')
  t.match(args, /--import=tsx\/esm/, `tsx's ES module hooks (${args})`)
  t.notMatch(args, /ts-node|@tapjs\/typescript/, "not tap's TypeScript plugin")
})
