// src/redis/ioredis-gc-fix.ts: its replacements apply to the ioredis this package installs (an
// upgrade that changes the code they replace fails here, to be looked at), they leave commands,
// scripts and pipelines working as before against a real Redis, and they do what they are for:
// V8 allocates a command's reject closure in the young generation, and a pipeline no longer
// defines a getter of its own (asked of V8 itself, in a process of its own, before and after).
// Only the server's process installs them: importing the built library changes nothing in
// ioredis; another ioredis version, or its files moved, means "not applied", with the reason,
// never a crash.
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { Pipeline, ReplyError } from 'ioredis'
import { commandCalls, RedisServer } from './helpers/redis-server.js'
import { createRedis } from '../src/redis/client.js'
import { fixScriptCommand, installIoredisGcFix, type ScriptLike } from '../src/redis/ioredis-gc-fix.js'
import { built, ROOT } from './helpers/built.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

t.test('every replacement applies to the installed ioredis, and to each script the service defines', async (t) => {
  t.same(installIoredisGcFix(), { applied: true, ioredisVersion: '5.11.1' }, 'Command#initPromise and the Pipeline constructor')
  const redis = createRedis({ url: server.url, offlineQueue: true })
  t.teardown(() => { redis.disconnect() })
  const scripts = (redis as unknown as { scriptsSet: Record<string, ScriptLike> }).scriptsSet
  t.ok(Object.keys(scripts).length > 10, `${Object.keys(scripts).length} scripts defined`)
  for (const [name, script] of Object.entries(scripts)) t.ok(fixScriptCommand(script), `${name}'s command`)
})

t.test('commands, pipelines, transactions and scripts answer as before', async (t) => {
  const own = await RedisServer.start() // script calls are counted server-wide
  t.teardown(async () => { await own.close() })
  const redis = createRedis({ url: own.url, offlineQueue: true })
  t.teardown(() => { redis.disconnect() })

  t.same(await Promise.all([redis.set('a', '1'), redis.get('a'), redis.incr('n'), redis.incr('n')]), ['OK', '1', 1, 2],
    'commands of one turn (one auto-pipeline) each get their own answer')
  const error = await redis.hget('a', 'f').catch((err: unknown) => err)
  t.ok(error instanceof ReplyError && /WRONGTYPE/.test((error as Error).message), 'an error reply rejects the command with it')
  t.equal(await new Promise((resolve) => { redis.get('a', (_err, value) => { resolve(value) }).catch(() => {}) }), '1', 'a callback gets the answer')

  const pipeline = redis.pipeline().get('a').hget('a', 'f').incr('n')
  t.ok(pipeline instanceof Pipeline, 'a pipeline is a Pipeline')
  t.equal(pipeline.length, 3, 'its length counts its commands')
  const results = await pipeline.exec()
  t.same(results?.map(([err, value]) => err === null ? value : (err as Error).name), ['1', 'ReplyError', 3], 'exec answers each command, errors in place')
  t.same(await redis.multi().incr('n').get('a').exec(), [[null, 4], [null, '1']], 'a transaction')

  const stats = async (): Promise<unknown[]> => await redis.guildStats('{g}:stats', '{g}:settings', '{g}:version', '{g}:board', 'mee6')
  const [first] = await Promise.all([stats(), stats()])
  t.same(await stats(), first, 'a script answers')
  t.equal(await commandCalls(redis as never, 'eval'), 1, 'sent as EVAL the first time on the connection')
  t.equal(await commandCalls(redis as never, 'evalsha'), 2, 'then as EVALSHA')
  await redis.script('FLUSH')
  t.same(await stats(), first, 'after SCRIPT FLUSH it still answers: NOSCRIPT, then EVAL again')
  t.equal(await commandCalls(redis as never, 'eval'), 2, 'the script was sent again')
})

