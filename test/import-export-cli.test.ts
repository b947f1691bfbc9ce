// `import` and `export` as a user runs them: child processes against a real redis-server, their
// exit codes, what they print on stdout and stderr, and what they leave in Redis.
import t from 'tap'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { redisFixture } from './helpers/redis-server.js'
import { cliRunner, lines } from './helpers/cli.js'
import { dataSnapshot } from './helpers/redis-snapshot.js'
import { boardOf, recordsOf } from './helpers/guild-state.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'

t.jobs = 4

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
  t.match(run.stdout, new RegExp(`^imported 2 members into 101 from ${path} \\(csv\\) in \\d+ ms; skipped 2 bad rows \\(on stderr\\)\n$`),
    'a small import is timed in milliseconds, with no rate')
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
  t.same(summary.problems, [{ page: 1, index: 0, list: 'players', where: '[1].players[0]', message: 'xp must be a whole number from 0 to 1000000000000 (got "lots")' }])
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
    ['an extension that names no format', ['--file', file('board.txt', 'user_id,username,xp\n')], /^error: cannot tell the format of .*board\.txt .*; give --format mee6\|amari\|lurkr\|polaris\|tatsu\|csv\n$/],
    ['standard input without --format', ['--file', '-'], /^error: cannot tell standard input; give --format mee6\|amari\|lurkr\|polaris\|tatsu\|csv\n$/],
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
    stdout: 'user_id,username,xp,level,daily_streak,last_daily_claim,xp_curve,xp_multiplier\n' +
      '8,top,1000,4,0,2020-01-02T03:04:05.678Z,mee6,1\n' +
      '99,Zoë,300,2,0,,mee6,1\n' +
      '100,"comma, ""quoted""",300,2,0,,mee6,1\n' +
      '7,,0,0,0,,mee6,1\n',
    stderr: ''
  })
  t.equal(jsonl.code, 0)
  t.same(lines(jsonl.stdout).map((line) => JSON.parse(line)), [
    { user_id: '8', username: 'top', xp: 1000, level: 4, daily_streak: 0, last_daily_claim: '2020-01-02T03:04:05.678Z', xp_curve: 'mee6', xp_multiplier: 1 },
    { user_id: '99', username: 'Zoë', xp: 300, level: 2, daily_streak: 0, last_daily_claim: null, xp_curve: 'mee6', xp_multiplier: 1 },
    { user_id: '100', username: 'comma, "quoted"', xp: 300, level: 2, daily_streak: 0, last_daily_claim: null, xp_curve: 'mee6', xp_multiplier: 1 },
    { user_id: '7', username: null, xp: 0, level: 0, daily_streak: 0, last_daily_claim: null, xp_curve: 'mee6', xp_multiplier: 1 }
  ])
  t.same(empty, { code: 0, stdout: 'user_id,username,xp,level,daily_streak,last_daily_claim,xp_curve,xp_multiplier\n', stderr: '' })
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

t.test('import --file - reads standard input, CSV or MEE6, named as such in the summary; one row is "1 member"', async (t) => {
  const [csv, mee6] = await Promise.all([
    cli(['import', '--guild', '110', '--file', '-', '--format', 'csv'], {}, 'user_id,username,xp\n1,one,12\n'),
    cli(['import', '--guild', '111', '--file', '-', '--format', 'mee6'], {}, '{"players": [{"id": "2", "username": "two", "xp": 34}]}')
  ])
  t.equal(csv.stderr, '')
  t.match(csv.stdout, /^imported 1 member into 110 from standard input \(csv\) in \d+ ms\n$/)
  t.same(await boardOf(redis, keys.guild('110')), new Map([['1', 12]]))
  t.equal(mee6.code, 0, mee6.stderr)
  t.same(await boardOf(redis, keys.guild('111')), new Map([['2', 34]]))
})

t.test('MEE6 ids written as numbers past 2^53 keep every digit', async (t) => {
  const path = file('big-ids.json', '{"players": [{"id": 444444444444444444, "username": "big", "xp": 5}, ' +
    '{"id": 12345678901234567890, "username": "bigger", "xp": 6}, {"id": 7, "username": "small", "xp": 1.5e3}]}')
  const run = await cli(['import', '--guild', '112', '--file', path])
  t.equal(run.code, 0, run.stderr)
  t.equal(run.stderr, '')
  t.same(await boardOf(redis, keys.guild('112')), new Map([['444444444444444444', 5], ['12345678901234567890', 6], ['7', 1500]]))
})

