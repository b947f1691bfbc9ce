// The Lua script loader, on folders of its own: a file name that would shadow an ioredis method,
// or two files for one command, stop the load with the file named; the project's scripts load,
// each without the included functions it never names.
import t from 'tap'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadScripts, withIncludes, withoutUnusedFunctions } from '../src/redis/scripts.js'
import { redisFixture } from './helpers/redis-server.js'

const COMMANDS = fileURLToPath(new URL('../src/redis/commands/', import.meta.url))
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

t.test("an include's top-level functions that the script never names are left out of it, and nothing else", async (t) => {
  const lua = [
    '--[[ header naming unused_block ]]',
    'local function used_one (x) return x + 1 end',
    'local function unused_one (x) return x end',
    'local function helper (x)',
    '  return x * 2',
    'end',
    '-- only a whole-line comment names unused_block',
    'local function unused_block (x)',
    '  return helper(x)',
    '',
    '  -- a blank line and a comment inside',
    'end',
    'local function named_in_a_string () return 1 end',
    'local function named_after_code () return 1 end',
    'local function odd_layout (x)',
    'return x',
    'end',
    'local label = "named_in_a_string" -- named_after_code',
    'return used_one(1)'
  ].join('\n')
  const kept = withoutUnusedFunctions(lua)
  const names = (text: string): string[] => [...text.matchAll(/^local function (\w+)/gm)].map((m) => m[1] as string)
  t.same(names(kept), ['used_one', 'named_in_a_string', 'named_after_code', 'odd_layout'],
    'gone: the unused ones, and helper, which only a dropped function called; kept: what code, a string or a trailing comment names, and a function laid out otherwise than the code is')
  t.same(kept.split('\n').filter((line) => !lua.split('\n').includes(line)), [], 'no line changed')
  t.equal(kept.split('\n').length, lua.split('\n').length - 9, 'the three functions whole (blank and comment lines inside them too), the comments around them kept')
})

t.test('every project script, its unused functions left out, loads on Redis and names no function it lost', async (t) => {
  const { redis } = await redisFixture(t, 'scripts')
  for (const { file, lua } of loadScripts()) {
    const whole = readFileSync(join(COMMANDS, file), 'utf8')
    const defined = new Set([...lua.matchAll(/^local function (\w+)/gm)].map((m) => m[1]))
    const lost = [...withIncludes(whole).matchAll(/^local function (\w+)/gm)].map((m) => m[1] as string).filter((name) => !defined.has(name))
    // The header block and comments are not code (no string in the scripts holds '--'): a header that
    // names a reply's value (`now_ms`) names no function.
    const code = lua.replace(/^--\[\[[\s\S]*?\]\]/gm, '').replace(/--.*$/gm, '')
    const named = lost.filter((name) => new RegExp(`\\b${name}\\b`).test(code))
    t.same(named, [], `${file}: no dropped function is named (${lost.length} dropped)`)
    await redis.script('LOAD', lua)
  }
})
