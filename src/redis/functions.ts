// The award scripts as Redis 7.0 functions (FUNCTION LOAD once, FCALL per call), generated from
// their .lua files. EVALSHA runs a script's whole top level on every call, making a closure of
// each function its includes define before reaching its first command (docs/benchmarks.md). A
// library's function runs its script's includes once, at its first call on a node, and only the
// script's own code per call. The .lua files stay the source: nothing here is written per script.
//
// The library, and each function in it, is named by the hash of its code, so a library left in
// Redis by an older build (an older RDB restored, an instance that never restarted) is never
// called by this one, and two builds run side by side during a rolling deploy. What happens on
// each fault is in docs/architecture.md ("How the scripts are loaded"):
// - `ERR Function not found` (a node that never had this build's library: a new owner of a slot
//   after a resharding or failover, FUNCTION FLUSH, a restore): the library is loaded on the node
//   that answered, then the call is sent again (./redirects.ts, as it sends again on NOSCRIPT).
// - FCALL or FUNCTION LOAD refused (an ACL without them, a managed Redis that disables them, a
//   Redis before 7.0): the process goes back to EVALSHA for good, with the same scripts, and the
//   client emits FUNCTIONS_REFUSED once (the service logs it).
import { createHash } from 'node:crypto'
import { Cluster, Command, type Redis } from 'ioredis'
import { scriptParts, scripts, topLevelFunctions, type ScriptDefinition } from './scripts.js'

/** The scripts run as functions: the award path. Another write script is one more name here. */
export const FUNCTION_SCRIPTS: readonly string[] = ['awardXp', 'awardBatch']

/** The event a client emits, once per process, with Redis's refusal, when FCALL or FUNCTION LOAD is refused. */
export const FUNCTIONS_REFUSED = 'functionsRefused'

