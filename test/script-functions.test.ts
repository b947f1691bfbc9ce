// The award scripts as Redis 7.0 functions (src/redis/functions.ts): the library generated from
// the .lua files loads and answers as the scripts do; a node without it (FUNCTION FLUSH, a
// restore from an RDB of an older build) gets it loaded on the call that meets "not found",
// which then succeeds; an older build's library is never called. The cluster's resharding and
// failover are test/cluster-resharding.test.ts; an ACL without FUNCTION is
// test/script-functions-refused.test.ts (its fallback holds for the whole process).
import t from 'tap'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { RedisServer } from './helpers/redis-server.js'
import { createRedis } from '../src/redis/client.js'
import { boardMember, KeyBuilder } from '../src/redis/keys.js'
import { buildLibrary, checkPrelude, functionsRefused, FUNCTION_SCRIPTS, library } from '../src/redis/functions.js'
import { loadScripts, scripts } from '../src/redis/scripts.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'

const GUILD = '1520000000000000001'
const COMMANDS = fileURLToPath(new URL('../src/redis/commands/', import.meta.url))

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })
const operator = new Redis(server.url)
t.teardown(() => { operator.disconnect() })

/** The libraries on the node, by name. */
async function libraries (node: Redis = operator): Promise<string[]> {
  const list = await node.call('FUNCTION', 'LIST') as Array<Array<string | unknown>>
  return list.map((entry) => entry[entry.indexOf('library_name') + 1] as string).sort()
}

async function commandCalls (name: string, node: Redis = operator): Promise<number> {
  const line = new RegExp(`^cmdstat_${name.replace('|', '\\|')}:calls=(\\d+)`, 'm').exec(await node.info('commandstats'))
  return Number(line?.[1] ?? 0)
}

function writerOn (url: string): { writer: LeaderboardWriter, close: () => void } {
  const redis = createRedis({ url, offlineQueue: true, commandTimeoutMs: 10_000 })
  return { writer: new LeaderboardWriter(redis, new KeyBuilder()), close: () => { redis.disconnect() } }
}

