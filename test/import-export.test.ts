// Import (CSV and MEE6 JSON, through the bulk write path) and export (CSV and JSON lines, in rank
// order) in the library, against a real redis-server: what an import sets and what it leaves,
// bad rows reported by position, strict refusals that change nothing, reruns that change nothing,
// and an export that imports back into the same leaderboard.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { redisFixture } from './helpers/redis-server.js'
import { tempFiles } from './helpers/temp-files.js'
import { dataSnapshot } from './helpers/redis-snapshot.js'
import { boardOf, rawRecordsOf, recordsOf, statsOf, storedStats } from './helpers/guild-state.js'
import { redisNow } from '../src/redis/client.js'
import { boardMember } from '../src/redis/keys.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { type ImportSummary, importMembers, type SourceRow } from '../src/transfer/import-members.js'
import { csvSource, importFile } from '../src/transfer/import-sources.js'
import { type ExportedMember, exportMembers } from '../src/transfer/export-members.js'
import { cellText, textCell } from '../src/transfer/spreadsheet-cells.js'
import { ImportRefusedError } from '../src/errors.js'
import { MAX_XP } from '../src/levels/curves.js'

const { redis, raw, keys } = await redisFixture(t, 'transfer')
const writer = new LeaderboardWriter(redis, keys)
const reader = new LeaderboardReader(redis, keys)
const { dir, file } = tempFiles(t, 'lb-transfer-')

let lastGuild = 7000
const newGuild = (): string => String(++lastGuild)
const DAY = 86_400_000

/** Every key of one server, byte for byte, with or without its data version. */
async function guildData (guildId: string, { withVersion = true } = {}): Promise<Record<string, unknown>> {
  const all = await dataSnapshot(raw, `${keys.prefix}:{${guildId}}:*`)
  if (!withVersion) delete all[keys.guild(guildId).version]
  return all
}

async function checkExact (t: Test, guildId: string): Promise<void> {
  const k = keys.guild(guildId)
  t.same(await storedStats(redis, k), statsOf([...(await boardOf(redis, k)).values()]), 'the aggregates equal a full scan of the board')
}

async function exported (guildId: string, format: 'csv' | 'jsonl', chunk?: number): Promise<string> {
  let text = ''
  for await (const part of exportMembers(reader, guildId, { format, chunk })) text += part
  return text
}

const wheres = (s: ImportSummary): string[] => s.problems.map((p) => `${p.where}: ${p.message}`)

t.test('MEE6, one page: each player gets its XP (not multiplied) and username; other fields are ignored', async (t) => {
  const g = newGuild()
  await writer.configureGuild(g, { multiplier: 3 })
  const page = {
    admin: false,
    guild: { id: g, name: 'x' },
    players: [
      { avatar: 'abc', detailed_xp: [1, 2, 3], discriminator: '0', guild_id: g, id: '300000000000000001', level: 99, message_count: 5, username: 'ada', xp: 1500 },
      { id: '300000000000000002', username: 'Zoë 🎉', xp: 0, level: 7 },
      { id: 42, username: 'safe number id', xp: 12 }
    ]
  }
  const s = await importFile(writer, g, file('page.json', JSON.stringify(page)))
  t.same({ imported: s.imported, skipped: s.skipped }, { imported: 3, skipped: 0 })
  t.same(await boardOf(redis, keys.guild(g)), new Map([['300000000000000001', 1500], ['300000000000000002', 0], ['42', 12]]), 'XP as given, a level field ignored, 0 XP ranked')
  const records = await recordsOf(redis, keys.guild(g))
  t.same([...records.values()].map((r) => r.username).sort(), ['Zoë 🎉', 'ada', 'safe number id'])
  await checkExact(t, g)
})

