// `import` and `export` as a user runs them: child processes against a real redis-server, their
// exit codes, what they print on stdout and stderr, and what they leave in Redis.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { redisFixture } from './helpers/redis-server.js'
import { cliRunner, lines } from './helpers/cli.js'
import { dataSnapshot } from './helpers/redis-snapshot.js'
import { boardOf, recordsOf } from './helpers/guild-state.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'

t.jobs = 4
t.setTimeout(240_000)

const PREFIX = 'clitransfer'
const { server, redis, raw, keys } = await redisFixture(t, PREFIX)
const cli = cliRunner(t, { REDIS_URL: server.url, REDIS_PREFIX: PREFIX })
const writer = new LeaderboardWriter(redis, keys)
const reader = new LeaderboardReader(redis, keys)
const dir = mkdtempSync(join(tmpdir(), 'lb-cli-transfer-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })

function file (name: string, content: string): string {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

const guildData = async (guildId: string): Promise<unknown> => await dataSnapshot(raw, `${PREFIX}:{${guildId}}:*`)

t.test('import of a CSV with bad lines: exit 0, each bad line on stderr, a summary on stdout', async (t) => {
  const path = file('bad-lines.csv', 'xp,user_id,nick,username\n10,1,a,ada\n-1,2,b,bob\n30,3,c,"multi\nline"\n40,4,d,dee\n')
  const run = await cli(['import', '--guild', '101', '--file', path])
  t.equal(run.code, 0)
  t.same(lines(run.stderr), [
    'skipped line 3: xp must be a whole number from 0 to 1000000000000 (got "-1")',
    'skipped line 4: username must be 1 to 100 characters without control characters (got "multi\\nline")'
  ])
  t.match(run.stdout, new RegExp(`^imported 2 members into 101 from ${path} \\(csv\\) in \\d+\\.\\d\\d s \\(\\d+ rows/s\\); skipped 2 bad rows \\(on stderr\\)\n$`))
  t.same(await boardOf(redis, keys.guild('101')), new Map([['1', 10], ['4', 40]]))
})

t.test('import of MEE6 pages with bad rows: exit 0, rows named by page and index; --json gives the summary as data', async (t) => {
  const pages = [{ players: [{ id: '11', username: 'a', xp: 5 }] }, { players: [{ id: '12', username: 'b', xp: 'lots' }, { id: '13', username: 'c', xp: 7 }] }]
  const path = file('pages.json', JSON.stringify(pages))
  const run = await cli(['import', '--guild', '102', '--file', path, '--json'])
  t.equal(run.code, 0)
  t.equal(run.stderr, '', 'bad rows are in the JSON, not on stderr')
  const summary = JSON.parse(run.stdout) as Record<string, unknown>
  t.match(summary, { guild_id: '102', file: path, format: 'mee6', imported: 2, skipped: 1, elapsed_ms: Number, rows_per_second: Number })
  t.same(summary.problems, [{ page: 1, index: 0, where: '[1].players[0]', message: 'xp must be a whole number from 0 to 1000000000000 (got "lots")' }])
  t.same(await boardOf(redis, keys.guild('102')), new Map([['11', 5], ['13', 7]]))
})

t.test('import --strict with a bad row: exit 1, the bad row and one error line on stderr, nothing changed', async (t) => {
  await writer.bulkSetMembers('103', [{ userId: '1', xp: 50, username: 'before' }])
  await writer.claimDaily({ guildId: '103', userId: '1' })
  const before = await guildData('103')
  const path = file('strict.csv', 'user_id,username,xp\n1,after,60\n2,two,1.5\n3,three,3\n')
  const run = await cli(['import', '--guild', '103', '--file', path, '--strict'])
  t.equal(run.code, 1)
  t.equal(run.stdout, '')
  t.same(lines(run.stderr), [
    'bad row at line 3: xp must be a whole number from 0 to 1000000000000 (got "1.5")',
    'error: 1 bad row (the first: line 3: xp must be a whole number from 0 to 1000000000000 (got "1.5")); nothing was imported'
  ])
  t.same(await guildData('103'), before, 'every key of the server byte for byte as it was')

  const json = await cli(['import', '--guild', '103', '--file', path, '--strict', '--json'])
  t.equal(json.code, 1)
  t.match(JSON.parse(json.stdout), { imported: 0, skipped: 1, refused: true, problems: [{ line: 3 }] })
  t.match(json.stderr, /^error: 1 bad row/)
  t.same(await guildData('103'), before)
})

t.test('import errors that concern the whole file: exit 1, one clear line, nothing written', async (t) => {
  const cases: Array<[string, string[], RegExp]> = [
    ['a header without xp', ['--file', file('no-xp.csv', 'user_id,username,points\n1,a,5\n')],
      /^error: the CSV header \(line 1\) must name the columns user_id, username, xp; missing: xp \(found: "user_id", "username", "points"\)\n$/],
    ['an extension that names no format', ['--file', file('board.txt', 'user_id,username,xp\n')], /^error: cannot tell the format of .*board\.txt .*give the format\n$/],
    ['no such file', ['--file', join(dir, 'nope.csv')], /^error: cannot read .*nope\.csv: ENOENT/],
    ['not JSON', ['--file', file('broken.json', '{')], /^error: .*broken\.json is not valid JSON/],
    ['an unknown --format', ['--file', file('x.csv', ''), '--format', 'xlsx'], /error: option '--format <name>' argument 'xlsx' is invalid/]
  ]
  const runs = await Promise.all(cases.map(async ([, args]) => await cli(['import', '--guild', '104', ...args])))
  runs.forEach((run, i) => {
    const [what, , message] = cases[i] ?? ['', [], /$^/]
    t.equal(run.code, 1, `${what}: exit 1`)
    t.equal(run.stdout, '', `${what}: nothing on stdout`)
    t.match(run.stderr, message, `${what}: the message`)
  })
  t.same(await raw.exists(keys.guild('104').board), 0, 'nothing written')
})

t.test('--format overrides the extension', async (t) => {
  const run = await cli(['import', '--guild', '105', '--file', file('mee6.txt', '{"players": [{"id": "1", "username": "a", "xp": 9}]}'), '--format', 'mee6'])
  t.equal(run.code, 0)
  t.same(await boardOf(redis, keys.guild('105')), new Map([['1', 9]]))
})

t.test('export writes every member in rank order as CSV or JSON lines; an empty server is the header alone', async (t) => {
  await writer.bulkSetMembers('106', [
    { userId: '100', xp: 300, username: 'comma, "quoted"' },
    { userId: '99', xp: 300, username: 'Zoë' },
    { userId: '7', xp: 0 },
    { userId: '8', xp: 1000, username: 'top', daily: { streak: 3, lastClaim: new Date('2020-01-02T03:04:05.678Z') } }
  ])
  const [csv, jsonl, empty] = await Promise.all([
    cli(['export', '--guild', '106']),
    cli(['export', '--guild', '106', '--format', 'jsonl']),
    cli(['export', '--guild', '107'])
  ])
  t.same(csv, {
    code: 0,
    stdout: 'user_id,username,xp,level,daily_streak,last_daily_claim\n' +
      '8,top,1000,4,0,2020-01-02T03:04:05.678Z\n' +
      '99,Zoë,300,2,0,\n' +
      '100,"comma, ""quoted""",300,2,0,\n' +
      '7,,0,0,0,\n',
    stderr: ''
  })
  t.equal(jsonl.code, 0)
  t.same(lines(jsonl.stdout).map((line) => JSON.parse(line)), [
    { user_id: '8', username: 'top', xp: 1000, level: 4, daily_streak: 0, last_daily_claim: '2020-01-02T03:04:05.678Z' },
    { user_id: '99', username: 'Zoë', xp: 300, level: 2, daily_streak: 0, last_daily_claim: null },
    { user_id: '100', username: 'comma, "quoted"', xp: 300, level: 2, daily_streak: 0, last_daily_claim: null },
    { user_id: '7', username: null, xp: 0, level: 0, daily_streak: 0, last_daily_claim: null }
  ])
  t.same(empty, { code: 0, stdout: 'user_id,username,xp,level,daily_streak,last_daily_claim\n', stderr: '' })
})

t.test('export from one server, import into another: the same leaderboard', async (t) => {
  const names = ['a, b', '"q"', '🎉 party', 'ünïcödé', '=1+1', 'plain']
  await writer.bulkSetMembers('108', Array.from({ length: 1200 }, (_, i) => ({ userId: String(5000 + i), xp: (i * 7919) % 3000, username: `${names[i % names.length]} ${i}` })))
  const exported = await cli(['export', '--guild', '108'])
  t.equal(exported.code, 0)
  const imported = await cli(['import', '--guild', '109', '--file', file('round.csv', exported.stdout)])
  t.equal(imported.code, 0)
  t.match(imported.stdout, /^imported 1200 members into 109 /)
  for (const page of [1, 6, 12]) t.same(await reader.page('109', page, 100), await reader.page('108', page, 100), `page ${page}`)
  t.same(await reader.stats('109'), await reader.stats('108'))
  t.same([...(await recordsOf(redis, keys.guild('109'))).values()].map((r) => r.username).sort(),
    [...(await recordsOf(redis, keys.guild('108'))).values()].map((r) => r.username).sort(), 'every name exactly')
})
