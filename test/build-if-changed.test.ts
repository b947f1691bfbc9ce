// `npm start`'s prestart (scripts/build-if-changed.js), in a scratch project whose build only
// counts its runs: it builds the first time and after a change under src/, and not otherwise.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const SCRIPT = fileURLToPath(new URL('../scripts/build-if-changed.js', import.meta.url))

const dir = mkdtempSync(join(tmpdir(), 'lb-prestart-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })

// A build that records each run and fails while `fail` exists.
const build = "const fs = require('fs'); if (fs.existsSync('fail')) process.exit(2); " +
  "fs.mkdirSync('dist', { recursive: true }); fs.writeFileSync('dist/server.js', ''); " +
  "fs.mkdirSync('packages/client/dist', { recursive: true }); fs.writeFileSync('packages/client/dist/index.js', ''); fs.appendFileSync('builds', 'x')"
writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', private: true, scripts: { build: `node -e "${build}"` } }))
mkdirSync(join(dir, 'src', 'demo'), { recursive: true })
writeFileSync(join(dir, 'src', 'server.ts'), '')
writeFileSync(join(dir, 'src', 'demo', 'a.ts'), '')
writeFileSync(join(dir, 'tsconfig.json'), '{}')

const builds = (): number => existsSync(join(dir, 'builds')) ? readFileSync(join(dir, 'builds'), 'utf8').length : 0

function prestart (): { status: number | null, stdout: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '' }
  delete env.npm_execpath // as when run by hand: it finds npm on PATH
  const run = spawnSync(process.execPath, [SCRIPT], { cwd: dir, env, encoding: 'utf8' })
  return { status: run.status, stdout: run.stdout }
}

/**
 * Dates the last build ten seconds back, then `change`s something now: an edit made well after
 * the build, whatever the resolution of the file system's clock.
 */
function afterTheBuild (change: () => void): void {
  const earlier = new Date(Date.now() - 10_000)
  utimesSync(join(dir, 'dist', '.build-stamp'), earlier, earlier)
  change()
}

function touch (path: string): void {
  afterTheBuild(() => { utimesSync(join(dir, path), new Date(), new Date()) })
}

t.test('builds when there was no build, then not again until something changes', async (t) => {
  t.equal(prestart().status, 0)
  t.equal(builds(), 1, 'the first start builds')
  t.ok(existsSync(join(dir, 'dist', '.build-stamp')), 'and leaves a stamp')
  const warm = prestart()
  t.equal(warm.status, 0)
  t.equal(builds(), 1, 'a warm start does not build')
  t.match(warm.stdout, /up to date/)
})

t.test('an edited or removed source file, a changed tsconfig or a missing output makes the next start build', async (t) => {
  touch('src/demo/a.ts')
  prestart()
  t.equal(builds(), 2, 'an edit deep under src/')
  prestart()
  t.equal(builds(), 2)

  afterTheBuild(() => { unlinkSync(join(dir, 'src', 'demo', 'a.ts')) }) // only the folder's time tells
  prestart()
  t.equal(builds(), 3, 'a removed file')

  touch('tsconfig.json')
  prestart()
  t.equal(builds(), 4, 'a tsconfig')

  unlinkSync(join(dir, 'dist', 'server.js'))
  prestart()
  t.equal(builds(), 5, 'a missing dist/server.js')
})

t.test('a failed build fails the start and is retried next time', async (t) => {
  touch('src/server.ts')
  writeFileSync(join(dir, 'fail'), '')
  t.not(prestart().status, 0, 'the start stops')
  unlinkSync(join(dir, 'fail'))
  prestart()
  t.equal(builds(), 6, 'the next start builds')
  prestart()
  t.equal(builds(), 6)
})
