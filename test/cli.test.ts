// The CLI as a user runs it: a child process against a real redis-server, its effect read back
// through KeyBuilder, its exit code and its one-line errors.
import t from 'tap'
import { monitored, redisFixture } from './helpers/redis-server.js'
import { cliRunner, lines } from './helpers/cli.js'
import { freePort } from '../src/redis/redis-server.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { redisNow } from '../src/redis/client.js'
import { boardMember } from '../src/redis/keys.js'
import { type BaseRecord, baseRecord } from './helpers/guild-state.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { library } from '../src/redis/functions.js'

const PREFIX = 'clitest'

// The tests run side by side (each works in servers of its own), at most three CLI runs starting
// at once (test/helpers/cli.ts).
t.jobs = 6

const { server, redis, raw, keys } = await redisFixture(t, PREFIX)
const cli = cliRunner(t, { REDIS_URL: server.url, REDIS_PREFIX: PREFIX })
const store = new ApiKeyStore(redis, keys)
/** For setting the scene in-process: only the command under test runs as a child. */
const writer = new LeaderboardWriter(redis, keys)
const reader = new LeaderboardReader(redis, keys)

async function xpOf (guildId: string, userId: string): Promise<string | null> {
  return await redis.zscore(keys.guild(guildId).board, boardMember(userId))
}

/** A member's record (username, streak, last claim) as the members hash stores it. */
async function recordOf (guildId: string, userId: string): Promise<BaseRecord> {
  return baseRecord(await redis.hget(keys.guild(guildId).members, boardMember(userId)))
}

/** Every key of a server, byte for byte (null when absent): shows that nothing was changed. */
async function guildState (guildId: string): Promise<Record<string, string | null>> {
  const entries = await Promise.all(Object.entries(keys.guild(guildId)).map(async ([name, key]) =>
    [name, (await raw.dumpBuffer(key))?.toString('hex') ?? null] as const))
  return Object.fromEntries(entries)
}

t.test('--help exits 0 on every command', async (t) => {
  const commands = [[], ['award'], ['daily'], ['guild', 'set'], ['guild', 'show'], ['member', 'show'], ['member', 'set-xp'], ['member', 'rename'],
    ['member', 'remove'], ['top'], ['keys', 'create'], ['keys', 'list'], ['keys', 'rotate'], ['keys', 'set-plan'], ['keys', 'set-servers'], ['keys', 'revoke'],
    ['seed'], ['demo'], ['import'], ['export'], ['season', 'end'], ['seasons', 'list']]
  const runs = await Promise.all(commands.map(async (command) => await cli([...command, '--help'])))
  runs.forEach((run, i) => {
    const name = ['leaderboard', ...(commands[i] ?? [])].join(' ')
    t.equal(run.code, 0, `${name} --help exits 0`)
    t.match(run.stdout, /^Usage: /, `${name} --help prints usage`)
  })
})

t.test("the CLI's connection is named leaderboard-cli (CLIENT SETNAME), as CLIENT LIST shows it", async (t) => {
  const names = new Set<string>()
  await monitored(server.url, (args) => {
    if (args[0]?.toLowerCase() === 'client' && args[1]?.toLowerCase() === 'setname' && args[2] !== undefined) names.add(args[2])
  }, async () => {
    t.equal((await cli(['guild', 'show', '--guild', '1'])).code, 0)
  })
  t.ok(names.has('leaderboard-cli'), `names given: ${[...names].join(', ')}`)
})

t.test('award adds XP, records the username and says where the member stands', async (t) => {
  const run = await cli(['award', '--guild', '1', '--user', '99', '--xp', '150', '--username', 'bob'])
  t.same(run, { code: 0, stdout: 'awarded 150 XP to 99 in 1: now 150 XP (level 1)\n', stderr: '' })
  t.equal(await xpOf('1', '99'), '150')
  t.equal((await recordOf('1', '99')).username, 'bob')
  t.same(await redis.hmget(keys.guild('1').stats, 'xp_total', 'members_with_xp'), ['150', '1'], 'the aggregates follow')
})

