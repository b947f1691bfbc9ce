// Loads every Lua script under ./commands once and registers it on a client with defineCommand.
// A file `<name>-<numberOfKeys>.lua` becomes the command `<camelCaseName>`; a script whose keys
// vary in number is `<name>-n.lua`, and its caller gives their number first. A line
// `--- @include "x"` is replaced by commands/includes/x.lua (each include at most once), and the
// includes' top-level functions the script never names are left out (withoutUnusedFunctions).
// The commands' TypeScript signatures are declared in ./client.ts (its `declare module 'ioredis'`).
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { Cluster, Redis } from 'ioredis'
import { fixScriptCommand, type ScriptLike } from './ioredis-gc-fix.js'

const COMMANDS_DIR = fileURLToPath(new URL('./commands/', import.meta.url))
const INCLUDE = /^--- @include "([a-z0-9-]+)"$/m

export interface ScriptDefinition {
  /** The .lua file's name. */
  file: string
  name: string
  /** undefined: the caller gives the number of keys first (`<name>-n.lua`). */
  numberOfKeys: number | undefined
  lua: string
}

function resolveIncludes (dir: string, source: string, seen: Set<string>): string {
  return source.replace(new RegExp(INCLUDE.source, 'gm'), (_line, name: string) => {
    if (seen.has(name)) return ''
    seen.add(name)
    return resolveIncludes(dir, readFileSync(join(dir, 'includes', `${name}.lua`), 'utf8'), seen)
  })
}

