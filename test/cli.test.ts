// The CLI as a user runs it: a child process against a real redis-server, its effect read back
// through KeyBuilder, its exit code and its one-line errors.
import t from 'tap'
import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { redisFixture } from './helpers/redis-server.js'
import { freePort } from '../src/redis/redis-server.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'
import { redisNow } from '../src/redis/client.js'
import { boardMember } from '../src/redis/keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const PREFIX = 'clitest'

// Each CLI run costs about half a second of CPU, nearly all of it tsx starting up, so the tests
// run side by side; each works in servers of its own.
t.jobs = 6

const { server, redis, raw, keys } = await redisFixture(t, PREFIX)
const store = new ApiKeyStore(redis, keys)
/** For setting the scene in-process: only the command under test runs as a child. */
const writer = new LeaderboardWriter(redis, keys)

interface Run { code: number | null, stdout: string, stderr: string }

const children = new Set<ChildProcess>()
t.teardown(() => { for (const child of children) child.kill('SIGKILL') })

/** Runs the CLI (`node --import tsx`: the quickest start, ~0.5 s) and collects what it printed. */
async function cli (args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: ROOT,
    // NODE_OPTIONS carries tap's process-tracking hook, which only slows each start further.
    env: { ...process.env, NODE_OPTIONS: '', REDIS_URL: server.url, REDIS_PREFIX: PREFIX, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  children.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const timer = setTimeout(() => { child.kill('SIGKILL') }, 60_000)
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
  clearTimeout(timer)
  children.delete(child)
  return { code, stdout, stderr }
}

const lines = (text: string): string[] => text.split('\n').filter((line) => line !== '')

async function xpOf (guildId: string, userId: string): Promise<string | null> {
  return await redis.zscore(keys.guild(guildId).board, boardMember(userId))
}

/** Every key of a server, byte for byte (null when absent): shows that nothing was changed. */
async function guildState (guildId: string): Promise<Record<string, string | null>> {
  const entries = await Promise.all(Object.entries(keys.guild(guildId)).map(async ([name, key]) =>
    [name, (await raw.dumpBuffer(key))?.toString('hex') ?? null] as const))
  return Object.fromEntries(entries)
}

t.test('--help exits 0 on every command', async (t) => {
  const commands = [[], ['award'], ['daily'], ['guild', 'set'], ['member', 'remove'],
    ['keys', 'create'], ['keys', 'list'], ['keys', 'revoke'], ['seed'], ['demo']]
  const runs = await Promise.all(commands.map(async (command) => await cli([...command, '--help'])))
  runs.forEach((run, i) => {
    const name = ['leaderboard', ...(commands[i] ?? [])].join(' ')
    t.equal(run.code, 0, `${name} --help exits 0`)
    t.match(run.stdout, /^Usage: /, `${name} --help prints usage`)
  })
})

t.test('award adds XP, records the username and says where the member stands', async (t) => {
  const run = await cli(['award', '--guild', '1', '--user', '99', '--xp', '150', '--username', 'bob'])
  t.same(run, { code: 0, stdout: 'awarded 150 XP to 99 in 1: now 150 XP (level 1)\n', stderr: '' })
  t.equal(await xpOf('1', '99'), '150')
  t.equal(await redis.hget(keys.guild('1').names, '99'), 'bob')
  t.same(await redis.hmget(keys.guild('1').stats, 'xp_total', 'members_with_xp'), ['150', '1'], 'the aggregates follow')
})

t.test('guild set writes the curve and the multiplier exactly as typed; the next award is multiplied', async (t) => {
  const set = await cli(['guild', 'set', '--guild', '2', '--curve', 'linear', '--multiplier', '0.29'])
  t.equal(set.code, 0)
  t.match(set.stdout, /^server 2: set curve linear, multiplier 0\.29\n$/)
  t.same(await redis.hgetall(keys.guild('2').settings), { curve: 'linear', multiplier_hundredths: '29' })
  const award = await cli(['award', '--guild', '2', '--user', '7', '--xp', '100'])
  t.equal(award.code, 0)
  t.match(award.stdout, /^awarded 29 XP to 7 in 2 .*now 29 XP \(level 0\)\n$/, '100 at 0.29 is 29, not 28')
  t.equal(await xpOf('2', '7'), '29')
})

t.test('daily records a claim; a second one the same UTC day is refused: exit 1, one line, nothing changed', async (t) => {
  const yesterday = new Date(await redisNow(redis) - 86_400_000).toISOString()
  const first = await cli(['daily', '--guild', '3', '--user', '5', '--at', yesterday])
  t.same(first, { code: 0, stdout: `daily claim recorded for 5 in 3 at ${yesterday}: streak 1\n`, stderr: '' })
  const second = await cli(['daily', '--guild', '3', '--user', '5'])
  t.equal(second.code, 0)
  t.match(second.stdout, /streak 2\n$/, 'the day after, the streak grows')
  t.equal(await redis.hget(keys.guild('3').streaks, '5'), '2')

  const before = await guildState('3')
  const [refused, backdated] = await Promise.all([
    cli(['daily', '--guild', '3', '--user', '5']),
    cli(['daily', '--guild', '3', '--user', '5', '--at', '2020-01-01'])
  ])
  t.equal(refused.code, 1)
  t.equal(refused.stdout, '')
  t.equal(lines(refused.stderr).length, 1, 'one line on stderr')
  t.match(refused.stderr, /^error: user 5 already claimed on that UTC day/)
  t.equal(backdated.code, 1)
  t.match(backdated.stderr, /^error: .*before user 5's last claim[^\n]*\n$/)
  t.same(await guildState('3'), before, 'the server is unchanged')
})

t.test('bad input exits non-zero with one error line and writes nothing', async (t) => {
  const cases: Array<[string, string[]]> = [
    ['a user id with a leading zero', ['award', '--guild', '4', '--user', '0123', '--xp', '5']],
    ['a guild id that is not a number', ['daily', '--guild', 'abc', '--user', '1']],
    ['xp 0', ['award', '--guild', '4', '--user', '1', '--xp', '0']],
    ['an unknown curve', ['guild', 'set', '--guild', '4', '--curve', 'steep']],
    ['multiplier 0', ['guild', 'set', '--guild', '4', '--multiplier', '0']],
    ['multiplier 0.001', ['guild', 'set', '--guild', '4', '--multiplier', '0.001']],
    ['a date that does not exist', ['daily', '--guild', '4', '--user', '1', '--at', '2026-02-30']],
    ['a missing option', ['keys', 'create', '--guild', '4']]
  ]
  const runs = await Promise.all(cases.map(async ([, args]) => await cli(args)))
  runs.forEach((run, i) => {
    const what = cases[i]?.[0] ?? ''
    t.not(run.code, 0, `${what}: non-zero exit`)
    t.equal(lines(run.stderr).length, 1, `${what}: one line on stderr`)
    t.match(run.stderr, /^error: /, `${what}: says it is an error`)
    t.equal(run.stdout, '', `${what}: nothing on stdout`)
  })
  t.match(runs[0]?.stderr, 'user_id must be a decimal id')
  t.match(runs[5]?.stderr, 'multiplier must be a number from 0.01 to 100')
  t.ok(Object.values(await guildState('4')).every((value) => value === null), 'nothing was written')
})

t.test('member remove deletes a member; removing a non-member is exit 1 with one line', async (t) => {
  await writer.awardXp({ guildId: '5', userId: '8', xp: 10, username: 'gone' })
  const removed = await cli(['member', 'remove', '--guild', '5', '--user', '8'])
  t.same(removed, { code: 0, stdout: 'removed 8 from 5\n', stderr: '' })
  t.equal(await xpOf('5', '8'), null)
  t.equal(await redis.hget(keys.guild('5').names, '8'), null)
  t.equal(await redis.zcard(keys.guild('5').board), 0)
  const again = await cli(['member', 'remove', '--guild', '5', '--user', '8'])
  t.equal(again.code, 1)
  t.same(lines(again.stderr), ['error: user 8 is not a member of server 5'])
})

t.test('keys create --json prints one line with the key, which authenticates for its server and plan', async (t) => {
  const [run, human] = await Promise.all([
    cli(['keys', 'create', '--guild', '6', '--plan', 'starter', '--name', 'my bot', '--expires-in', '3600', '--json']),
    cli(['keys', 'create', '--guild', '6', '--plan', 'free'])
  ])
  t.equal(run.code, 0)
  t.equal(lines(run.stdout).length, 1, 'one line')
  const created = JSON.parse(run.stdout) as Record<string, string | null>
  t.match(created, { id: /^[0-9a-f]{16}$/, key: /^lbk_/, guild_id: '6', plan: 'starter', name: 'my bot', created_at: String, expires_at: String })
  t.equal(Date.parse(created.expires_at ?? '') - Date.parse(created.created_at ?? ''), 3_600_000, 'expires an hour after creation')
  t.match(await store.check(created.key ?? ''), { status: 'ok', id: created.id, guildId: '6', plan: 'starter' })

  t.equal(human.code, 0)
  const key = /lbk_\S+/.exec(human.stdout)?.[0] ?? ''
  t.match(await store.check(key), { status: 'ok', guildId: '6', plan: 'free' }, 'the key printed is the key')
  t.match(human.stdout, /shown only this once/)
})

t.test('keys list shows every key of a server but never a key itself; keys revoke makes check() say revoked', async (t) => {
  const made = await Promise.all(['a', 'b'].map(async (name) => await store.create({ guildId: '7', plan: 'professional', name })))
  const revoke = await cli(['keys', 'revoke', made[0]?.id ?? ''])
  t.equal(revoke.code, 0)
  t.match(revoke.stdout, `revoked API key ${made[0]?.id ?? ''} of server 7`)
  t.match(await store.check(made[0]?.key ?? ''), { status: 'revoked' })
  t.match(await store.check(made[1]?.key ?? ''), { status: 'ok' }, 'the other key still works')

  const [table, json] = await Promise.all([cli(['keys', 'list', '--guild', '7']), cli(['keys', 'list', '--guild', '7', '--json'])])
  t.equal(table.code, 0)
  t.equal(json.code, 0)
  for (const { id, key } of made) {
    // The secret is the 32 characters after `lbk_<16 hex>_`; it may itself contain `_`.
    const secret = key.slice(21)
    t.equal(secret.length, 32)
    for (const out of [table.stdout, json.stdout]) {
      t.match(out, id, 'lists the id')
      t.notMatch(out, secret, 'never the key')
    }
  }
  t.match(table.stdout, /^ID +NAME +PLAN +STATUS +CREATED +EXPIRES +LAST USED +REVOKED/)
  t.match(lines(table.stdout).find((line) => line.startsWith(made[0]?.id ?? '-')), / revoked /)
  const listed = JSON.parse(json.stdout) as Array<Record<string, unknown>>
  t.equal(listed.length, 2)
  t.ok(listed.every((info) => !('key' in info) && !('hash' in info)))
  t.match(listed.find((info) => info.id === made[0]?.id), { status: 'revoked', revoked_at: String, name: 'a' })
})

t.test('keys revoke of an unknown id is exit 1 with one line', async (t) => {
  const unknown = await cli(['keys', 'revoke', '0123456789abcdef'])
  t.equal(unknown.code, 1)
  t.same(lines(unknown.stderr), ['error: no API key with id 0123456789abcdef'])
})

t.test('seed fills a server, without a progress bar when not on a terminal, and prints the time taken', async (t) => {
  const run = await cli(['seed', '--guild', '8', '--members', '250', '--curve', 'linear', '--seed', 'cli'])
  t.equal(run.code, 0)
  t.match(run.stdout, /^seeded 250 members into 8 in \d+\.\d\d s /)
  t.notMatch(run.stderr, '\u001b', 'no terminal escapes in a pipe')
  t.equal(await redis.zcard(keys.guild('8').board), 250)
  t.equal(await redis.hget(keys.guild('8').settings, 'curve'), 'linear')
})

t.test('demo seeds the demo server once and prints a key and a curl line that work', async (t) => {
  const first = await cli(['demo', '--guild', '9', '--base-url', 'http://api.test:8080'])
  t.equal(first.code, 0)
  t.match(first.stdout, /^demo server 9: seeded 500 members\n/)
  const curl = lines(first.stdout).at(-1) ?? ''
  const key = /x-api-key: (lbk_\S+)'/.exec(curl)?.[1] ?? ''
  t.equal(curl, `curl -H 'x-api-key: ${key}' http://api.test:8080/api/v1/servers/9/leaderboard`)
  t.match(await store.check(key), { status: 'ok', guildId: '9', plan: 'professional' })
  const again = await cli(['demo', '--guild', '9'])
  t.equal(again.code, 0)
  t.match(again.stdout, /already has 500 members/)
  t.equal(await redis.zcard(keys.guild('9').board), 500)
})

t.test('an unreachable Redis is one error line and exit 1 within seconds, not a hang', async (t) => {
  const port = await freePort()
  const started = Date.now()
  const run = await cli(['award', '--guild', '1', '--user', '2', '--xp', '3'], { REDIS_URL: `redis://127.0.0.1:${port}` })
  t.equal(run.code, 1)
  t.same(lines(run.stderr).length, 1)
  t.match(run.stderr, `error: cannot reach Redis at redis://127.0.0.1:${port}`)
  // The CLI gives up after 3 s; the margin is for process start-up on a busy machine.
  t.ok(Date.now() - started < 15_000, `gave up after ${Date.now() - started} ms`)
})

t.test('the CLI reads REDIS_CLUSTER as the server does: TRUE means a cluster, a bad value is one line', async (t) => {
  const port = await freePort()
  const url = `redis://127.0.0.1:${port}`
  const [upper, bad, prefix] = await Promise.all([
    cli(['award', '--guild', '1', '--user', '2', '--xp', '3'], { REDIS_URL: url, REDIS_CLUSTER: 'TRUE' }),
    cli(['award', '--guild', '1', '--user', '2', '--xp', '3'], { REDIS_CLUSTER: 'maybe' }),
    cli(['keys', 'list', '--guild', '1'], { REDIS_PREFIX: 'a{b}' })
  ])
  t.equal(upper.code, 1)
  t.match(upper.stderr, `error: cannot reach Redis Cluster at ${url}`, 'REDIS_CLUSTER=TRUE is a cluster')
  t.same(bad, { code: 1, stdout: '', stderr: 'error: invalid configuration: REDIS_CLUSTER must be boolean\n' })
  t.equal(prefix.code, 1)
  t.match(lines(prefix.stderr), [/^error: invalid configuration: REDIS_PREFIX must match pattern/])
})