t.test('season end starts the next season (named as given), seasons list shows them newest first', async (t) => {
  const writer = new LeaderboardWriter(redis, keys)
  await writer.awardXp({ guildId: '71', userId: '1', xp: 10 })
  const ended = await cli(['season', 'end', '--guild', '71', '--name', 'Winter cup'])
  t.equal(ended.code, 0, ended.stderr)
  t.match(ended.stdout, /^season 1 of 71 ended; season 2 \("Winter cup"\) began \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\n$/)
  const listed = await cli(['seasons', 'list', '--guild', '71', '--json'])
  t.equal(listed.code, 0, listed.stderr)
  t.match(JSON.parse(listed.stdout), [{ id: 2, name: 'Winter cup', ended_at: null }, { id: 1, name: 'Season 1', ended_at: String }])
  const table = await cli(['seasons', 'list', '--guild', '71'])
  t.match(table.stdout, /^id +started +ended +name\n2 +\S+ \S+ +current +Winter cup\n1 +/)
  const bad = await cli(['season', 'end', '--guild', '71', '--name', ''])
  t.equal(bad.code, 1)
  t.match(bad.stderr, /^error: name must be 1 to 100 characters/)
  t.same(JSON.parse((await cli(['seasons', 'list', '--guild', '71', '--json'])).stdout).map((s: { id: number }) => s.id), [2, 1], 'nothing ended')
})

t.test('guild set writes the curve and the multiplier exactly as typed; the next award is multiplied', async (t) => {
  const set = await cli(['guild', 'set', '--guild', '2', '--curve', 'linear', '--multiplier', '0.29'])
  t.equal(set.code, 0)
  t.match(set.stdout, /^server 2: set curve linear, multiplier 0\.29\n$/)
  t.same(await redis.hgetall(keys.guild('2').settings), { curve: 'linear', multiplier_hundredths: '29', epoch: '1' })
  const award = await cli(['award', '--guild', '2', '--user', '7', '--xp', '100'])
  t.equal(award.code, 0)
  t.match(award.stdout, /^awarded 29 XP to 7 in 2 .*now 29 XP \(level 0\)\n$/, '100 at 0.29 is 29, not 28')
  t.equal(await xpOf('2', '7'), '29')
  const json = await cli(['award', '--guild', '2', '--user', '7', '--xp', '1000', '--json'])
  t.same(JSON.parse(json.stdout), { guild_id: '2', user_id: '7', awarded: 1000, gained: 290, xp: 319, level: 2, leveled_up: true, applied: true }, '--json')
})