t.test('MEE6, an array of pages with bad rows: each reported by page and index and skipped, the rest imported', async (t) => {
  const g = newGuild()
  const pages = [
    { players: [{ id: '11', username: 'a', xp: 10 }, { id: '012', username: 'leading zero', xp: 10 }, { id: '13', username: 'b', xp: -1 }] },
    { players: [] },
    {
      players: [
        { id: '14', username: 'c', xp: 1.5 },
        { id: '15', xp: 3 },
        'not a player',
        { id: 'TOO_LONG', username: 'a number of 21 digits', xp: 1 },
        { id: '11', username: 'again', xp: 99 },
        { id: '16', username: 'd', xp: MAX_XP + 1 },
        { username: 'no id', xp: 1 },
        { id: '17', username: 'e', xp: '20' },
        { id: '18', username: 'x'.repeat(101), xp: 1 }
      ]
    }
  ]
  const s = await importFile(writer, g, file('pages.json', JSON.stringify(pages).replace('"TOO_LONG"', '123456789012345678901')))
  t.same({ imported: s.imported, skipped: s.skipped }, { imported: 2, skipped: 10 })
  t.same(wheres(s), [
    '[0].players[1]: the user id must be a decimal id of 1 to 20 digits without a leading zero (got "012")',
    '[0].players[2]: xp must be a whole number from 0 to 1000000000000 (got -1)',
    '[2].players[0]: xp must be a whole number from 0 to 1000000000000 (got 1.5)',
    '[2].players[1]: the username is missing',
    '[2].players[2]: not a player object',
    '[2].players[3]: the user id must be a decimal id of 1 to 20 digits without a leading zero (got "123456789012345678901")',
    '[2].players[4]: a second row for user 11 (the one at [0].players[0] counts)',
    '[2].players[5]: xp must be a whole number from 0 to 1000000000000 (got 1000000000001)',
    '[2].players[6]: the user id is missing',
    `[2].players[8]: username must be 1 to 100 characters without control characters (got "${'x'.repeat(38)}…)`
  ], 'every bad row, by its page and index in the file (0-based), with what is wrong')
  t.same(s.problems[0], { page: 0, index: 1, list: 'players', where: '[0].players[1]', message: s.problems[0]?.message }, 'positions as numbers too')
  t.same(await boardOf(redis, keys.guild(g)), new Map([['11', 10], ['17', 20]]), 'the good rows, the first of a repeated id, digits as text for xp')
  await checkExact(t, g)
})

t.test('MEE6: a file that is not a leaderboard is refused whole, naming what is wrong, and nothing is written', async (t) => {
  const g = newGuild()
  await writer.setXp({ guildId: g, userId: '1', xp: 5 })
  const before = await guildData(g)
  const cases: Array<[string, string, RegExp]> = [
    ['not JSON', '{"players": [', /is not valid JSON/],
    ['an object without players', '{"guild": {}}', /not a MEE6 leaderboard: expected a page/],
    ['a number', '42', /not a MEE6 leaderboard/],
    ['an array with a page that is not one', '[{"players": []}, {"status": 429}]', /^\[1\] is not a MEE6 leaderboard page/]
  ]
  for (const [what, content, message] of cases) {
    await t.rejects(importFile(writer, g, file('bad.json', content)), { name: 'ImportFileError', message }, what)
  }
  await t.rejects(importFile(writer, g, join(dir, 'missing.json')), { name: 'ImportFileError', message: /cannot read .*missing\.json/ }, 'a missing file')
  await t.rejects(importFile(writer, g, file('board.txt', '')), { name: 'ImportFileError', message: /cannot tell the format .*board\.txt/ }, 'an extension that names no format')
  t.same(await guildData(g), before, 'nothing changed')
})

t.test('CSV: the header may order the columns any way and name others, in any case; a BOM and CRLF line ends are fine', async (t) => {
  const g = newGuild()
  const csv = '\ufeffRank, XP ,avatar,User_ID,username\r\n1,700,a.png,21,"Ada, ""the first"""\r\n2,300,b.png,22,Zoë 🎉\r\n'
  const s = await importFile(writer, g, file('board.csv', csv))
  t.same({ imported: s.imported, skipped: s.skipped, problems: s.problems }, { imported: 2, skipped: 0, problems: [] })
  t.same(await boardOf(redis, keys.guild(g)), new Map([['21', 700], ['22', 300]]))
  const names = await recordsOf(redis, keys.guild(g))
  t.equal(names.get('21')?.username, 'Ada, "the first"', 'quotes and commas read as CSV quotes them')
  t.equal(names.get('22')?.username, 'Zoë 🎉')
})

