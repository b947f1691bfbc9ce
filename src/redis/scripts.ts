// Loads every Lua script under ./commands once and registers it on a client with defineCommand.
// A file `<name>-<numberOfKeys>.lua` becomes the command `<camelCaseName>`; a line
// `--- @include "x"` is replaced by commands/includes/x.lua (each include at most once).
// The commands' TypeScript signatures are declared in ./client.ts (its `declare module 'ioredis'`).
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import type { Cluster, Redis } from 'ioredis'

const COMMANDS_DIR = fileURLToPath(new URL('./commands/', import.meta.url))
const INCLUDE = /^--- @include "([a-z0-9-]+)"$/m

export interface ScriptDefinition {
  name: string
  numberOfKeys: number
  lua: string
}

function resolveIncludes (source: string, seen: Set<string>): string {
  return source.replace(new RegExp(INCLUDE.source, 'gm'), (_line, name: string) => {
    if (seen.has(name)) return ''
    seen.add(name)
    return resolveIncludes(readFileSync(join(COMMANDS_DIR, 'includes', `${name}.lua`), 'utf8'), seen)
  })
}

function loadScripts (): ScriptDefinition[] {
  const loaded = readdirSync(COMMANDS_DIR)
    .filter((file) => file.endsWith('.lua'))
    .map((file) => {
      const match = /^([a-z-]+)-(\d+)\.lua$/.exec(file)
      if (match === null) throw new Error(`Lua script ${file} is not named <name>-<numberOfKeys>.lua`)
      const [, base = '', keys = '0'] = match
      return {
        name: base.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase()),
        numberOfKeys: Number(keys),
        lua: resolveIncludes(readFileSync(join(COMMANDS_DIR, file), 'utf8'), new Set())
      }
    })
  const names = loaded.map((s) => s.name)
  const twice = names.find((name, i) => names.indexOf(name) !== i)
  if (twice !== undefined) throw new Error(`two Lua scripts in ${COMMANDS_DIR} define the command ${twice}`)
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
 * that is handed a client (writer, reader, key store), so a plain `new Redis()` works too.
 */
export function defineCommands (client: Redis | Cluster): void {
  for (const { name, numberOfKeys, lua } of scripts()) {
    if (!(name in client)) client.defineCommand(name, { numberOfKeys, lua })
  }
}