/** The library of a build whose award-xp answers { 7, 7, 7 } before doing anything: another hash, another code. */
function olderBuildLibrary (): ReturnType<typeof buildLibrary> {
  const dir = mkdtempSync(join(tmpdir(), 'lb-older-build-'))
  try {
    cpSync(COMMANDS, dir, { recursive: true })
    const file = join(dir, 'award-xp-21.lua')
    writeFileSync(file, readFileSync(file, 'utf8').replace('--- @include "version"\n', '--- @include "version"\ndo return { 7, 7, 7 } end\n'))
    return buildLibrary(loadScripts(dir), dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

t.test('the library: the award scripts, named by the hash of its code, each function by the same hash', async (t) => {
  const lib = library()
  const hash = /^leaderboard_([0-9a-f]{16})$/.exec(lib.name)?.[1]
  t.ok(hash, `${lib.name} carries a hash`)
  t.same([...lib.functions.keys()].sort(), [...FUNCTION_SCRIPTS].sort())
  for (const fn of lib.functions.values()) t.ok(fn.endsWith(`_${hash ?? ''}`), `${fn} carries it`)
  const older = olderBuildLibrary()
  t.not(older.name, lib.name, 'another build\'s code: another library')
  t.same([...older.functions.values()].filter((fn) => [...lib.functions.values()].includes(fn)), [], 'and no function name in common')
  t.equal(buildLibrary(scripts()).name, lib.name, 'the same code: the same name, in every process')
})

t.test('every script with a fixed number of keys can be generated as a function, and the library of them all loads on Redis 7.0', async (t) => {
  // Not all are run as functions (FUNCTION_SCRIPTS); this holds the generation to every script
  // it may be asked for, with what the includes' top level may hold at load (only `redis`).
  const fixed = scripts().filter(({ numberOfKeys }) => numberOfKeys !== undefined)
  const whole = buildLibrary(fixed, undefined, fixed.map(({ name }) => name))
  t.equal(whole.functions.size, fixed.length)
  t.equal(await operator.call('FUNCTION', 'LOAD', whole.code), whole.name)
  t.equal(await operator.call('FUNCTION', 'DELETE', whole.name), 'OK')
})

t.test('the generation refuses what would behave differently run once: Redis called or KEYS read outside a function, module state a function changes', async (t) => {
  t.doesNotThrow(() => { checkPrelude('x-1.lua', 'local floor = math.floor\nlocal LIMIT = 10\nlocal function f (x)\n  return floor(x) + LIMIT\nend') },
    'constants and math at the top level: run at the first call, where the runtime\'s globals are there')
  t.throws(() => { checkPrelude('x-1.lua', "local started = redis.call('TIME')") }, /calls Redis outside a function/)
  t.throws(() => { checkPrelude('x-1.lua', 'local function f ()\n  return KEYS[1]\nend') }, /reads KEYS or ARGV/)
  t.throws(() => { checkPrelude('x-1.lua', 'local seen = 0\nlocal function f ()\n  seen = seen + 1\nend') }, /changes its top-level seen/)
  t.throws(() => { checkPrelude('x-1.lua', 'local cache = {}\nlocal function f (k, v)\n  cache[k] = v\nend') }, /changes its top-level cache/)
  t.doesNotThrow(() => { checkPrelude('x-1.lua', 'local cache = {}\nlocal function f (k)\n  local cache = {}\n  return cache[k]\nend') }, 'a local of its own')
})

t.test('awards go by FCALL; after FUNCTION FLUSH on the running instance, the next awards load the library once and succeed', async (t) => {
  const { writer, close } = writerOn(server.url)
  t.teardown(close)
  const first = await writer.awardXp({ guildId: GUILD, userId: '1', xp: 10 })
  t.match(first, { applied: true, xp: 10 })
  t.ok(await commandCalls('fcall') > 0, 'sent as FCALL')
  t.ok((await libraries()).includes(library().name), 'the library was loaded on the first call')

  await operator.call('FUNCTION', 'FLUSH')
  const loadsBefore = await commandCalls('function|load')
  const results = await Promise.all(Array.from({ length: 50 }, async (_, i) => await writer.awardXp({ guildId: GUILD, userId: String(100 + i), xp: 1 + i })))
  t.same(results.map((r) => r.xp), Array.from({ length: 50 }, (_, i) => 1 + i), '50 awards in flight across the flush, each applied')
  t.equal(await commandCalls('function|load') - loadsBefore, 1, 'the library loaded once for all of them')
  t.same(await libraries(), [library().name])
  t.equal(functionsRefused(), undefined, 'still by FCALL')
})

t.test('a call that meets "not found" again after its node loaded the library goes as the script itself, once, and is applied', async (t) => {
  // The node's library of this build's name lacks the function (as if flushed again between the
  // load and the call sent after it, every time): the load answers "already exists", the FCALL
  // "not found" again. Without a way out the call would go round until it gave up.
  await operator.call('FUNCTION', 'FLUSH')
  await operator.call('FUNCTION', 'LOAD', `#!lua name=${library().name}\nredis.register_function('placeholder_${library().name}', function () return 1 end)`)
  const { writer, close } = writerOn(server.url)
  t.teardown(close)
  const evalsBefore = await commandCalls('eval')
  const result = await writer.awardXp({ guildId: GUILD, userId: '900', xp: 25 })
  t.match(result, { applied: true, xp: 25 }, 'applied')
  t.equal(await commandCalls('eval') - evalsBefore, 1, 'sent once as EVAL, after one FCALL that met "not found" after the load')
  t.equal(functionsRefused(), undefined, 'the process still goes by FCALL')
  t.equal(Number(await operator.zscore(new KeyBuilder().guild(GUILD).board, boardMember('900'))), 25, 'on the board once')
  await operator.call('FUNCTION', 'FLUSH')
})

t.test('a restore from an RDB of an older build: its library is never called, this build\'s is loaded beside it, and both builds run', async (t) => {
  const older = olderBuildLibrary()
  const node = await RedisServer.start()
  t.teardown(async () => { await node.close() })
  const raw = new Redis(node.url)
  t.teardown(() => { raw.disconnect() })
  // The older build's instance: its library and a member, saved in the RDB.
  await raw.call('FUNCTION', 'LOAD', older.code)
  const { writer, close } = writerOn(node.url)
  t.teardown(close)
  t.match(await writer.awardXp({ guildId: GUILD, userId: '1', xp: 10 }), { xp: 10 })
  t.same(await libraries(raw), [older.name, library().name].sort())
  await raw.call('FUNCTION', 'DELETE', library().name)
  raw.disconnect()
  await node.restart() // stopped with a save, started from its RDB: the older build's library alone
  const after = new Redis(node.url)
  t.teardown(() => { after.disconnect() })
  t.same(await libraries(after), [older.name], 'the RDB held the older build\'s library alone')

  t.match(await writer.awardXp({ guildId: GUILD, userId: '1', xp: 5 }), { applied: true, xp: 15 }, 'the award is this build\'s: the older function would answer 7')
  t.same(await libraries(after), [older.name, library().name].sort(), 'both libraries: an older instance still running calls its own')
  const olderAward = await after.call('FCALL', older.functions.get('awardXp') as string, 0) as number[]
  t.same(olderAward, [7, 7, 7], 'the older build\'s function answers as it did')
})