/** Redis 7.0's reply to FCALL of a function no library on that node registers. */
const NOT_FOUND = /^ERR Function not found/
const ALREADY_LOADED = /^ERR Library '[^']*' already exists/
/** Functions refused: by an ACL (7.0's wording), or as an unknown command (disabled or renamed, or a Redis before 7.0). */
const REFUSED = /^NOPERM this user has no permissions to run the '(?:fcall|function\|load)' command|^ERR unknown command [`'](?:fcall|function)[`']/i

/**
 * Module state the generated functions keep from call to call (a top-level local of the includes
 * that a function assigns), with why each is safe. Any other is refused when the library is
 * built: under EVALSHA it was new at every call.
 */
const KEPT_STATE: Record<string, string> = {
  // levels.lua: set by rules.lua's load_rules in the same call before any use (curve `custom` only).
  custom_thresholds: 'set by load_rules before every use'
}

export interface ScriptLibrary {
  /** `leaderboard_<hash>`. */
  name: string
  /** The FUNCTION LOAD payload. */
  code: string
  /** Each command's function name, `<command>_<hash>`. */
  functions: Map<string, string>
}

/**
 * The code a library function may run once: `prelude`'s statements outside its functions must not
 * call Redis (only the first call on a node would) nor read KEYS or ARGV (none in a library),
 * and its functions must not change its top-level locals but those of KEPT_STATE.
 */
export function checkPrelude (file: string, prelude: string): void {
  const lines = prelude.split('\n')
  const inFunction = new Set<number>()
  for (const { from, to } of topLevelFunctions(lines)) for (let i = from; i <= to; i++) inFunction.add(i)
  const code = (line: string): string => line.replace(/--.*$/, '')
  const declared = new Set<string>()
  lines.forEach((line, i) => {
    if (/\b(?:KEYS|ARGV)\b/.test(code(line))) throw new Error(`Lua script ${file}: an include reads KEYS or ARGV (${line.trim()}); pass them as arguments`)
    if (inFunction.has(i)) return
    if (/\bredis\s*\./.test(code(line))) throw new Error(`Lua script ${file}: an include calls Redis outside a function (${line.trim()})`)
    const names = /^local\s+(?!function\b)([A-Za-z_][\w\s,]*?)\s*(?:=|$)/.exec(line)?.[1]
    for (const name of names?.split(',') ?? []) declared.add(name.trim())
  })
  for (const i of inFunction) {
    const line = code(lines[i] as string).trim()
    if (line.startsWith('local ')) continue
    for (const name of declared) {
      if (name in KEPT_STATE) continue
      const assigned = new RegExp(`(?:^|,\\s*)${name}(?:\\s*\\[[^\\]]*\\]|\\.[A-Za-z_]\\w*)*\\s*(?:,[^=]*)?=(?!=)`)
      if (assigned.test(line)) throw new Error(`Lua script ${file}: an include's function changes its top-level ${name} (${line}); a library keeps it from call to call`)
    }
  }
}

/** The library of the scripts `names` (FUNCTION_SCRIPTS) among `definitions`: each script's includes run once, its own code per call. */
export function buildLibrary (definitions: readonly ScriptDefinition[], dir?: string, names: readonly string[] = FUNCTION_SCRIPTS): ScriptLibrary {
  const chosen = definitions.filter(({ name }) => names.includes(name))
  const parts = chosen.map(({ file, name, numberOfKeys }) => {
    if (numberOfKeys === undefined) throw new Error(`Lua script ${file}: a function's number of keys must be fixed`)
    const { prelude, body } = scriptParts(file, dir)
    checkPrelude(file, prelude)
    return [
      `-- ${file}`,
      `local function ${name}_init ()`,
      prelude,
      'return function (KEYS, ARGV)',
      body,
      'end',
      'end',
      `local ${name}_run`,
      `redis.register_function('${name}_@HASH@', function (keys, args)`,
      `  if ${name}_run == nil then ${name}_run = ${name}_init() end`,
      `  return ${name}_run(keys, args)`,
      'end)'
    ].join('\n')
  })
  const text = ['#!lua name=leaderboard_@HASH@', ...parts].join('\n')
  const hash = createHash('sha1').update(text).digest('hex').slice(0, 16)
  return {
    name: `leaderboard_${hash}`,
    code: text.replaceAll('@HASH@', hash),
    functions: new Map(chosen.map(({ name }) => [name, `${name}_${hash}`]))
  }
}

/** ./client.ts's RedisClient (which imports this module). */
type RedisClient = Redis | Cluster

/** Why this process sends EVALSHA again, once FCALL or FUNCTION LOAD was refused. */
let refused: string | undefined

/** Redis's refusal that sent this process back to EVALSHA, if one did. */
export function functionsRefused (): string | undefined {
  return refused
}

function fallBack (client: RedisClient, reason: string): void {
  if (refused !== undefined) return
  refused = reason
  client.emit(FUNCTIONS_REFUSED, reason)
}

/** What a call needs to go as FCALL, or as EVAL once functions are refused. */
interface FunctionScript {
  fn: string
  lua: string
  library: ScriptLibrary
}

/** The FUNCTION LOAD under way on each node (a node's many calls that met "not found" wait for one). */
const loading = new WeakMap<object, Promise<void>>()

function nodeOf (client: RedisClient, socket: object | undefined): Redis | undefined {
  if (!(client instanceof Cluster)) return client
  return client.nodes('all').find((node) => node.stream === socket)
}

async function loadLibrary (client: RedisClient, node: Redis, library: ScriptLibrary): Promise<void> {
  try {
    // Sent at once, not auto-pipelined: the pipeline of the call that met "not found" is still
    // running, and ioredis holds the next one back until it ends.
    const load = new Command('function', ['LOAD', library.code], { replyEncoding: 'utf8' })
    await (node.sendCommand(load) as Promise<unknown>)
  } catch (err) {
    const message = (err as Error).message
    if (ALREADY_LOADED.test(message)) return // another instance, or another call of this one, got there first
    if (REFUSED.test(message)) { fallBack(client, message); return }
    throw err
  } finally {
    loading.delete(node)
  }
}

/** An FCALL that knows which node answered it, and how to recover from "not found" or a refusal (./redirects.ts calls `recover`). */
export class FunctionCommand extends Command {
  declare script: FunctionScript
  declare socket: object | undefined

  override toWritable (socket: object): string | Buffer {
    this.socket = socket
    return super.toWritable(socket)
  }

  /**
   * When `err` is "not found" or a refusal (else undefined): makes the call ready to be sent
   * again, after loading the library on the node that answered, or as EVAL once functions are
   * refused.
   */
  recover (err: Error, client: RedisClient): Promise<void> | undefined {
    if (!NOT_FOUND.test(err.message) && !REFUSED.test(err.message)) return undefined
    return this.#recover(err, client)
  }

  async #recover (err: Error, client: RedisClient): Promise<void> {
    if (REFUSED.test(err.message)) fallBack(client, err.message)
    // A call that met "not found" after its node loaded the library (flushed again meanwhile: a
    // FUNCTION FLUSH loop, a restore) goes as the script itself, which no flush can make fail:
    // each call ends within one load, however often the functions go.
    const again = this.#loadedFor
    if (refused === undefined && !again) {
      this.#loadedFor = true
      const node = nodeOf(client, this.socket)
      if (node !== undefined) {
        let load = loading.get(node)
        if (load === undefined) {
          load = loadLibrary(client, node, this.script.library)
          loading.set(node, load)
        }
        await load
      }
    }
    if (refused !== undefined || again) {
      // Sent as the script itself (EVAL also caches it for the EVALSHAs that follow).
      this.name = 'eval'
      this.args[0] = this.script.lua
    }
  }

  /** Met "not found" once already, and waited for its node's load. */
  #loadedFor = false
}