t.test("a pipeline takes its client's scripts from a prototype made once per client: a script defined later, or again under its name, is the one it runs", async (t) => {
  installIoredisGcFix()
  const redis = createRedis({ url: server.url, offlineQueue: true })
  t.teardown(() => { redis.disconnect() })
  const probe = async (): Promise<unknown> => await (redis as unknown as { probeLater: () => Promise<unknown> }).probeLater()
  const first = redis.pipeline() as unknown as Record<string, unknown>
  t.same(Object.keys(first).filter((name) => name === 'guildStats' || name === 'guildStatsBuffer'), [], 'no script method of its own')
  t.equal(typeof first.guildStats, 'function', 'the script is there, from its prototype')
  t.equal(Object.getPrototypeOf(redis.pipeline()), Object.getPrototypeOf(first), "one prototype for the client's pipelines")

  redis.defineCommand('probeLater', { numberOfKeys: 0, lua: 'return 1' })
  t.same(await Promise.all([probe(), probe()]), [1, 1], 'a script defined after the first pipeline runs through one (auto-pipelined)')
  t.same(await (redis.pipeline() as unknown as { probeLater: () => { exec: () => Promise<unknown> } }).probeLater().exec(), [[null, 1]], 'and in a pipeline made by hand')
  redis.defineCommand('probeLater', { numberOfKeys: 0, lua: 'return 2' })
  t.same(await Promise.all([probe(), probe()]), [2, 2], 'defined again under its name: the new script')
})

t.test("V8 allocates a command's reject closure young once the fix is in (and old before), and a pipeline has no getter of its own", async (t) => {
  // %InYoungGeneration is V8's own answer; the process is new, so ioredis is as it ships until the
  // fix is installed. Commands are made in the interpreter (their first calls), as V8 does at first.
  const script = `
    const young = new Function('x', 'return %InYoungGeneration(x)')
    const { Command, Redis } = await import('ioredis')
    const { installIoredisGcFix, fixScriptCommand } = await import(${JSON.stringify(`${ROOT}src/redis/ioredis-gc-fix.ts`)})
    const { FunctionCommand } = await import(${JSON.stringify(`${ROOT}src/redis/functions.ts`)})
    const redis = new Redis({ lazyConnect: true })
    redis.defineCommand('probe', { numberOfKeys: 0, lua: 'return 1' })
    const scriptCommand = () => { const c = new redis.scriptsSet.probe.Command('evalsha', [redis.scriptsSet.probe.sha, 0]); c.toWritable({}); return young(c.reject) }
    const probe = () => ({
      command: young(new Command('get', ['k']).reject),
      script: scriptCommand(),
      functionCall: (() => { const c = new FunctionCommand('fcall', ['probe_0', 0]); c.toWritable({}); return young(c.reject) })(),
      ownGetter: Object.getOwnPropertyDescriptor(redis.pipeline(), 'length') !== undefined
    })
    const before = probe()
    installIoredisGcFix()
    fixScriptCommand(redis.scriptsSet.probe)
    console.log(JSON.stringify({ before, after: probe() }))
    redis.disconnect()`
  const { before, after } = await runChild(t, script, ['--allow-natives-syntax']) as Record<'before' | 'after', { command: boolean, script: boolean, functionCall: boolean, ownGetter: boolean }>
  t.same(before, { command: false, script: false, functionCall: false, ownGetter: true }, 'as ioredis ships: the closures are old, each pipeline has its getter')
  t.same(after, { command: true, script: true, functionCall: true, ownGetter: false }, 'with the fix: young closures (an award function\'s FCALL too), the getter on the prototype')
})

