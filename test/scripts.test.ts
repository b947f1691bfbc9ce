// The Lua script loader, on folders of its own: a file name that would shadow an ioredis method,
// or two files for one command, stop the load with the file named; the project's scripts load.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadScripts } from '../src/redis/scripts.js'

const dir = mkdtempSync(join(tmpdir(), 'lb-scripts-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })

function folder (name: string, files: string[]): string {
  const path = mkdtempSync(join(dir, `${name}-`))
  for (const file of files) writeFileSync(join(path, file), 'return 1\n')
  return path
}

t.test('a script named like an ioredis method (get, multi, set-name…) is refused, naming the file', async (t) => {
  for (const file of ['get-1.lua', 'multi-0.lua', 'define-command-0.lua']) {
    t.throws(() => loadScripts(folder('taken', ['award-xp-9.lua', file])), { message: new RegExp(`^Lua script ${file} in .* which is a method of ioredis's clients; rename the file$`) }, file)
  }
})

t.test('two files for one command are refused; a well-named folder loads', async (t) => {
  t.throws(() => loadScripts(folder('twice', ['award-xp-9.lua', 'award-xp-8.lua'])), { message: /define the command awardXp/ })
  t.same(loadScripts(folder('fine', ['award-xp-9.lua'])).map(({ name, numberOfKeys }) => ({ name, numberOfKeys })), [{ name: 'awardXp', numberOfKeys: 9 }])
  t.ok(loadScripts().length >= 15, "the project's own scripts load")
})
