// src/redis/ioredis-gc-fix.ts: its replacements apply to the ioredis this package installs (an
// upgrade that changes the code they replace fails here, to be looked at), they leave commands,
// scripts and pipelines working as before against a real Redis, and they do what they are for:
// V8 allocates a command's reject closure in the young generation, and a pipeline no longer
// defines a getter of its own (asked of V8 itself, in a process of its own, before and after).
import t from 'tap'
import { spawn } from 'node:child_process'
import { Pipeline, ReplyError } from 'ioredis'
import { commandCalls, RedisServer } from './helpers/redis-server.js'
import { createRedis } from '../src/redis/client.js'
import { fixScriptCommand, installIoredisGcFix, type ScriptLike } from '../src/redis/ioredis-gc-fix.js'
import { ROOT } from './helpers/built.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

t.test('every replacement applies to the installed ioredis, and to each script the service defines', async (t) => {
  t.same(installIoredisGcFix(), { initPromise: true, pipeline: true }, 'Command#initPromise and the Pipeline constructor')
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

t.test("V8 allocates a command's reject closure young once the fix is in (and old before), and a pipeline has no getter of its own", async (t) => {
  // %InYoungGeneration is V8's own answer; the process is new, so ioredis is as it ships until the
  // fix is installed. Commands are made in the interpreter (their first calls), as V8 does at first.
  const script = `
    const young = new Function('x', 'return %InYoungGeneration(x)')
    const { Command, Redis } = await import('ioredis')
    const { installIoredisGcFix, fixScriptCommand } = await import(${JSON.stringify(`${ROOT}src/redis/ioredis-gc-fix.ts`)})
    const redis = new Redis({ lazyConnect: true })
    redis.defineCommand('probe', { numberOfKeys: 0, lua: 'return 1' })
    const scriptCommand = () => { const c = new redis.scriptsSet.probe.Command('evalsha', [redis.scriptsSet.probe.sha, 0]); c.toWritable({}); return young(c.reject) }
    const probe = () => ({
      command: young(new Command('get', ['k']).reject),
      script: scriptCommand(),
      ownGetter: Object.getOwnPropertyDescriptor(redis.pipeline(), 'length') !== undefined
    })
    const before = probe()
    installIoredisGcFix()
    fixScriptCommand(redis.scriptsSet.probe)
    console.log(JSON.stringify({ before, after: probe() }))
    redis.disconnect()`
  const child = spawn(process.execPath, ['--allow-natives-syntax', '--import', 'tsx/esm', '--input-type=module', '-e', script], {
    cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { err += chunk })
  const code = await new Promise((resolve) => child.once('close', resolve))
  t.equal(code, 0, `the probe ran ${err}`)
  const { before, after } = JSON.parse(out) as Record<'before' | 'after', { command: boolean, script: boolean, ownGetter: boolean }>
  t.same(before, { command: false, script: false, ownGetter: true }, 'as ioredis ships: the closures are old, each pipeline has its getter')
  t.same(after, { command: true, script: true, ownGetter: false }, 'with the fix: young closures, the getter on the prototype')
})
