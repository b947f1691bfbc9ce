// Import of other leveling bots' leaderboard JSON (Amari, Lurkr, Polaris, Tatsu, and MEE6's in the
// same forms) in the library, against a real redis-server: a sample of each bot's own shape
// (test/fixtures/imports/) lands every member's XP and name on the right member, ids past 2^53
// included; bad rows are reported by page and index and skipped; strict refuses the whole file
// and changes nothing; a page that is not the bot's is refused naming what it is.
import t from 'tap'
import { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { redisFixture } from './helpers/redis-server.js'
import { tempFiles } from './helpers/temp-files.js'
import { dataSnapshot } from './helpers/redis-snapshot.js'
import { boardOf, rawRecordsOf, recordsOf, statsOf, storedStats } from './helpers/guild-state.js'
import { type Member, pageOf, rowOf, SHAPES, toJson } from './helpers/bot-json.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import type { ImportSummary, SourceRow } from '../src/transfer/import-members.js'
import { importFile, importStream } from '../src/transfer/import-sources.js'
import { JSON_IMPORT_FORMATS, type JsonImportFormat } from '../src/transfer/import-formats.js'
import { jsonSource } from '../src/transfer/json-pages.js'
import { ImportRefusedError } from '../src/errors.js'

const { redis, raw, keys } = await redisFixture(t, 'bots')
const writer = new LeaderboardWriter(redis, keys)
const reader = new LeaderboardReader(redis, keys)
const { file } = tempFiles(t, 'lb-bots-')

let lastGuild = 8000
const newGuild = (): string => String(++lastGuild)
const fixture = (name: string): string => fileURLToPath(new URL(`fixtures/imports/${name}`, import.meta.url))
const wheres = (s: ImportSummary): string[] => s.problems.map((p) => `${p.where}: ${p.message}`)

/** Written as a bare number in each sample: JSON.parse reads it as 444444444444444400, the sample's next member. */
const BIG = '444444444444444444'
const NEAR = '444444444444444400'
const BOARD = new Map([[BIG, 212840], [NEAR, 167221], ['1100000000000000777', 167221], ['1100000000000000778', 9051], ['1100000000000000779', 0]])

const samples: Array<[JsonImportFormat, string, string, Record<string, string>]> = [
  ['amari', 'amari.json', 'an array of two pages of its API',
    { [BIG]: 'crimson_otter', [NEAR]: 'quiet.fern', '1100000000000000777': 'mossy_kite', '1100000000000000778': 'Zoë 🎉', '1100000000000000779': 'new here' }],
  ['lurkr', 'lurkr.json', "two pages of its API one after another, a private member's without a user",
    { [BIG]: 'crimson_otter', [NEAR]: 'quiet.fern', '1100000000000000777': 'mossy_kite', '1100000000000000778': 'zoe.party' }],
  ['polaris', 'polaris.json', 'an array of two pages of its API, a member who left without a name',
    { [BIG]: 'crimson_otter', [NEAR]: 'quiet.fern', '1100000000000000778': 'zoe.party', '1100000000000000779': 'new.here' }],
  ['polaris', 'polaris-users.json', 'its dashboard\'s download, users by id, with no names', {}],
  ['tatsu', 'tatsu.json', 'an array of two pages of its API, which gives no names', {}]
]

for (const [format, name, what, names] of samples) {
  t.test(`${format}, ${name} (${what}): each member's XP (not multiplied) and name, ${BIG} on its own member`, async (t) => {
    const g = newGuild()
    await writer.configureGuild(g, { multiplier: 2 })
    const s = await importFile(writer, g, fixture(name), { format })
    t.same({ imported: s.imported, skipped: s.skipped, problems: s.problems }, { imported: 5, skipped: 0, problems: [] })
    t.same(await boardOf(redis, keys.guild(g)), BOARD, 'the XP of every member, the one whose id JSON.parse would round apart from the one it would round to')
    const records = await recordsOf(redis, keys.guild(g))
    t.same(Object.fromEntries([...records].filter(([, r]) => r.username !== undefined).map(([id, r]) => [id, r.username])), names,
      'the names the file gives; none where it gives none')
    const top = await reader.member(g, BIG)
    t.same([top.rank, top.xp], [1, 212840])
    t.same(await storedStats(redis, keys.guild(g)), statsOf([...BOARD.values()]), 'the aggregates equal a full scan of the board')
  })
}

t.test('a file with no names keeps the names already recorded', async (t) => {
  const g = newGuild()
  await writer.setXp({ guildId: g, userId: '1100000000000000778', xp: 1, username: 'named before' })
  await importFile(writer, g, fixture('tatsu.json'), { format: 'tatsu' })
  t.same((await recordsOf(redis, keys.guild(g))).get('1100000000000000778'), { username: 'named before', streak: 0, lastClaim: undefined })
  t.equal((await boardOf(redis, keys.guild(g))).get('1100000000000000778'), 9051)
})

t.test('display names and avatar URLs are read and handed on with each row: the bot\'s own, or its Discord hash as a CDN URL', async (t) => {
  const rowsOf = async (format: JsonImportFormat, name: string): Promise<Map<unknown, SourceRow>> => {
    const rows = new Map<unknown, SourceRow>()
    for await (const batch of jsonSource(Readable.from([await readText(fixture(name))]), format).rows) for (const row of batch) rows.set(row.userId, row)
    return rows
  }
  const lurkr = await rowsOf('lurkr', 'lurkr.json')
  t.match(lurkr.get(BIG), { displayName: 'Crimson Otter', avatarUrl: `https://cdn.discordapp.com/avatars/${BIG}/a_0123456789abcdef0123456789abcdef.gif` })
  t.match(lurkr.get('1100000000000000777'), { displayName: 'Mossy', avatarUrl: 'https://cdn.discordapp.com/avatars/1100000000000000777/0123456789abcdef0123456789abcdef.png' })
  t.same(['displayName', 'avatarUrl'].map((f) => f in (lurkr.get(NEAR) ?? {})), [false, false], 'none given, none handed on')
  const polaris = await rowsOf('polaris', 'polaris.json')
  t.match(polaris.get(BIG), { displayName: 'otter (mod)', avatarUrl: `https://cdn.discordapp.com/avatars/${BIG}/0123456789abcdef0123456789abcdef.png` }, 'the nickname before the display name')
  t.match(polaris.get('1100000000000000778'), { displayName: 'Zoë 🎉', avatarUrl: 'https://cdn.discordapp.com/embed/avatars/1.png' })
  const amari = await rowsOf('amari', 'amari.json')
  t.same(Object.keys(amari.get(BIG) ?? {}).sort(), ['at', 'userId', 'username', 'xp'], 'Amari gives neither')
})

t.test('imports store the display names and avatar URLs a bot gives; the reads return them, null where none was given', async (t) => {
  for (const [format, name] of [['lurkr', 'lurkr.json'], ['polaris', 'polaris.json']] as const) {
    const g = newGuild()
    await importFile(writer, g, fixture(name), { format })
    const { data } = (await reader.readMembers(g, [BIG, '1100000000000000778', NEAR])).value
    const byId = new Map(data.map((m) => [m.user_id, m]))
    if (format === 'lurkr') {
      t.match(byId.get(BIG), { display_name: 'Crimson Otter', avatar_url: `https://cdn.discordapp.com/avatars/${BIG}/a_0123456789abcdef0123456789abcdef.gif` }, 'lurkr: stored')
      t.match(byId.get(NEAR), { display_name: null, avatar_url: null }, 'lurkr: none given, none stored')
    } else {
      t.match(byId.get(BIG), { display_name: 'otter (mod)', avatar_url: `https://cdn.discordapp.com/avatars/${BIG}/0123456789abcdef0123456789abcdef.png` }, 'polaris: stored')
      t.match(byId.get('1100000000000000778'), { display_name: 'Zoë 🎉', avatar_url: 'https://cdn.discordapp.com/embed/avatars/1.png' })
    }
    const page = await reader.page(g, 1, 1)
    t.equal(page.data[0]?.display_name, format === 'lurkr' ? 'Crimson Otter' : 'otter (mod)', `${format}: on the board's entries too`)
  }
  const g = newGuild()
  await importFile(writer, g, fixture('amari.json'), { format: 'amari' })
  t.match((await reader.member(g, BIG)), { display_name: null, avatar_url: null }, 'amari gives neither')
})

async function readText (path: string): Promise<string> {
  const { readFile } = await import('node:fs/promises')
  return await readFile(path, 'utf8')
}

/** Two pages: a good row, then bad rows of every kind around one more good row. */
function badPages (format: JsonImportFormat): unknown[] {
  const { xp } = SHAPES[format]
  const row = (m: Member): Record<string, unknown> => rowOf(format, m)
  const noXp = row({ id: '24', xp: 3 })
  delete noXp[xp]
  return [
    pageOf(format, [row({ id: '21', xp: 10 })]),
    pageOf(format, [
      row({ id: '012', xp: 5 }),
      row({ id: '22', xp: -1 }),
      'not a row',
      row({ id: '21', xp: 99 }),
      noXp,
      row({ id: 'NUM:123456789012345678901', xp: 1 }),
      row({ id: '23', xp: 7 }),
      row({ id: '25', xp: 1.5 })
    ], 1)
  ]
}

const NOUN: Record<JsonImportFormat, string> = { mee6: 'player', amari: 'member', lurkr: 'member', polaris: 'member', tatsu: 'ranking' }

for (const format of JSON_IMPORT_FORMATS) {
  t.test(`${format}: bad rows are reported by page and index in its list and skipped; strict refuses the file and changes nothing`, async (t) => {
    const { list } = SHAPES[format]
    const path = file(`${format}-bad.json`, toJson(badPages(format)))
    const g = newGuild()
    await writer.setXp({ guildId: g, userId: '99', xp: 5, username: 'already here' })
    const before = await dataSnapshot(raw)
    const refused = await importFile(writer, g, path, { format, strict: true }).catch((err: unknown) => err)
    t.type(refused, ImportRefusedError)
    t.equal((refused as ImportRefusedError).skipped, 7)
    t.same(await dataSnapshot(raw), before, 'strict: every key of the Redis as it was, the good rows included')

    const s = await importFile(writer, g, path, { format })
    t.same(wheres(s), [
      `[1].${list}[0]: the user id must be a decimal id of 1 to 20 digits without a leading zero (got "012")`,
      `[1].${list}[1]: xp must be a whole number from 0 to 1000000000000 (got -1)`,
      `[1].${list}[2]: not a ${NOUN[format]} object`,
      `[1].${list}[3]: a second row for user 21 (the one at [0].${list}[0] counts)`,
      `[1].${list}[4]: xp is missing`,
      `[1].${list}[5]: the user id must be a decimal id of 1 to 20 digits without a leading zero (got "123456789012345678901")`,
      `[1].${list}[7]: xp must be a whole number from 0 to 1000000000000 (got 1.5)`
    ])
    t.same(s.problems[1], { page: 1, index: 1, list, where: `[1].${list}[1]`, message: s.problems[1]?.message }, 'the position as numbers too')
    t.same(await boardOf(redis, keys.guild(g)), new Map([['99', 5], ['21', 10], ['23', 7]]), 'the good rows, the first of a repeated id; others untouched')
  })
}

t.test('pages one after another: the first page\'s rows are named as a single page\'s, the next pages\' by their index', async (t) => {
  const g = newGuild()
  const pages = [0, 1, 2].map((p) => toJson(pageOf('amari', [rowOf('amari', { id: String(31 + p), xp: p }), rowOf('amari', { id: p === 2 ? '31' : '0', xp: 1 })], p)))
  const s = await importStream(writer, g, Readable.from([pages.join('\n')]), { format: 'amari' })
  t.same(wheres(s).map((w) => w.split(':')[0]), ['data[1]', '[1].data[1]', '[2].data[1]'])
  t.same(s.problems.map((p) => 'page' in p ? p.page : 'none'), ['none', 1, 2])
  t.equal(s.problems[2]?.message, 'a second row for user 31 (the one at data[0] counts)')
  t.same(await boardOf(redis, keys.guild(g)), new Map([['31', 0], ['32', 1], ['33', 2]]))
})

t.test('Polaris users by id: a bad row is named by its key', async (t) => {
  const g = newGuild()
  const s = await importFile(writer, g, file('users.json', '{"users": {"41": {"xp": 5}, "042": {"xp": 1}, "43": 7, "44": {"xp": -2}, "45": {"lastMessage": 1}, "41": {"xp": 6}}}'), { format: 'polaris' })
  t.same(wheres(s), [
    'users["042"]: the user id must be a decimal id of 1 to 20 digits without a leading zero (got "042")',
    'users["43"]: not a member object',
    'users["44"]: xp must be a whole number from 0 to 1000000000000 (got -2)',
    'users["45"]: xp is missing',
    'users["41"]: a second row for user 41 (the one at users["41"] counts)'
  ])
  t.same(s.problems[0], { index: 1, list: 'users', key: '042', where: 'users["042"]', message: s.problems[0]?.message })
  t.same(await boardOf(redis, keys.guild(g)), new Map([['41', 5]]))
})

t.test("a file that is not the bot's is refused, naming what it is (another bot's, an error the API answered), and nothing is written", async (t) => {
  const g = newGuild()
  await writer.setXp({ guildId: g, userId: '1', xp: 5 })
  const before = await dataSnapshot(raw, `${keys.prefix}:{${g}}:*`)
  const cases: Array<[string, JsonImportFormat, string, RegExp]> = [
    ["Amari's pages read as MEE6's", 'mee6', await readText(fixture('amari.json')),
      /^\[0\] is not a MEE6 leaderboard page: it has no "players" array; its "data" is where Amari keeps its rows: is it format amari\?$/],
    ["Tatsu's page read as Lurkr's", 'lurkr', '{"guild_id": "1", "rankings": []}',
      /^not a Lurkr leaderboard: expected a page, \{"levels": \[\.\.\.\]\}, or an array of pages; its "rankings" is where Tatsu keeps its rows: is it format tatsu\?$/],
    ['an error the API answered, saved as a page', 'amari', '[{"data": []}, {"error": "Unauthorized"}]',
      /^\[1\] is not an Amari leaderboard page: it has no "data" array or "members" array; it says "Unauthorized"$/],
    ['an error object, as a later page', 'mee6', '{"players": []}\n{"error": {"message": "Unknown Guild", "code": 10004}, "status_code": 404}',
      /^\[1\] is not a MEE6 leaderboard page: it has no "players" array; it says "Unknown Guild"$/],
    ['a list that is not an array', 'tatsu', '{"rankings": {"1": 2}}', /^not a Tatsu leaderboard page: its "rankings" is not an array$/],
    ['Polaris users that are not an object', 'polaris', '{"users": [1]}', /^not a Polaris leaderboard page: its "users" is not an object$/],
    ['a page that is not an object', 'amari', '[{"data": []}, []]', /^\[1\] is not an Amari leaderboard page: it is not an object$/],
    ['more after an array of pages', 'amari', '[{"data": []}] {"data": []}', /goes on after its array of pages/],
    ['empty', 'lurkr', ' \n', /^.* is empty: expected a Lurkr leaderboard page, \{"levels": \[\.\.\.\]\}, or an array of pages$/],
    ['cut off', 'polaris', '{"leaderboard": [{"id": "1", "xp": 2}', /is not valid JSON: .*; it ends before its JSON does \(cut off\?\)$/],
    ['not JSON', 'tatsu', '{"rankings": [}', /is not valid JSON: /]
  ]
  for (const [what, format, content, message] of cases) {
    await t.rejects(importFile(writer, g, file('wrong.json', content), { format }), { name: 'ImportFileError', message }, what)
  }
  t.same(await dataSnapshot(raw, `${keys.prefix}:{${g}}:*`), before, 'nothing changed')
})

t.test('a value far longer than any valid one is read only so far: a name of 5 MB is a bad row, shown by its start', async (t) => {
  const g = newGuild()
  const long = 'x'.repeat(5_000_000)
  const s = await importStream(writer, g, Readable.from([toJson(pageOf('amari', [rowOf('amari', { id: '51', xp: 1, name: long }), rowOf('amari', { id: '52', xp: 2 })]))]), { format: 'amari' })
  t.same(wheres(s), [`data[0]: username must be 1 to 100 characters without control characters (got "${'x'.repeat(38)}…)`])
  t.same([...(await rawRecordsOf(redis, keys.guild(g))).keys()], ['52'])
})