t.test('CSV: bad lines are reported by the line they start on (quoted line breaks and empty lines counted) and skipped', async (t) => {
  const g = newGuild()
  const csv = [
    'user_id,username,xp', // 1
    '31,ok,10', // 2
    '32,"two', // 3
    'lines",abc', // 4
    '', // 5
    '33,short', // 6
    '0,zero id,5', // 7
    '34,"a ""quoted"", name",12', // 8
    '35,"line\r\nbreak",7', // 9-10
    '36,spaces,  8  ', // 11
    '37,too,many,fields', // 12
    '31,again,1', // 13
    '38,neg,-3', // 14
    '39,,4' // 15: an empty name: none given
  ].join('\n') + '\n'
  const s = await importFile(writer, g, file('lines.csv', csv))
  t.same(wheres(s), [
    'line 3: xp must be a whole number from 0 to 1000000000000 (got "abc")',
    'line 6: expected 3 fields as in the header, found 2',
    'line 7: the user id must be a decimal id of 1 to 20 digits without a leading zero (got "0")',
    'line 9: username must be 1 to 100 characters without control characters (got "line\\r\\nbreak")',
    'line 12: expected 3 fields as in the header, found 4',
    'line 13: a second row for user 31 (the one at line 2 counts)',
    'line 14: xp must be a whole number from 0 to 1000000000000 (got "-3")'
  ])
  t.same(s.problems[1], { line: 6, where: 'line 6', message: 'expected 3 fields as in the header, found 2' })
  t.same({ imported: s.imported, skipped: s.skipped }, { imported: 4, skipped: 7 })
  t.same(await boardOf(redis, keys.guild(g)), new Map([['31', 10], ['34', 12], ['36', 8], ['39', 4]]))
  const records = await rawRecordsOf(redis, keys.guild(g))
  t.equal(records.get('34'), '::a "quoted", name')
  t.notOk(records.has('39'), 'an empty username records no name')
})

t.test('CSV: a header without user_id, username and xp is an error naming what is missing; nothing is written', async (t) => {
  const g = newGuild()
  await writer.setXp({ guildId: g, userId: '1', xp: 5 })
  const before = await guildData(g)
  await t.rejects(importFile(writer, g, file('no-xp.csv', 'user_id,username,points\n1,a,5\n')),
    { name: 'ImportFileError', message: 'the CSV header (line 1) must name the columns user_id, username, xp; missing: xp (found: "user_id", "username", "points")' })
  await t.rejects(importFile(writer, g, file('data-first.csv', '1,a,5\n2,b,6\n')), { name: 'ImportFileError', message: /missing: user_id, username, xp/ }, 'a file without a header')
  await t.rejects(importFile(writer, g, file('empty.csv', '\n\n')), { name: 'ImportFileError', message: /the CSV is empty/ })
  await t.rejects(importFile(writer, g, file('twice.csv', 'user_id,xp,username,XP\n')), { name: 'ImportFileError', message: /names the column xp twice/ })
  t.same(await guildData(g), before, 'nothing changed')
})

t.test('CSV: a quote that breaks the file stops the import there, naming the line; nothing after it is imported', async (t) => {
  const g = newGuild()
  const csv = 'user_id,username,xp\n41,a,1\n42,"bad"quote,2\n43,c,3\n'
  await t.rejects(importFile(writer, g, file('broken.csv', csv)), { name: 'ImportFileError', message: /^the CSV is malformed.*Invalid Closing Quote: got "q" at line 3/ })
  const board = await boardOf(redis, keys.guild(g))
  t.notOk(board.has('42') || board.has('43'), 'neither the broken row nor any after it')
  await t.rejects(importFile(writer, g, file('open.csv', 'user_id,username,xp\n44,"never closed,4\n45,e,5\n')),
    { name: 'ImportFileError', message: /^the CSV is malformed.*Quote Not Closed/ }, 'a quote left open until the end of the file')
  t.notOk((await boardOf(redis, keys.guild(g))).has('45'))
})