const FUNCTION_HEADER = /^local function ([A-Za-z_][A-Za-z0-9_]*)\s*\(/

/** The lines [from, to] of each top-level `local function` whose extent is certain (the code's style). */
export function topLevelFunctions (lines: string[]): Array<{ name: string, from: number, to: number }> {
  const found: Array<{ name: string, from: number, to: number }> = []
  for (let i = 0; i < lines.length; i++) {
    const name = FUNCTION_HEADER.exec(lines[i] as string)?.[1]
    if (name === undefined) continue
    const next = lines[i + 1] ?? ''
    if (/\bend$/.test(lines[i] as string) && !/^\s/.test(next)) {
      found.push({ name, from: i, to: i }) // written on one line
      continue
    }
    // A block: indented lines (or blank ones) up to a line `end`; anything else leaves it alone.
    let j = i + 1
    while (j < lines.length && (lines[j] === '' || /^\s/.test(lines[j] as string))) j++
    if (lines[j] === 'end') found.push({ name, from: i, to: j })
  }
  return found
}

/**
 * `lua` without the top-level `local function`s that nothing else in it names, repeatedly (a
 * function only a dropped one called goes too). Every EVALSHA runs its script's top level again,
 * making a closure of each such function (garbage for Lua's collector on every call), and every
 * loaded script keeps its compiled functions in Redis's one Lua heap, which that collector walks:
 * an include brings all its functions into each script that includes it, whichever it calls.
 * A name counts as used wherever it occurs outside whole-line comments (a trailing comment or a
 * string naming it keeps the function: never the other way round), so only dead code goes.
 */
export function withoutUnusedFunctions (lua: string): string {
  let lines = lua.split('\n')
  for (;;) {
    const functions = topLevelFunctions(lines)
    const drop = new Set<number>()
    for (const { name, from, to } of functions) {
      const rest = [...lines.slice(0, from), ...lines.slice(to + 1)].join('\n')
        .replace(/^--\[\[[\s\S]*?\]\]/gm, '')
        .replace(/^\s*--.*$/gm, '')
      if (!new RegExp(`\\b${name}\\b`).test(rest)) for (let i = from; i <= to; i++) drop.add(i)
    }
    if (drop.size === 0) return lines.join('\n')
    lines = lines.filter((_, i) => !drop.has(i))
  }
}

/** Whether each line holds code: not blank, not a comment, not inside a `--[[ … ]]` block (the header). */
function codeLines (lines: string[]): boolean[] {
  let inBlock = false
  return lines.map((line) => {
    if (inBlock) {
      inBlock = !line.includes(']]')
      return false
    }
    if (/^\s*--\[\[/.test(line)) {
      inBlock = !line.includes(']]')
      return false
    }
    return line.trim() !== '' && !/^\s*--/.test(line)
  })
}

/** The line that parts a script's includes from its own code while withoutUnusedFunctions reads them as one. */
const BODY_MARK = '-- (the script\'s own code)'

/**
 * A script file in two parts: `prelude`, what its includes define (functions and constants,
 * with the functions it never names left out, as in its `lua`), and `body`, the file's own
 * code and header, which reads KEYS and ARGV. ./functions.ts runs the prelude once and the body
 * per call. Refused (an error naming the file) when an `--- @include` line follows code: what
 * the include defines would then not come first.
 */
export function scriptParts (file: string, dir = COMMANDS_DIR): { prelude: string, body: string } {
  const lines = readFileSync(join(dir, file), 'utf8').split('\n')
  const includes = lines.filter((line) => INCLUDE.test(line))
  const isCode = codeLines(lines)
  const firstCode = lines.findIndex((line, i) => isCode[i] === true && !INCLUDE.test(line))
  if (firstCode !== -1 && lines.slice(firstCode).some((line) => INCLUDE.test(line))) {
    throw new Error(`Lua script ${file}: an --- @include line follows code; put the includes first`)
  }
  const whole = withoutUnusedFunctions([resolveIncludes(dir, includes.join('\n'), new Set()), BODY_MARK,
    ...lines.filter((line) => !INCLUDE.test(line))].join('\n'))
  const at = whole.indexOf(`\n${BODY_MARK}\n`)
  return { prelude: whole.slice(0, at), body: whole.slice(at + BODY_MARK.length + 2) }
}

/** `source` with its `--- @include` lines replaced by the includes of ./commands/includes (tests run an include's function this way). */
export function withIncludes (source: string): string {
  return resolveIncludes(COMMANDS_DIR, source, new Set())
}

/**
 * The scripts of a folder (default: ./commands). A script whose command name is already a method
 * of ioredis's clients (`get`, `multi`, `quit`…) is refused: defineCommand would replace the
 * client's own method, or, skipped, leave every call of it going to ioredis's.
 */
export function loadScripts (dir = COMMANDS_DIR): ScriptDefinition[] {
  const loaded = readdirSync(dir)
    .filter((file) => file.endsWith('.lua'))
    .map((file) => {
      const match = /^([a-z-]+?)-(\d+|n)\.lua$/.exec(file)
      if (match === null) throw new Error(`Lua script ${file} is not named <name>-<numberOfKeys>.lua (or <name>-n.lua)`)
      const [, base = '', keys = '0'] = match
      return {
        file,
        name: base.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase()),
        numberOfKeys: keys === 'n' ? undefined : Number(keys),
        lua: withoutUnusedFunctions(resolveIncludes(dir, readFileSync(join(dir, file), 'utf8'), new Set()))
      }
    })
  const taken = loaded.find(({ name }) => name in Redis.prototype || name in Cluster.prototype)
  if (taken !== undefined) throw new Error(`Lua script ${taken.file} in ${dir} would define ${taken.name}, which is a method of ioredis's clients; rename the file`)
  const names = loaded.map((s) => s.name)
  const twice = names.find((name, i) => names.indexOf(name) !== i)
  if (twice !== undefined) throw new Error(`two Lua scripts in ${dir} define the command ${twice}`)
  return loaded
}

let cached: ScriptDefinition[] | undefined

/** The scripts, read from disk the first time only. */
export function scripts (): ScriptDefinition[] {
  cached ??= loadScripts()
  return cached
}

/**
 * Registers every script on `client`. Idempotent: createRedis calls it, and so does every class
 * that is handed a client (writer, reader, key store), so a plain `new Redis()` works too. In the
 * service's own process, where the server installed ./ioredis-gc-fix.ts, each script's command
 * goes without the old-generation objects that made young collections slow; elsewhere (a bot
 * importing the library) the scripts are ioredis's as it ships them.
 */
export function defineCommands (client: Redis | Cluster): void {
  for (const { name, numberOfKeys, lua } of scripts()) {
    if (name in client) continue
    client.defineCommand(name, numberOfKeys === undefined ? { lua } : { numberOfKeys, lua })
    fixScriptCommand((client as unknown as { scriptsSet: Record<string, ScriptLike> }).scriptsSet[name] as ScriptLike)
  }
}
