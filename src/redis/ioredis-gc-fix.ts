// ioredis 5.11 makes, for every command, objects that V8 allocates straight in the old generation,
// each pointing at the command's young objects: a function literal stored directly in a property
// (`this.reject = (err) => …` in Command#initPromise and in a defined script's toWritable: V8
// "pretenures" such closures in interpreted and Maglev code), and the getter pair of the `length`
// property every Pipeline (so every auto-pipelined turn) defines on itself. Old objects are only
// collected by a full collection, and until then each young collection (scavenge) takes what they
// point at as live: the command, its arguments, its promise, the request awaiting it. In the
// service that was some 12 % of all it allocated, copied and promoted at every scavenge (6.5 MB
// each, 8 to 12 ms pauses every second at 1,000 awards a second: the write API's latency tail).
//
// This installs the same methods written so that V8 allocates nothing old for a command (the
// closure is first held in a local; `length` is a getter on Pipeline.prototype). Each replacement
// applies only when the code it replaces is exactly ioredis 5.11.1's (its source's SHA-256), so an
// upgrade that changes it leaves ioredis as it is (correct, only slower); test/ioredis-gc-fix.test.ts
// then fails, to have the change looked at. Measured in docs/benchmarks.md ("Young collections").
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'

const requireCjs = createRequire(import.meta.url)
const IOREDIS_DIR = dirname(requireCjs.resolve('ioredis')) // …/ioredis/built, whose __dirname the stacks are cut at

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

const { default: Command } = requireCjs('ioredis/built/Command.js') as { default: CommandClass }
const pipelineModule = requireCjs('ioredis/built/Pipeline.js') as { default: new (redis: object) => object }
const { default: Commander } = requireCjs('ioredis/built/utils/Commander.js') as { default: new () => object }
const { optimizeErrorStack } = requireCjs('ioredis/built/utils/index.js') as { optimizeErrorStack: (err: Error, stack: string | undefined, path: string) => Error }
const { default: asCallback } = requireCjs(requireCjs.resolve('standard-as-callback', { paths: [IOREDIS_DIR] })) as {
  default: (promise: Promise<unknown>, callback?: Callback) => Promise<unknown>
}

/** SHA-256 of a function's source, whitespace collapsed. */
export function sourceHash (fn: unknown): string {
  return createHash('sha256').update(String(fn).replace(/\s+/g, ' ')).digest('hex')
}

/** ioredis's Command#initPromise, the reject closure held in a local first. */
function initPromise (this: CommandLike): void {
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
      if (this.errorStack !== undefined) reject(optimizeErrorStack(err, this.errorStack.stack, IOREDIS_DIR))
      else reject(err)
    }
    this.reject = rejectCommand
  })
  this.promise = asCallback(promise, this.callback)
}

/** ioredis's Pipeline constructor, without the `length` getter it defined on each instance. */
function makePipeline (original: new (redis: object) => object): new (redis: object) => object {
  const Pipeline = function (this: unknown, redis: Record<string, unknown> & { scriptsSet: Record<string, { sha: string }>, addedBuiltinSet: Set<string> }): object {
    const self = Object.assign(Object.create(original.prototype) as Record<string, unknown>, new Commander())
    self.redis = redis
    self.isPipeline = true
    self.replyPending = 0
    self._queue = []
    self._result = []
    self._transactions = 0
    const shaToScript: Record<string, unknown> = {}
    self._shaToScript = shaToScript
    self.isCluster = redis.constructor.name === 'Cluster' || redis.isCluster === true
    self.options = redis.options
    for (const name of Object.keys(redis.scriptsSet)) {
      const script = redis.scriptsSet[name] as { sha: string }
      shaToScript[script.sha] = script
      self[name] = redis[name]
      self[`${name}Buffer`] = redis[`${name}Buffer`]
    }
    for (const name of redis.addedBuiltinSet) {
      self[name] = redis[name]
      self[`${name}Buffer`] = redis[`${name}Buffer`]
    }
    self.promise = new Promise((resolve, reject) => {
      self.resolve = resolve
      self.reject = reject
    })
    return self
  } as unknown as new (redis: object) => object
  Pipeline.prototype = original.prototype
  Object.defineProperty(original.prototype, 'length', {
    configurable: true,
    get (this: { _queue: unknown[] }) { return this._queue.length }
  })
  return Pipeline
}

let installed: { initPromise: boolean, pipeline: boolean } | undefined

/**
 * Installs the replacements of Command#initPromise and the Pipeline constructor, once per process.
 * Returns which applied (each needs ioredis's code to be exactly the one it replaces).
 */
export function installIoredisGcFix (): { initPromise: boolean, pipeline: boolean } {
  if (installed !== undefined) return installed
  installed = { initPromise: false, pipeline: false }
  if (sourceHash(Command.prototype.initPromise) === INIT_PROMISE_SHA) {
    Command.prototype.initPromise = initPromise
    installed.initPromise = true
  }
  if (sourceHash(pipelineModule.default) === PIPELINE_SHA) {
    pipelineModule.default = makePipeline(pipelineModule.default)
    installed.pipeline = true
  }
  return installed
}

const fixedScripts = new WeakSet<object>()

/**
 * Replaces a defined script's toWritable (which sends EVAL the first time on each connection and
 * EVALSHA after, and forgets a connection whose Redis answered NOSCRIPT) by the same code with its
 * reject closure held in a local. Returns whether it applied.
 */
export function fixScriptCommand (script: ScriptLike): boolean {
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
