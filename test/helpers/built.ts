// The built package (dist/), as users run the CLI and the server. Child processes start from it:
// node on plain JavaScript starts in a third of the time tsx takes to compile the sources
// (0.5 s against 1.2 s for `--help` here), and the CLI and server tests start dozens of them.
// `npm test` builds first (its pretest runs scripts/build-if-changed.js); a test file run on
// its own builds here when src/ changed since the last build.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

const build = spawnSync(process.execPath, [join(ROOT, 'scripts/build-if-changed.js')], { cwd: ROOT, encoding: 'utf8' })
if (build.status !== 0) throw new Error(`the build failed:\n${build.stdout}${build.stderr}`)

/** A built entry point, by its path under dist/ (`cli/main.js`, `server.js`). */
export function built (entry: string): string {
  return join(ROOT, 'dist', entry)
}