/** A client or a pipeline, as ioredis hands it to Script#execute. */
interface Container { sendCommand: (command: Command) => unknown }

interface ScriptInternals {
  numberOfKeys: number | null
  keyPrefix: string
  readOnly: boolean
  execute: (container: Container, args: unknown[], options: Record<string, unknown>, callback?: unknown) => unknown
}

const SCRIPT = Symbol('functionScript')
const EVALSHA = Symbol('evalsha')

type FunctionScriptInternals = ScriptInternals & { [SCRIPT]: FunctionScript, [EVALSHA]: ScriptInternals['execute'] }

/** ioredis's Script#execute (the one every call of a defined command goes through), sending FCALL while functions are not refused. */
function execute (this: FunctionScriptInternals, container: Container, args: unknown[],
  options: Record<string, unknown>, callback?: unknown): unknown {
  if (refused !== undefined) return this[EVALSHA](container, args, options, callback)
  if (typeof this.numberOfKeys === 'number') args.unshift(this.numberOfKeys)
  if (this.keyPrefix !== '') options.keyPrefix = this.keyPrefix
  if (this.readOnly) options.readOnly = true
  const script = this[SCRIPT]
  const command = new FunctionCommand('fcall', [script.fn, ...args] as string[], options, callback as undefined)
  command.script = script
  return container.sendCommand(command)
}

let cached: ScriptLibrary | undefined

/** This build's library, generated the first time only. */
export function library (): ScriptLibrary {
  cached ??= buildLibrary(scripts())
  return cached
}

/**
 * Makes FUNCTION_SCRIPTS's commands on `client` (defined by ./scripts.ts's defineCommands) call
 * their functions. For createRedis's clients alone, which send a command again when its
 * `recover` says so (./redirects.ts): a plain client would hand "not found" to its caller.
 */
export function defineFunctions (client: RedisClient): void {
  const lib = library()
  const defined = (client as unknown as { scriptsSet: Record<string, FunctionScriptInternals | undefined> }).scriptsSet
  for (const { name, lua } of scripts()) {
    const fn = lib.functions.get(name)
    const target = defined[name]
    if (fn === undefined || target === undefined || target[SCRIPT] !== undefined) continue
    target[SCRIPT] = { fn, lua, library: lib }
    target[EVALSHA] = target.execute.bind(target)
    target.execute = execute
  }
}

/** What `prune` found on one primary. */
export interface PrunedNode {
  /** host:port */
  node: string
  /** The libraries of other builds (`leaderboard_<hash>`) deleted, or with `dryRun` that would be. */
  deleted: string[]
  /** This build's library, when the node has it. */
  kept: string | undefined
}

const OUR_LIBRARY = /^leaderboard_[0-9a-f]{16}$/

/**
 * Deletes, on every primary, the libraries older builds of the service loaded (named
 * `leaderboard_<hash>`, never called by this build), keeping this build's and any library not
 * the service's. For after an upgrade: an instance still running an older build loads its
 * library again at its next award (it meets "Function not found", as after a FUNCTION FLUSH).
 */
export async function pruneLibraries (client: RedisClient, options: { dryRun?: boolean } = {}): Promise<PrunedNode[]> {
  const ours = library().name
  const nodes = client instanceof Cluster ? client.nodes('master') : [client]
  return await Promise.all(nodes.map(async (node) => {
    const send = async (args: string[]): Promise<unknown> => await (node.sendCommand(new Command('function', args, { replyEncoding: 'utf8' })) as Promise<unknown>)
    const listed = await send(['LIST', 'LIBRARYNAME', 'leaderboard_*']) as unknown[][]
    // Each library is a flat list of field, value: library_name, engine, functions.
    const names = listed.map((entry) => String(entry[entry.indexOf('library_name') + 1])).filter((name) => OUR_LIBRARY.test(name))
    const deleted = names.filter((name) => name !== ours)
    if (options.dryRun !== true) {
      for (const name of deleted) {
        await send(['DELETE', name]).catch((err: Error) => {
          if (!/^ERR Library not found/.test(err.message)) throw err // another prune got there first
        })
      }
    }
    return { node: `${node.options.host ?? '127.0.0.1'}:${node.options.port ?? 6379}`, deleted, kept: names.includes(ours) ? ours : undefined }
  }))
}
