// ioredis 5.11 makes, for every command, objects that V8 allocates straight in the old generation,
// each pointing at the command's young objects: a function literal stored directly in a property
// (`this.reject = (err) => …` in Command#initPromise and in a defined script's toWritable: V8
// "pretenures" such closures in interpreted and Maglev code), and the getter pair of the `length`
// property every Pipeline (so every auto-pipelined turn) defines on itself. Old objects are only
// collected by a full collection, and until then each young collection (scavenge) takes what they
// point at as live: the command, its arguments, its promise, the request awaiting it. Measured,
// and the change to send upstream written up, in docs/benchmarks.md ("Young collections").
//
// This installs the same methods written so that V8 allocates nothing old for a command (the
// closure is first held in a local; `length` is a getter on Pipeline.prototype). It replaces
// ioredis's code for the whole process, so only the service's own process installs it
// (src/server.ts, at start, logging whether it applied); importing the library changes nothing.
// It applies to ioredis 5.11.1 alone (package.json pins it), and only when each method it
// replaces is exactly that release's (its source's SHA-256): another version, a file moved or a
// method changed leaves ioredis as it is (correct, only slower) and says why; never a crash.
// test/ioredis-gc-fix.test.ts fails on an upgrade, to have the change looked at.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const requireCjs = createRequire(import.meta.url)

/** The one ioredis release the replacements are written for. */
export const IOREDIS_VERSION = '5.11.1'

/* The SHA-256 of each replaced function's source (whitespace collapsed), as ioredis 5.11.1 ships it. */
const INIT_PROMISE_SHA = '27f7ecdab4c8ceeb6b968414a7769cc985d7e78f356e494243c2fa88b3d990be'
const PIPELINE_SHA = '44bb0dd82aac6775398ab38878bc7979aae4a9c6f30356d47eb20957013571d5'
const SCRIPT_TO_WRITABLE_SHA = 'f0307e733f48879788b166a8a3d5b775ea88d4e210b9b250678de9957dc639b8'

type Callback = (err: Error | null, value?: unknown) => void

interface CommandLike {
  name: string
  args: unknown[]
  transformed?: boolean
  callback?: Callback
  errorStack?: Error
  promise: Promise<unknown>
  resolve: (value: unknown) => void
  reject: (err: Error) => void
  stringifyArguments: () => void
  _convertValue: (resolve: (value: unknown) => void) => (value: unknown) => void
  _clearTimers: () => void
  toWritable: (socket: object) => string | Buffer
  initPromise: () => void
}

interface CommandClass {
  prototype: CommandLike
  _transformer: { argument: Record<string, ((args: unknown[]) => unknown[]) | undefined> }
}

export interface ScriptLike {
  lua: string
  sha: string
  Command: { prototype: CommandLike }
}

type PipelineClass = new (redis: object) => object

/** ioredis's modules that the replacements stand in for or call: private paths, loaded by installIoredisGcFix alone. */
interface Internals {
  /** …/ioredis/built, whose __dirname the stacks are cut at. */
  dir: string
  Command: CommandClass
  pipelineModule: { default: PipelineClass }
  Commander: new () => object
  Script: new (lua: string) => ScriptLike
  optimizeErrorStack: (err: Error, stack: string | undefined, path: string) => Error
  asCallback: (promise: Promise<unknown>, callback?: Callback) => Promise<unknown>
}

function loadInternals (dir: string): Internals {
  return {
    dir,
    Command: (requireCjs('ioredis/built/Command.js') as { default: CommandClass }).default,
    pipelineModule: requireCjs('ioredis/built/Pipeline.js') as Internals['pipelineModule'],
    Commander: (requireCjs('ioredis/built/utils/Commander.js') as { default: Internals['Commander'] }).default,
    Script: (requireCjs('ioredis/built/Script.js') as { default: Internals['Script'] }).default,
    optimizeErrorStack: (requireCjs('ioredis/built/utils/index.js') as Pick<Internals, 'optimizeErrorStack'>).optimizeErrorStack,
    asCallback: (requireCjs(requireCjs.resolve('standard-as-callback', { paths: [dir] })) as { default: Internals['asCallback'] }).default
  }
}

