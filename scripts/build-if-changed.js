// `npm start`'s prestart, `npm test`'s pretest and the package's prepare (so `npm install` in a
// clone, a git install and `npm pack` all build): runs `npm run build` only when something it reads changed since the
// last build this script made, so a warm start skips the seconds tsc takes. "Changed" is by
// modification time: any file or folder under src/ (a folder's time moves when a file in it is
// added, removed or renamed), the tsconfigs, the build scripts and package-lock.json. A file put
// back with an old time (cp -p, tar) is not noticed: `npm run build` always builds.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const STAMP = 'dist/.build-stamp'
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'packages/client/tsconfig.json', 'scripts/copy-lua.js', 'scripts/build-if-changed.js', 'package-lock.json']

/** The newest modification time (ms) of a file, or of a folder and everything under it. */
function newest (path) {
  if (!existsSync(path)) return 0
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return readdirSync(path).reduce((latest, name) => Math.max(latest, newest(join(path, name))), stat.mtimeMs)
}

const builtAt = existsSync(STAMP) && existsSync('dist/server.js') && existsSync('packages/client/dist/index.js') ? statSync(STAMP).mtimeMs : -1
const changedAt = Math.max(...INPUTS.map(newest))
if (changedAt < builtAt) {
  console.log('build is up to date (nothing under src/ changed since the last one); `npm run build` forces one')
  process.exit(0)
}

const started = Date.now()
// The stamp's time is taken before the build, so an edit made while tsc runs is built next time.
const npm = process.env.npm_execpath
const build = npm === undefined
  ? spawnSync('npm', ['run', 'build'], { stdio: 'inherit', shell: process.platform === 'win32' })
  : spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' })
if (build.status !== 0) process.exit(build.status ?? 1)
writeFileSync(STAMP, `built from sources as of ${new Date(started).toISOString()}\n`)
utimesSync(STAMP, new Date(started), new Date(started))