t.test('award with the server\'s rules: a range, roles and a channel; a refusal says why; role rewards are printed', async (t) => {
  const writer = new LeaderboardWriter(redis, keys)
  await writer.configureGuild('90', {
    cooldownSeconds: 3600,
    multipliers: { roles: { 71: 2 }, channels: { 81: 1.5 } },
    roleRewards: [{ level: 1, roleId: '501' }, { level: 2, roleId: '502' }]
  })
  const first = await cli(['award', '--guild', '90', '--user', '7', '--xp', '50-50', '--roles', '71,72', '--channel', '81', '--json'])
  t.same(JSON.parse(first.stdout), { guild_id: '90', user_id: '7', awarded: { min: 50, max: 50 }, gained: 100, xp: 100, level: 1, leveled_up: true, applied: true, roles: { add: ['501'], remove: [] } },
    '50 × 2 (the highest of role 71 and channel 81)')
  const refused = await cli(['award', '--guild', '90', '--user', '7', '--xp', '15-25'])
  t.same(refused, { code: 0, stdout: 'not applied (within the cooldown of its last award): 7 in 90 has 100 XP (level 1)\n', stderr: '' })
  const drawn = await cli(['award', '--guild', '90', '--user', '8', '--xp', '300-300'])
  t.equal(drawn.stdout, 'awarded 300 XP to 8 in 90 (300-300 with the server\'s rules): now 300 XP (level 2)\nrole rewards: add 501, 502; remove none\n')
  const set = await cli(['member', 'set-xp', '--guild', '90', '--user', '8', '--xp', '0'])
  t.equal(set.stdout, 'set 8 in 90 to 0 XP (level 0); it had 300 XP\nrole rewards: add none; remove 501, 502\n')
  t.match(await cli(['award', '--guild', '90', '--user', '9', '--xp', '9-3']), { code: 1, stderr: /xp \(the range's high end\) must be an integer from 9/ })
})

t.test('daily records a claim; a second one the same UTC day is refused: exit 1, one line, nothing changed', async (t) => {
  const yesterday = new Date(await redisNow(redis) - 86_400_000).toISOString()
  const first = await cli(['daily', '--guild', '3', '--user', '5', '--at', yesterday])
  t.same(first, { code: 0, stdout: `daily claim recorded for 5 in 3 at ${yesterday}: streak 1\n`, stderr: '' })
  const second = await cli(['daily', '--guild', '3', '--user', '5'])
  t.equal(second.code, 0)
  t.match(second.stdout, /streak 2\n$/, 'the day after, the streak grows')
  t.equal((await recordOf('3', '5')).streak, 2)

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
  t.equal(await redis.hget(keys.guild('5').members, boardMember('8')), null, 'its record is gone')
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
  t.match(table.stdout, /^ID +NAME +SERVERS +PLAN +STATUS +CREATED +EXPIRES +LAST USED +ROTATED +REVOKED/)
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
  t.match(run.stdout, /^seeded 250 members into 8 in \d+(?: ms|\.\d s \(\d+ members\/s\)), seed cli\n/)
  t.notMatch(run.stderr, '\u001b', 'no terminal escapes in a pipe')
  t.equal(await redis.zcard(keys.guild('8').board), 250)
  t.equal(await redis.hget(keys.guild('8').settings, 'curve'), 'linear')
})

t.test('demo seeds the demo server once and prints a key and a curl line that work', async (t) => {
  const first = await cli(['demo', '--guild', '9', '--base-url', 'http://api.test:8080'])
  t.equal(first.code, 0)
  t.match(first.stdout, /^demo server 9: seeded 500 members\n/)
  const curls = lines(first.stdout).filter((line) => line.startsWith('curl '))
  const curl = curls[0] ?? ''
  const key = /x-api-key: (lbk_\S+)'/.exec(curl)?.[1] ?? ''
  t.equal(curl, `curl -H 'x-api-key: ${key}' http://api.test:8080/api/v1/servers/9/leaderboard`)
  t.match(curls.slice(1), [/\/servers\/9\/leaderboard\?season=current$/, /\/servers\/9\/members\/\d+\/history\?days=7$/, /\/servers\/9\/stats\/history\?days=7$/],
    'then the season\'s and the history\'s')
  t.match(await store.check(key), { status: 'ok', guildId: '9', plan: 'professional' })
  const [again, json] = await Promise.all([cli(['demo', '--guild', '9']), cli(['demo', '--guild', '9', '--json'])])
  t.equal(again.code, 0)
  t.match(again.stdout, /already has 500 members/)
  t.equal(await redis.zcard(keys.guild('9').board), 500)
  const demo = JSON.parse(json.stdout) as { key: string, key_id: string, curl: string }
  t.match(demo, { guild_id: '9', seeded: false, members: 500, key_id: /^[0-9a-f]{16}$/, curl: `curl -H 'x-api-key: ${demo.key}' http://localhost:3000/api/v1/servers/9/leaderboard` })
  t.match(await store.check(demo.key), { status: 'ok', id: demo.key_id, guildId: '9' }, '--json: the key printed works')
})

t.test('an unreachable Redis is one error line and exit 1 within seconds, not a hang', async (t) => {
  const port = await freePort()
  const run = await cli(['award', '--guild', '1', '--user', '2', '--xp', '3'], { REDIS_URL: `redis://127.0.0.1:${port}` })
  // A hang would end in cli()'s kill after 60 s, with no exit code; no wall-clock bound here,
  // which a busy machine's start-up times made flaky.
  t.equal(run.code, 1, 'exits by itself, with 1')
  t.same(lines(run.stderr).length, 1)
  t.match(run.stderr, `error: cannot reach Redis at redis://127.0.0.1:${port}`)
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

t.test('member show prints the member record the API serves, as fields or as one line of JSON; a non-member is exit 1', async (t) => {
  await writer.setXp({ guildId: '20', userId: '100', xp: 300, username: 'ada' })
  await writer.setXp({ guildId: '20', userId: '99', xp: 300, username: 'bob' })
  await writer.claimDaily({ guildId: '20', userId: '100' })
  const [human, json, missing] = await Promise.all([
    cli(['member', 'show', '--guild', '20', '--user', '100']),
    cli(['member', 'show', '--guild', '20', '--user', '100', '--json']),
    cli(['member', 'show', '--guild', '20', '--user', '5'])
  ])
  const record = await reader.member('20', '100')
  t.equal(json.code, 0)
  t.equal(lines(json.stdout).length, 1, 'one line')
  t.same(JSON.parse(json.stdout), record, 'exactly the reader\'s record')
  t.match(record, { rank: 2, username: 'ada', xp: 300, level: 2, daily_streak: 1 }, '99 ranks before 100 on equal XP')
  t.equal(human.code, 0)
  t.match(human.stdout, /^user_id +100\n/)
  t.match(human.stdout, /\nrank +2\n/)
  t.match(human.stdout, /\nusername +ada\n/)
  t.match(human.stdout, new RegExp(`\\nlast_daily_claim +${record.last_daily_claim ?? 'never'}\\n`))
  t.same(missing, { code: 1, stdout: '', stderr: 'error: user 5 is not a member of server 20\n' })
})

t.test('member set-xp sets XP outright, not multiplied, and says what it was; the aggregates follow', async (t) => {
  await writer.configureGuild('21', { multiplier: '0.5' })
  await writer.awardXp({ guildId: '21', userId: '7', xp: 100 })
  const run = await cli(['member', 'set-xp', '--guild', '21', '--user', '7', '--xp', '5000', '--username', 'carol'])
  t.same(run, { code: 0, stdout: 'set 7 in 21 to 5000 XP (level 10); it had 50 XP\n', stderr: '' })
  t.equal(await xpOf('21', '7'), '5000', 'not halved')
  t.equal((await recordOf('21', '7')).username, 'carol')
  t.match(await reader.stats('21'), { total_xp: 5000, total_members: 1 })
  const json = await cli(['member', 'set-xp', '--guild', '21', '--user', '8', '--xp', '0', '--json'])
  t.same(JSON.parse(json.stdout), { guild_id: '21', user_id: '8', xp: 0, previous_xp: 0, level: 0 }, 'a new member at 0 XP')
  t.equal(await xpOf('21', '8'), '0', 'ranked with 0 XP')

  const before = await guildState('21')
  const bad = await Promise.all([
    cli(['member', 'set-xp', '--guild', '21', '--user', '7', '--xp', '-1']),
    cli(['member', 'set-xp', '--guild', '21', '--user', '7', '--xp', '1000000000001']),
    cli(['member', 'set-xp', '--guild', '21', '--user', '7', '--xp', '5', '--username', ' '])
  ])
  for (const run of bad) {
    t.equal(run.code, 1)
    t.equal(lines(run.stderr).length, 1)
  }
  t.match(bad[1]?.stderr, 'xp must be an integer from 0 to 1000000000000')
  t.match(bad[2]?.stderr, 'username must be 1 to 100 characters')
  t.same(await guildState('21'), before, 'refused input changes nothing')
})

t.test('member rename records a new name; renaming a non-member is exit 1 and writes nothing', async (t) => {
  await writer.awardXp({ guildId: '22', userId: '3', xp: 10, username: 'old' })
  const run = await cli(['member', 'rename', '--guild', '22', '--user', '3', '--username', 'Zoë ✨'])
  t.same(run, { code: 0, stdout: 'renamed 3 in 22 to Zoë ✨\n', stderr: '' })
  t.equal((await reader.member('22', '3')).username, 'Zoë ✨')
  const json = await cli(['member', 'rename', '--guild', '22', '--user', '3', '--username', 'new', '--json'])
  t.same(JSON.parse(json.stdout), { guild_id: '22', user_id: '3', username: 'new' })
  const before = await guildState('22')
  const missing = await cli(['member', 'rename', '--guild', '22', '--user', '4', '--username', 'ghost'])
  t.same(missing, { code: 1, stdout: '', stderr: 'error: user 4 is not a member of server 22\n' })
  t.same(await guildState('22'), before)
})

t.test('top prints a page of the leaderboard as a table, or the API\'s response as JSON', async (t) => {
  for (const [userId, xp] of [['100', 500], ['99', 500], ['5', 80], ['6', 0]] as const) {
    await writer.setXp({ guildId: '23', userId, xp, username: `u${userId}` })
  }
  const [table, json, second, past, empty, bad] = await Promise.all([
    cli(['top', '--guild', '23']),
    cli(['top', '--guild', '23', '--limit', '2', '--page', '2', '--json']),
    cli(['top', '--guild', '23', '--limit', '3', '--page', '2']),
    cli(['top', '--guild', '23', '--page', '9']),
    cli(['top', '--guild', '24']),
    cli(['top', '--guild', '23', '--limit', '101'])
  ])
  t.equal(table.code, 0)
  t.same(lines(table.stdout).map((line) => line.split(/ +/)), [
    ['RANK', 'USER', 'USERNAME', 'LEVEL', 'XP'],
    ['1', '99', 'u99', '3', '500'],
    ['2', '100', 'u100', '3', '500'],
    ['3', '5', 'u5', '0', '80'],
    ['4', '6', 'u6', '0', '0'],
    ['page', '1', 'of', '1,', '4', 'members']
  ], 'ranked by XP, ties by user id as numbers, as the API ranks them')
  t.same(JSON.parse(json.stdout), await reader.page('23', 2, 2), 'exactly the reader\'s page')
  t.match(JSON.parse(json.stdout), { total: 4, page: 2, data: [{ rank: 3, user_id: '5' }, { rank: 4, user_id: '6' }] })
  t.match(lines(second.stdout), [/^RANK/, /^4 +6 /, 'page 2 of 2, 4 members'])
  t.same(past, { code: 0, stdout: 'page 9 is past the end: server 23 has 4 members (1 page of 10)\n', stderr: '' })
  t.same(empty, { code: 0, stdout: 'server 24 has no members\n', stderr: '' })
  t.equal(bad.code, 1)
  t.match(bad.stderr, /^error: .*limit must be an integer from 1 to 100\n$/)
})

t.test('top --period ranks by the XP gained in the period; set XP does not count', async (t) => {
  await writer.setXp({ guildId: '26', userId: '1', xp: 900, username: 'set' })
  await writer.awardXp({ guildId: '26', userId: '2', xp: 30, username: 'weekly' })
  await writer.awardXp({ guildId: '26', userId: '3', xp: 50, username: 'busier' })
  const [week, json, last, bad] = await Promise.all([
    cli(['top', '--guild', '26', '--period', 'week']),
    cli(['top', '--guild', '26', '--period', 'month', '--json']),
    cli(['top', '--guild', '26', '--period', 'last_week']),
    cli(['top', '--guild', '26', '--period', 'year'])
  ])
  t.same(lines(week.stdout).map((line) => line.split(/ +/)), [
    ['RANK', 'USER', 'USERNAME', 'LEVEL', 'XP'],
    ['1', '3', 'busier', '0', '50'],
    ['2', '2', 'weekly', '0', '30'],
    ['page', '1', 'of', '1,', '2', 'members', 'with', 'XP', 'in', 'the', 'period', '(week)']
  ])
  t.same(JSON.parse(json.stdout), await reader.page('26', 1, 10, 'month'), 'exactly the reader\'s period page')
  t.same(last, { code: 0, stdout: 'server 26 has no members with XP in the period (last_week)\n', stderr: '' })
  t.equal(bad.code, 1)
  t.match(bad.stderr, /year.*invalid|invalid.*year|Allowed choices/)
})

t.test('keys rotate prints a new key once: the old key stops working, the new one has the same id, server and plan', async (t) => {
  const [a, b] = await Promise.all(['a', 'b'].map(async (name) => await store.create({ guildId: '25', plan: 'starter', name })))
  if (a === undefined || b === undefined) throw new Error('keys not created')
  const [human, json] = await Promise.all([cli(['keys', 'rotate', a.id]), cli(['keys', 'rotate', b.id, '--json'])])
  t.equal(human.code, 0)
  const newKey = /lbk_\S+/.exec(human.stdout)?.[0] ?? ''
  t.match(human.stdout, `API key ${a.id} of server 25 rotated`)
  t.match(human.stdout, /shown only this once/)
  t.equal((await store.check(a.key)).status, 'unknown', 'the old key is refused')
  t.match(await store.check(newKey), { status: 'ok', id: a.id, guildId: '25', plan: 'starter' }, 'the printed key works')

  t.equal(lines(json.stdout).length, 1)
  const rotated = JSON.parse(json.stdout) as Record<string, string | null>
  t.match(rotated, { id: b.id, key: /^lbk_/, guild_id: '25', plan: 'starter', name: 'b', status: 'active', rotated_at: String })
  t.match(await store.check(rotated.key ?? ''), { status: 'ok', id: b.id })
  t.equal((await store.check(b.key)).status, 'unknown')

  await store.revoke(a.id)
  const revoked = await cli(['keys', 'rotate', a.id])
  t.same(revoked, { code: 1, stdout: '', stderr: `error: cannot rotate API key ${a.id}: it was revoked\n` })
  t.equal((await store.check(newKey)).status, 'revoked', 'a revoked key stays revoked')
})

t.test('keys set-plan moves a key to another plan and keeps its secret; keys revoke --json', async (t) => {
  const created = await store.create({ guildId: '26', plan: 'free' })
  const run = await cli(['keys', 'set-plan', created.id, '--plan', 'professional'])
  t.same(run, { code: 0, stdout: `API key ${created.id} of server 26: plan free -> professional\n`, stderr: '' })
  t.match(await store.check(created.key), { status: 'ok', plan: 'professional' })
  const json = await cli(['keys', 'set-plan', created.id, '--plan', 'starter', '--json'])
  t.match(JSON.parse(json.stdout), { id: created.id, plan: 'starter', status: 'active' })
  t.notMatch(json.stdout, created.key.slice(21), 'never the key')
  const bad = await cli(['keys', 'set-plan', created.id, '--plan', 'gold'])
  t.equal(bad.code, 1)
  t.match(bad.stderr, /^error: option '--plan <plan>' argument 'gold' is invalid/)
  t.match(await store.check(created.key), { plan: 'starter' })

  const revoke = await cli(['keys', 'revoke', created.id, '--json'])
  t.match(JSON.parse(revoke.stdout), { id: created.id, status: 'revoked', revoked_at: String })
})

t.test('keys set-servers replaces the servers a key reads (the secret kept); the server taken away no longer lists it', async (t) => {
  const created = await store.create({ servers: ['31', '32'], plan: 'free' })
  const run = await cli(['keys', 'set-servers', created.id, '--guild', '31'])
  t.same(run, { code: 0, stdout: `API key ${created.id}: servers 31, 32 -> server 31\n`, stderr: '' })
  t.match(await store.check(created.key), { status: 'ok', servers: ['31'] })
  t.same((await store.list('32')).map((info) => info.id), [])
  // (Not --all-servers: a key of every server would be listed by the other tests' servers.)
  const json = await cli(['keys', 'set-servers', created.id, '--servers', '33,34', '--json'])
  t.match(JSON.parse(json.stdout), { id: created.id, guild_id: null, servers: ['33', '34'], status: 'active' })
  t.notMatch(json.stdout, created.key.slice(21), 'never the key')
  const none = await cli(['keys', 'set-servers', created.id])
  t.same([none.code, none.stderr], [1, 'error: give the servers: --guild G, --servers G1,G2,… or --all-servers\n'])
  t.match(await store.check(created.key), { servers: ['33', '34'] }, 'unchanged by the refused run')
})

t.test('daily and seed print one line of JSON with --json', async (t) => {
  const [daily, seed] = await Promise.all([
    cli(['daily', '--guild', '27', '--user', '1', '--at', '2026-01-02T03:04:05Z', '--json']),
    cli(['seed', '--guild', '28', '--members', '5', '--seed', 'json', '--json'])
  ])
  t.same(JSON.parse(daily.stdout), { guild_id: '27', user_id: '1', streak: 1, claimed_at: '2026-01-02T03:04:05.000Z' })
  t.equal(lines(seed.stdout).length, 1, 'one line, no progress on stdout')
  t.match(JSON.parse(seed.stdout), { guild_id: '28', members: 5, seed: 'json', total_xp: Number, elapsed_ms: Number })
  t.equal(await redis.zcard(keys.guild('28').board), 5)
})

t.test('guild show prints a server\'s curve, multiplier, members, total XP and keys, as fields or as JSON', async (t) => {
  await writer.configureGuild('60', { curve: 'linear', multiplier: '2.5' })
  await writer.bulkSetMembers('60', [{ userId: '1', xp: 300, username: 'a' }, { userId: '2', xp: 0 }])
  const key = await store.create({ guildId: '60', plan: 'free', name: 'dashboard' })
  const revoked = await store.create({ guildId: '60', plan: 'starter' })
  await store.revoke(revoked.id)
  const [text, json, empty] = await Promise.all([
    cli(['guild', 'show', '--guild', '60']),
    cli(['guild', 'show', '--guild', '60', '--json']),
    cli(['guild', 'show', '--guild', '61'])
  ])
  t.equal(text.code, 0, text.stderr)
  t.match(text.stdout, /^server {9}60\ncurve {10}linear\nmultiplier {5}2\.5\nmembers {8}2 \(1 with XP\)\ntotal XP {7}300\naverage level {2}2\nAPI keys {7}2 keys, 1 active\n\nID /)
  t.match(text.stdout, new RegExp(`\n${key.id}  dashboard  free +active +-\n`))
  t.match(text.stdout, new RegExp(`\n${revoked.id}  - +starter  revoked  -\n`))
  t.notMatch(text.stdout, key.key, 'never a key itself')
  const shown = JSON.parse(json.stdout) as { api_keys: Array<{ id: string }> }
  t.match(shown, { guild_id: '60', xp_curve: 'linear', xp_multiplier: 2.5, members: 2, members_with_xp: 1, total_xp: 300, average_level: 2 })
  t.same(shown.api_keys.sort((a, b) => a.id.localeCompare(b.id)), [
    { id: revoked.id, name: null, plan: 'starter', status: 'revoked', expires_at: null },
    { id: key.id, name: 'dashboard', plan: 'free', status: 'active', expires_at: null }
  ].sort((a, b) => a.id.localeCompare(b.id)))
  t.match(empty.stdout, /curve {10}mee6\nmultiplier {5}1\nmembers {8}0 \(0 with XP\)\n.*\nAPI keys {7}none\n$/s)
})

t.test('demo --keep-key makes no new key while the demo server has a working one, and says which; once it is revoked, it makes one', async (t) => {
  const first = await cli(['demo', '--guild', '62', '--keep-key', '--json'])
  t.equal(first.code, 0, first.stderr)
  const made = JSON.parse(first.stdout) as { key: string, key_id: string }
  t.match(await store.check(made.key), { status: 'ok', guildId: '62', plan: 'professional' }, 'no key yet: one is made')
  const [again, json] = await Promise.all([cli(['demo', '--guild', '62', '--keep-key']), cli(['demo', '--guild', '62', '--keep-key', '--json'])])
  t.same(lines(again.stdout), [
    'demo server 62: already has 500 members, left as it was',
    `API key ${made.key_id} (plan professional) made by an earlier run still works; its secret was shown then. For a new secret under the same id: keys rotate ${made.key_id}`
  ])
  t.same(JSON.parse(json.stdout), { guild_id: '62', seeded: false, members: 500, key_id: made.key_id, key: null, curl: null })
  t.equal((await store.list('62')).length, 1, 'still one key')
  await store.revoke(made.key_id)
  const after = await cli(['demo', '--guild', '62', '--keep-key', '--json'])
  const remade = JSON.parse(after.stdout) as { key: string, key_id: string }
  t.not(remade.key_id, made.key_id)
  t.match(await store.check(remade.key), { status: 'ok', guildId: '62' })
})

t.test('functions prune deletes the libraries older builds loaded, keeping this build\'s and every library not the service\'s', async (t) => {
  const older = 'leaderboard_00000000000000aa'
  await raw.call('FUNCTION', 'LOAD', 'REPLACE', `#!lua name=${older}\nredis.register_function('awardXp_00000000000000aa', function () return 1 end)`)
  await raw.call('FUNCTION', 'LOAD', 'REPLACE', "#!lua name=clitest_own\nredis.register_function('clitest_own', function () return 1 end)")
  await writer.awardXp({ guildId: '63', userId: '1', xp: 5 }) // this build's library, loaded at its first call
  const libraries = async (): Promise<string[]> => ((await raw.call('FUNCTION', 'LIST')) as string[][]).map((entry) => entry[1] as string).sort()
  const ours = library().name
  t.same(await libraries(), [older, 'clitest_own', ours].sort())
  const node = `127.0.0.1:${server.port}`
  const dry = await cli(['functions', 'prune', '--dry-run'])
  t.equal(dry.code, 0, dry.stderr)
  t.same(lines(dry.stdout), [`${node}: would delete ${older}; kept ${ours}`])
  t.same(await libraries(), [older, 'clitest_own', ours].sort(), 'a dry run deletes nothing')
  const run = await cli(['functions', 'prune', '--json'])
  t.equal(run.code, 0, run.stderr)
  t.same(JSON.parse(run.stdout), { dry_run: false, nodes: [{ node, deleted: [older], kept: ours }] })
  t.same(await libraries(), ['clitest_own', ours].sort(), "the older build's library deleted; this build's and another application's kept")
  t.same(lines((await cli(['functions', 'prune'])).stdout), [`${node}: no library of an older build; kept ${ours}`], 'again: nothing more')
  t.match(await writer.awardXp({ guildId: '63', userId: '1', xp: 5 }), { xp: 10 }, 'awards go on')
})