t.test('strict: one bad row refuses the whole file and changes nothing at all', async (t) => {
  const g = newGuild()
  await writer.bulkSetMembers(g, [{ userId: '51', xp: 100, username: 'kept' }, { userId: '52', xp: 5 }])
  await writer.claimDaily({ guildId: g, userId: '51' })
  const before = await dataSnapshot(raw)
  const rows = ['user_id,username,xp', '51,new name,900', ...Array.from({ length: 25_000 }, (_, i) => `${1000 + i},m${i},${i}`), '53,bad,1.5']
  const err = await importFile(writer, g, file('strict.csv', rows.join('\n')), { strict: true }).catch((e: unknown) => e)
  t.type(err, ImportRefusedError)
  const refused = err as ImportRefusedError
  t.equal(refused.skipped, 1)
  t.same(refused.problems.map((p) => p.where), [`line ${rows.length}`])
  t.match(refused.message, /^1 bad row \(the first: line 25003: xp must be .*\); nothing was imported$/)
  t.same(await dataSnapshot(raw), before, 'every key of the Redis byte for byte as it was (good rows before the bad one included)')

  const json = [{ players: [{ id: '51', username: 'n', xp: 1 }] }, { players: [{ id: '54', xp: 1 }] }]
  await t.rejects(importFile(writer, g, file('strict.json', JSON.stringify(json)), { strict: true }), { name: 'ImportRefusedError', skipped: 1 })
  t.same(await dataSnapshot(raw), before, 'a MEE6 file too')
})

t.test('idempotent: the same import again leaves every member, record and aggregate byte for byte as it was', async (t) => {
  const g = newGuild()
  await writer.bulkSetMembers(g, [{ userId: '61', xp: 7, username: 'old' }, { userId: '62', xp: 8 }])
  const rows = ['user_id,username,xp', '61,renamed,70', '63,new,0', '64,,5', ...Array.from({ length: 1500 }, (_, i) => `${2000 + i},n${i % 7},${(i * 37) % 5000}`)]
  const path = file('again.csv', rows.join('\n'))
  const first = await importFile(writer, g, path)
  const after = await guildData(g, { withVersion: false })
  const version = await raw.get(keys.guild(g).version)
  const second = await importFile(writer, g, path)
  t.same([second.imported, second.skipped], [first.imported, first.skipped])
  t.same(await guildData(g, { withVersion: false }), after, 'board, records and stats unchanged')
  t.not(await raw.get(keys.guild(g).version), version, 'the data version moves (as after any write): pollers fetch once more')
  await checkExact(t, g)
})

t.test('members not in the file are untouched, and members in it keep their daily streak and last claim', async (t) => {
  const g = newGuild()
  const now = await redisNow(raw)
  await writer.setXp({ guildId: g, userId: '71', xp: 500, username: 'in file' })
  await writer.claimDaily({ guildId: g, userId: '71', at: new Date(now - DAY) })
  await writer.claimDaily({ guildId: g, userId: '71' })
  await writer.setXp({ guildId: g, userId: '72', xp: 900, username: 'not in file' })
  await writer.claimDaily({ guildId: g, userId: '72' })
  const k = keys.guild(g)
  const outside = async (): Promise<unknown> => [await raw.zscore(k.board, boardMember('72')), await raw.hget(k.members, boardMember('72'))]
  const untouched = await outside()
  const kept = (await recordsOf(redis, k)).get('71')

  await importFile(writer, g, file('partial.csv', 'user_id,username,xp\n71,renamed,40\n73,new,1\n'))
  t.same(await outside(), untouched, 'a member not in the file: XP and record as they were')
  t.same((await recordsOf(redis, k)).get('71'), { ...kept, username: 'renamed' }, 'a member in the file: new name, same streak and last claim')
  const member = await reader.member(g, '71')
  t.same([member.xp, member.daily_streak, member.username], [40, 2, 'renamed'], 'the member record shows the streak alive')
  await checkExact(t, g)
})

t.test('an empty username keeps the name already recorded', async (t) => {
  const g = newGuild()
  await writer.setXp({ guildId: g, userId: '81', xp: 1, username: 'named' })
  await importFile(writer, g, file('empty-name.csv', 'user_id,username,xp\n81,,20\n81,x,1\n'))
  const record = (await recordsOf(redis, keys.guild(g))).get('81')
  t.same([record?.username, (await boardOf(redis, keys.guild(g))).get('81')], ['named', 20])
})