/** SHA-256 of a function's source, whitespace collapsed. */
export function sourceHash (fn: unknown): string {
  return createHash('sha256').update(String(fn).replace(/\s+/g, ' ')).digest('hex')
}

/** ioredis's Command#initPromise, the reject closure held in a local first. */
function makeInitPromise ({ Command, optimizeErrorStack, asCallback, dir }: Internals): () => void {
  return function initPromise (this: CommandLike): void {
    const promise = new Promise((resolve, reject) => {
      if (this.transformed !== true) {
        this.transformed = true
        const transformer = Command._transformer.argument[this.name]
        if (transformer !== undefined) this.args = transformer(this.args)
        this.stringifyArguments()
      }
      this.resolve = this._convertValue(resolve)
      const rejectCommand = (err: Error): void => {
        this._clearTimers()
        if (this.errorStack !== undefined) reject(optimizeErrorStack(err, this.errorStack.stack, dir))
        else reject(err)
      }
      this.reject = rejectCommand
    })
    this.promise = asCallback(promise, this.callback)
  }
}

type ClientLike = Record<string, unknown> & { scriptsSet: Record<string, { sha: string }>, addedBuiltinSet: Set<string> }

/** What every pipeline of one client shares: its scripts' and added commands' methods, and the scripts by SHA. */
interface SharedPart { scripts: number, builtins: number, prototype: object }

/**
 * The prototype of a client's pipelines: Pipeline.prototype, then, as getters that read the
 * client's current method (a script defined again under its name is the new one), each method
 * ioredis copied onto every pipeline (two for each script and each added command, so a client of
 * 43 scripts wrote 86 properties and a map of 43 on each auto-pipelined turn).
 */
function sharedPart (original: PipelineClass, redis: ClientLike): SharedPart {
  const prototype = Object.create(original.prototype) as Record<string, unknown>
  const shaToScript: Record<string, unknown> = {}
  const forward = (name: string): void => {
    for (const method of [name, `${name}Buffer`]) {
      Object.defineProperty(prototype, method, { configurable: true, enumerable: true, get () { return redis[method] } })
    }
  }
  const names = Object.keys(redis.scriptsSet)
  for (const name of names) {
    shaToScript[(redis.scriptsSet[name] as { sha: string }).sha] = redis.scriptsSet[name]
    forward(name)
  }
  for (const name of redis.addedBuiltinSet) forward(name)
  prototype._shaToScript = shaToScript // never read by 5.11.1; kept for what reads a pipeline's fields
  return { scripts: names.length, builtins: redis.addedBuiltinSet.size, prototype }
}

/**
 * ioredis's Pipeline constructor, without the `length` getter it defined on each instance, and
 * with the client's script methods on a prototype made once per client (remade when a script
 * or a command is added), not copied onto each pipeline.
 */
function makePipeline (original: PipelineClass, Commander: Internals['Commander']): PipelineClass {
  const shared = new WeakMap<object, SharedPart>()
  const Pipeline = function (this: unknown, redis: ClientLike): object {
    let part = shared.get(redis)
    if (part === undefined || part.scripts !== Object.keys(redis.scriptsSet).length || part.builtins !== redis.addedBuiltinSet.size) {
      part = sharedPart(original, redis)
      shared.set(redis, part)
    }
    const self = Object.assign(Object.create(part.prototype) as Record<string, unknown>, new Commander())
    self.redis = redis
    self.isPipeline = true
    self.replyPending = 0
    self._queue = []
    self._result = []
    self._transactions = 0
    self.isCluster = redis.constructor.name === 'Cluster' || redis.isCluster === true
    self.options = redis.options
    self.promise = new Promise((resolve, reject) => {
      self.resolve = resolve
      self.reject = reject
    })
    return self
  } as unknown as PipelineClass
  Pipeline.prototype = original.prototype
  Object.defineProperty(original.prototype, 'length', {
    configurable: true,
    get (this: { _queue: unknown[] }) { return this._queue.length }
  })
  return Pipeline
}