t.test('import --format amari|lurkr|polaris|tatsu of each bot\'s sample, from a file and from standard input: the format in the summary, every id exact', async (t) => {
  const fixture = (name: string): string => fileURLToPath(new URL(`fixtures/imports/${name}`, import.meta.url))
  const samples: Array<[string, string]> = [['amari', 'amari.json'], ['lurkr', 'lurkr.json'], ['polaris', 'polaris.json'], ['tatsu', 'tatsu.json']]
  const runs = await Promise.all(samples.map(async ([format, name], i) => await cli(['import', '--guild', String(120 + i), '--file', fixture(name), '--format', format])))
  for (const [i, run] of runs.entries()) {
    const [format, name] = samples[i] ?? []
    t.equal(run.code, 0, `${format}: ${run.stderr}`)
    t.match(run.stdout, new RegExp(`^imported 5 members into ${120 + i} from .*${name} \\(${format}\\) in \\d+ ms\n$`))
    t.same((await boardOf(redis, keys.guild(String(120 + i)))).get('444444444444444444'), 212840, `${format}: the id past 2^53 on its own member`)
  }
  const piped = await cli(['import', '--guild', '124', '--file', '-', '--format', 'tatsu', '--json'], {}, readFileSync(fixture('tatsu.json'), 'utf8'))
  t.match(JSON.parse(piped.stdout), { format: 'tatsu', file: '-', imported: 5, skipped: 0 })
  const unnamed = await cli(['import', '--guild', '125', '--file', fixture('amari.json')])
  t.equal(unnamed.code, 1, 'a .json is MEE6 unless --format says')
  t.match(unnamed.stderr, /^error: .*\[0\] is not a MEE6 leaderboard page: it has no "players" array; its "data" is where Amari keeps its rows: is it format amari\?\n$/)
})

t.test("export then import carries the server's curve and multiplier; --keep-settings keeps the target's; a file without them changes none", async (t) => {
  await writer.configureGuild('113', { curve: 'linear', multiplier: '1.5' })
  await writer.bulkSetMembers('113', [{ userId: '1', xp: 1_000_000, username: 'a' }, { userId: '2', xp: 500, username: 'b' }])
  const exported = await cli(['export', '--guild', '113'])
  const path = file('settings.csv', exported.stdout)
  const [carried, kept] = await Promise.all([
    cli(['import', '--guild', '114', '--file', path]),
    cli(['import', '--guild', '115', '--file', path, '--keep-settings'])
  ])
  t.match(carried.stdout, /^imported 2 members into 114 .* in \d+ ms; set curve linear, multiplier 1\.5\n$/)
  t.same((await reader.page('114', 1, 10)).data, (await reader.page('113', 1, 10)).data, 'the same levels: under the same curve')
  t.match(await reader.stats('114'), { xp_curve: 'linear', xp_multiplier: 1.5 })
  t.notMatch(kept.stdout, /set curve/)
  t.match(await reader.stats('115'), { xp_curve: 'mee6', xp_multiplier: 1 })

  await writer.configureGuild('116', { curve: 'flat', multiplier: 3 })
  const old = await cli(['import', '--guild', '116', '--file', file('old.csv', 'user_id,username,xp,level,daily_streak,last_daily_claim\n1,a,5,0,0,\n')])
  t.equal(old.code, 0)
  t.match(await reader.stats('116'), { xp_curve: 'flat', xp_multiplier: 3 }, 'an old export (no settings columns) leaves them')

  const mixed = await cli(['import', '--guild', '117', '--file', file('mixed.csv', 'user_id,username,xp,xp_curve,xp_multiplier\n1,a,5,linear,2\n2,b,6,flat,2\n3,c,7,linear,200\n')])
  t.same(lines(mixed.stderr), [
    "skipped line 3: the settings (xp_curve flat, xp_multiplier 2) differ from the file's first (linear, 2): a file holds one server's settings",
    'skipped line 4: xp_multiplier must be a number from 0.01 to 100 with at most two decimals (got "200")'
  ])
  t.match(await reader.stats('117'), { xp_curve: 'linear', xp_multiplier: 2 })
})