/** Members with every kind of name a CSV must carry, ties, 0 XP, and daily records. */
async function tricky (g: string): Promise<void> {
  const names = ['comma, inc.', 'say "hi"', '"quoted"', 'Zoë', '霧雨 魔理沙', '🎉🎉', 'مرحبا', '=SUM(A1:A2)', '+1', '-2', '@here', 'x:y:z', "'apostrophe", 'a,b,"c",d', "'=marked", "''"]
  const members = names.map((username, i) => ({ userId: String(900_000_000_000_000_000n + BigInt(i)), xp: [5000, 5000, 0, 120][i % 4] ?? 1, username }))
  members.push({ userId: '99', xp: 5000, username: 'tie with a shorter id' }, { userId: '100', xp: 5000, username: 'tie, longer id' })
  await writer.bulkSetMembers(g, [...members, { userId: '5', xp: 300 }]) // one member with no name at all
  const now = await redisNow(raw)
  await writer.bulkSetMembers(g, [{ userId: '99', xp: 5000, daily: { streak: 4, lastClaim: new Date(now - 60_000) } }])
  await writer.bulkSetMembers(g, [{ userId: '100', xp: 5000, daily: { streak: 9, lastClaim: new Date(now - 10 * DAY) } }])
}

async function wholeBoard (g: string): Promise<unknown> {
  const { total } = await reader.page(g, 1, 1)
  const pages = []
  for (let page = 1; (page - 1) * 100 < total; page++) pages.push(...(await reader.page(g, page, 100)).data)
  return { pages, stats: await reader.stats(g) }
}

t.test('round trip: a CSV export imported into another server gives the same leaderboard, names exactly (formula marks taken off)', async (t) => {
  const from = newGuild()
  const to = newGuild()
  await tricky(from)
  const csv = await exported(from, 'csv')
  const s = await importFile(writer, to, file('round.csv', csv))
  t.same([s.imported, s.skipped], [19, 0])
  t.same(await wholeBoard(to), await wholeBoard(from), 'every entry (rank, id, name, level, XP) and the stats')
  t.same((await rawRecordsOf(redis, keys.guild(to))).get('5'), undefined, 'a member without a name stays without one')
  const strip = (text: string): string => text.split('\n').map((line) => line.replace(/,\d+,[^,]*(,\w+,[\d.]+)$/, '$1')).join('\n')
  t.equal(strip(await exported(to, 'csv')), strip(csv), 'and its export is the same but for the daily columns, which imports do not carry')
})

t.test('CSV export: the header, then every member in rank order, names quoted only where CSV needs it, formulas marked as text', async (t) => {
  const g = newGuild()
  await tricky(g)
  const text = await exported(g, 'csv')
  const csvLines = text.split('\n')
  t.equal(csvLines[0], 'user_id,username,xp,level,daily_streak,last_daily_claim,xp_curve,xp_multiplier')
  t.equal(csvLines.at(-1), '', 'ends with a line break')
  const ids = csvLines.slice(1, -1).map((line) => line.split(',')[0])
  t.same(ids, (await reader.page(g, 1, 100)).data.map((e) => e.user_id), 'rank order, ties by user id as numbers')
  t.ok(text.includes('\n99,tie with a shorter id,5000,'), 'a plain name is not quoted')
  t.ok(text.includes('\n900000000000000013,"a,b,""c"",d",5000,'), 'a comma and quotes are, quotes doubled')
  // OWASP's guard against CSV injection: a cell a spreadsheet would read as a formula starts with '.
  const cells = new Map(csvLines.slice(1, -1).map((line) => [line.split(',')[0], line.slice(line.indexOf(',') + 1)]))
  const id = (i: number): string => String(900_000_000_000_000_000n + BigInt(i))
  for (const [i, cell] of [[7, "'=SUM(A1:A2),"], [8, "'+1,"], [9, "'-2,"], [10, "'@here,"], [12, "''apostrophe,"], [14, "''=marked,"], [15, "''',"], [11, 'x:y:z,'], [3, 'Zoë,']] as const) {
    t.ok(cells.get(id(i))?.startsWith(cell), `user ${id(i)}: ${cell}`)
  }
  t.notOk(/(^|,)[=+\-@]/m.test(text), 'no cell starts a formula')
  t.ok(text.includes('\n5,,300,'), 'no recorded name: empty')
})

t.test('a CSV cell a spreadsheet would read as a formula (= + - @ tab CR) is marked with a leading \', and the mark comes off again', async (t) => {
  for (const name of ['=1+1', '+1', '-1', '@SUM(1)', '\tx', '\rx', "'", "''x", "'=x", 'plain', "'plain", '']) {
    t.equal(cellText(textCell(name)), name, JSON.stringify(name))
  }
  t.same(['=1', '+1', '-1', '@1', '\t1', '\r1', "'1", '1'].map(textCell), ["'=1", "'+1", "'-1", "'@1", "'\t1", "'\r1", "''1", '1'])
  t.equal(cellText("'=1"), '=1', "another tool's mark comes off too")
  t.equal(cellText("'plain"), "'plain", 'an apostrophe of the name itself stays')
})