t.test("importing the built library and using it changes nothing of ioredis's: its methods, its pipelines, its scripts' commands", async (t) => {
  const script = `
    import { createRequire } from 'node:module'
    const require = createRequire(${JSON.stringify(ROOT)} + 'package.json')
    const Command = require('ioredis/built/Command.js').default
    const pipelineModule = require('ioredis/built/Pipeline.js')
    const Script = require('ioredis/built/Script.js').default
    const shipped = { initPromise: Command.prototype.initPromise, Pipeline: pipelineModule.default, toWritable: String(new Script('return 1').Command.prototype.toWritable) }
    const { createRedis, LeaderboardWriter, KeyBuilder } = await import(${JSON.stringify(built('index.js'))})
    const redis = createRedis({ url: ${JSON.stringify(server.url)}, offlineQueue: true })
    const writer = new LeaderboardWriter(redis, new KeyBuilder('gc-fix-import'))
    await writer.awardXp({ guildId: '1', userId: '2', xp: 5 })
    await redis.pipeline().get('a').exec()
    console.log(JSON.stringify({
      initPromise: Command.prototype.initPromise === shipped.initPromise,
      Pipeline: pipelineModule.default === shipped.Pipeline,
      lengthGetterOnPrototype: Object.getOwnPropertyDescriptor(pipelineModule.default.prototype, 'length') !== undefined,
      scriptCommand: String(redis.scriptsSet.awardXp.Command.prototype.toWritable) === shipped.toWritable
    }))
    redis.disconnect()`
  t.same(await runChild(t, script), { initPromise: true, Pipeline: true, lengthGetterOnPrototype: false, scriptCommand: true },
    "ioredis's Command#initPromise, Pipeline and a script command's toWritable are the ones it ships")
})

t.test('another ioredis version, or its private files moved: not applied, with the reason, and nothing replaced; never a crash', async (t) => {
  const probe = (preamble: string): string => `
    import { createRequire, syncBuiltinESMExports } from 'node:module'
    const require = createRequire(${JSON.stringify(ROOT)} + 'package.json')
    ${preamble}
    const { installIoredisGcFix } = await import(${JSON.stringify(`${ROOT}src/redis/ioredis-gc-fix.ts`)})
    const Command = require('ioredis/built/Command.js').default
    const before = Command.prototype.initPromise
    const outcome = installIoredisGcFix()
    console.log(JSON.stringify({ outcome, replaced: Command.prototype.initPromise !== before }))`
  // A release of ioredis other than the one the fix is written for (its package.json says so).
  const otherVersion = await runChild(t, probe(`
    const fs = require('node:fs')
    const readFileSync = fs.readFileSync
    fs.readFileSync = (path, ...rest) => String(path).endsWith('ioredis/package.json') ? '{"version":"5.12.0"}' : readFileSync(path, ...rest)
    syncBuiltinESMExports()`))
  t.same(otherVersion, { outcome: { applied: false, ioredisVersion: '5.12.0', reason: 'written for ioredis 5.11.1 exactly' }, replaced: false }, 'another version')
  // A layout change: one of the private files the fix loads is gone.
  const moved = await runChild(t, probe(`
    const Module = require('node:module')
    const resolve = Module._resolveFilename
    Module._resolveFilename = function (request, ...rest) {
      if (request === 'ioredis/built/Pipeline.js') throw new Error("Cannot find module 'ioredis/built/Pipeline.js'")
      return resolve.call(this, request, ...rest)
    }`)) as { outcome: { applied: boolean, reason: string }, replaced: boolean }
  t.equal(moved.outcome.applied, false, 'a private file moved')
  t.match(moved.outcome.reason, /ioredis's files are not those of 5\.11\.1: Cannot find module 'ioredis\/built\/Pipeline\.js'/, 'the reason names it')
  t.equal(moved.replaced, false, 'nothing was replaced')
})

/** Runs `script` (an ES module, TypeScript allowed) in a node process of its own; its stdout's JSON. */
async function runChild (t: Test, script: string, nodeFlags: string[] = []): Promise<unknown> {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx/esm', '--input-type=module', '-e', script], {
    cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { err += chunk })
  const code = await new Promise((resolve) => child.once('close', resolve))
  t.equal(code, 0, `the child process ran ${err}`)
  return JSON.parse(out)
}