/** Whether the replacements are in, and why not. */
export interface GcFixOutcome {
  applied: boolean
  /** The installed ioredis's version, when it could be read. */
  ioredisVersion?: string
  /** Why nothing was replaced. */
  reason?: string
}

let installed: GcFixOutcome | undefined

/**
 * Installs the replacements of Command#initPromise and the Pipeline constructor, and of the
 * toWritable of each script defined from then on (fixScriptCommand), once per process: all of
 * them, or, when anything differs from ioredis 5.11.1 (its version, a file, a method's code),
 * none, with the reason. Never throws. For the service's own process alone (see the top of this file).
 */
export function installIoredisGcFix (): GcFixOutcome {
  if (installed !== undefined) return installed
  let ioredisVersion: string | undefined
  try {
    const dir = dirname(requireCjs.resolve('ioredis'))
    ioredisVersion = (JSON.parse(readFileSync(join(dir, '..', 'package.json'), 'utf8')) as { version?: string }).version
    if (ioredisVersion !== IOREDIS_VERSION) {
      installed = { applied: false, ioredisVersion, reason: `written for ioredis ${IOREDIS_VERSION} exactly` }
      return installed
    }
    const internals = loadInternals(dir)
    const changed = [
      sourceHash(internals.Command.prototype.initPromise) !== INIT_PROMISE_SHA && 'Command#initPromise',
      sourceHash(internals.pipelineModule.default) !== PIPELINE_SHA && 'the Pipeline constructor',
      sourceHash(new internals.Script('return 1').Command.prototype.toWritable) !== SCRIPT_TO_WRITABLE_SHA && "a script command's toWritable"
    ].filter((name) => name !== false)
    if (changed.length > 0) {
      installed = { applied: false, ioredisVersion, reason: `ioredis's code differs from ${IOREDIS_VERSION}'s: ${changed.join(', ')}` }
      return installed
    }
    internals.Command.prototype.initPromise = makeInitPromise(internals)
    internals.pipelineModule.default = makePipeline(internals.pipelineModule.default, internals.Commander)
    installed = { applied: true, ioredisVersion }
  } catch (err) {
    installed = { applied: false, ioredisVersion, reason: `ioredis's files are not those of ${IOREDIS_VERSION}: ${String((err as Error).message).split('\n')[0] ?? ''}` }
  }
  return installed
}

const fixedScripts = new WeakSet<object>()

/**
 * Once installIoredisGcFix has applied (else it does nothing), replaces a defined script's
 * toWritable (which sends EVAL the first time on each connection and EVALSHA after, and forgets
 * a connection whose Redis answered NOSCRIPT) by the same code with its reject closure held in a
 * local. Returns whether it applied.
 */
export function fixScriptCommand (script: ScriptLike): boolean {
  if (installed?.applied !== true) return false
  const proto = script.Command.prototype
  if (fixedScripts.has(proto)) return true
  if (sourceHash(proto.toWritable) !== SCRIPT_TO_WRITABLE_SHA) return false
  const { lua, sha } = script
  const loaded = new WeakSet<object>()
  const base = Object.getPrototypeOf(proto) as CommandLike
  proto.toWritable = function toWritable (this: CommandLike, socket: object): string | Buffer {
    const rejectCommand = this.reject
    const reject = (err: Error): void => {
      if (err.message.includes('NOSCRIPT')) loaded.delete(socket)
      rejectCommand.call(this, err)
    }
    this.reject = reject
    if (!loaded.has(socket)) {
      loaded.add(socket)
      this.name = 'eval'
      this.args[0] = lua
    } else if (this.name === 'eval') {
      this.name = 'evalsha'
      this.args[0] = sha
    }
    return base.toWritable.call(this, socket)
  }
  fixedScripts.add(proto)
  return true
}