t.test('JSON lines export: one object per member in rank order, with the member record\'s streak and last claim', async (t) => {
  const g = newGuild()
  await tricky(g)
  const members = (await exported(g, 'jsonl')).trimEnd().split('\n').map((line) => JSON.parse(line) as ExportedMember)
  t.equal(members.length, 19)
  t.same(Object.keys(members[0] ?? {}), ['user_id', 'username', 'xp', 'level', 'daily_streak', 'last_daily_claim', 'xp_curve', 'xp_multiplier'])
  for (const id of ['99', '100', '5']) {
    const line = members.find((m) => m.user_id === id)
    const record = await reader.member(g, id)
    t.same(line, {
      user_id: id,
      username: id === '5' ? null : record.username,
      xp: record.xp,
      level: record.level,
      daily_streak: record.daily_streak,
      last_daily_claim: record.last_daily_claim,
      xp_curve: 'mee6',
      xp_multiplier: 1
    }, `user ${id}: what the member record shows (username null when none is recorded)`)
  }
  t.equal(members.find((m) => m.user_id === '99')?.daily_streak, 4, 'a live streak')
  t.equal(members.find((m) => m.user_id === '100')?.daily_streak, 0, 'a lapsed one is 0, its last claim kept')
  t.same(members.map((m) => m.user_id), (await reader.page(g, 1, 100)).data.map((e) => e.user_id), 'rank order')
})

t.test('export of a server with no members: the CSV header alone, no JSON lines', async (t) => {
  const g = newGuild()
  t.equal(await exported(g, 'csv'), 'user_id,username,xp,level,daily_streak,last_daily_claim,xp_curve,xp_multiplier\n')
  t.equal(await exported(g, 'jsonl'), '')
})

t.test('export reads the board a chunk at a time: the same text whatever the chunk, and it says when the server changed meanwhile', async (t) => {
  const g = newGuild()
  await writer.bulkSetMembers(g, Array.from({ length: 23 }, (_, i) => ({ userId: String(i + 1), xp: (i * 7) % 10, username: `m${i}` })))
  const whole = await exported(g, 'jsonl', 10_000)
  const parts: string[] = []
  const chunked = exportMembers(reader, g, { format: 'jsonl', chunk: 5 })
  for await (const part of chunked) parts.push(part)
  t.equal(parts.join(''), whole)
  t.same(parts.map((p) => p.split('\n').length - 1), [5, 5, 5, 5, 3], 'five reads of at most five members, each written as it comes')
  t.same([chunked.exported, chunked.total, chunked.consistent], [23, 23, true])

  const busy = exportMembers(reader, g, {
    format: 'csv',
    chunk: 5,
    onProgress: (done) => { if (done === 5) writer.awardXp({ guildId: g, userId: '1', xp: 1 }).catch(() => {}) }
  })
  for await (const part of busy) t.ok(part.length > 0)
  t.equal(busy.consistent, false, 'a write during the export is noticed')
})

t.test('importMembers takes rows from anywhere: a stream of CSV, or rows of your own', async (t) => {
  const g = newGuild()
  const progress: number[] = []
  const fromStream = await importMembers(writer, g, csvSource(Readable.from(['user_id,userna', 'me,xp\n1,a,', '5\n'])).rows, { onProgress: (p) => progress.push(p.imported) })
  t.equal(fromStream.imported, 1, 'a header and rows split anywhere across chunks')
  t.same(progress, [1])
  const rows: SourceRow[] = [{ at: { line: 1 }, userId: '2', username: 'b', xp: 6 }, { at: { line: 2 }, userId: 'x', username: 'c', xp: 7 }]
  const problems: string[] = []
  const own = await importMembers(writer, g, rows, { onProblem: (p) => problems.push(p.where) })
  t.same([own.imported, own.skipped, problems], [1, 1, ['line 2']])
  t.same(await boardOf(redis, keys.guild(g)), new Map([['1', 5], ['2', 6]]))
})
