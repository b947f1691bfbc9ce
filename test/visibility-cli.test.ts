// Who is shown, from the shell: member hide and unhide, and member visibility with a file of
// changes (standard input here), as a child process against a real redis-server, read back
// through the library's reader.
import t from 'tap'
import { redisFixture } from './helpers/redis-server.js'
import { cliRunner } from './helpers/cli.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { parseVisibilityLines } from '../src/cli/visibility-commands.js'

const PREFIX = 'viscli'
t.setTimeout(240_000)

const { server, redis, keys } = await redisFixture(t, PREFIX)
const cli = cliRunner(t, { REDIS_URL: server.url, REDIS_PREFIX: PREFIX })
const writer = new LeaderboardWriter(redis, keys)
const reader = new LeaderboardReader(redis, keys)
// Ids past 2^53: a JSON number would round them.
const BIG = ['9007199254740993', '9007199254740995', '9007199254740997']

t.test('member hide takes a member off the board with its XP kept; unhide puts it back at its rank', async (t) => {
  const guildId = '31'
  await writer.bulkSetMembers(guildId, BIG.map((userId, i) => ({ userId, xp: 300 - 100 * i, username: `u${i}` })))
  const hide = await cli(['member', 'hide', '--guild', guildId, '--user', BIG[0] as string, '--reason', 'left'])
  t.same(hide, { code: 0, stdout: `${BIG[0]}: hidden (left), 300 XP\n`, stderr: '' })
  const page = await reader.page(guildId, 1, 10)
  t.same(page.data.map((e) => [e.user_id, e.rank]), [[BIG[1], 1], [BIG[2], 2]], 'everyone moved up')
  t.equal(page.total, 2)

  const opted = await cli(['member', 'hide', '--guild', guildId, '--user', BIG[0] as string, '--reason', 'opted_out', '--json'])
  t.same(JSON.parse(opted.stdout), { user_id: BIG[0], visible: false, reasons: ['left', 'opted_out'], xp: 300 })
  const partly = await cli(['member', 'unhide', '--guild', guildId, '--user', BIG[0] as string, '--reason', 'left'])
  t.equal(partly.stdout, `${BIG[0]}: hidden (opted_out), 300 XP\n`, 'still hidden while another reason holds')
  const shown = await cli(['member', 'unhide', '--guild', guildId, '--user', BIG[0] as string])
  t.equal(shown.stdout, `${BIG[0]}: shown, 300 XP\n`)
  t.same((await reader.page(guildId, 1, 10)).data.map((e) => e.user_id), BIG, 'back at rank 1')

  const noReason = await cli(['member', 'hide', '--guild', guildId, '--user', BIG[0] as string])
  t.equal(noReason.code, 1, 'hiding needs a reason')
  t.match(noReason.stderr, /--reason/)
})

t.test('member visibility applies a file of changes, each line checked before anything is written', async (t) => {
  const guildId = '32'
  await writer.bulkSetMembers(guildId, BIG.map((userId, i) => ({ userId, xp: 300 - 100 * i })))
  const bad = await cli(['member', 'visibility', '--guild', guildId, '--file', '-'], {}, `${BIG[0]} hide left\n${BIG[1]} hide gone\n`)
  t.equal(bad.code, 1)
  t.match(bad.stderr, /^error: line 2: the reason must be one of left, opted_out\n$/)
  t.equal((await reader.page(guildId, 1, 10)).total, 3, 'nothing written')

  const input = `# leave sync\n${BIG[0]} hide left\n\n${BIG[2]} hide opted_out  # asked\n${BIG[2]} show\n`
  const run = await cli(['member', 'visibility', '--guild', guildId, '--file', '-', '--json'], {}, input)
  t.equal(run.code, 0, run.stderr)
  t.same(JSON.parse(run.stdout), {
    results: [
      { user_id: BIG[0], visible: false, reasons: ['left'], xp: 300 },
      { user_id: BIG[2], visible: true, reasons: [], xp: 100 }
    ]
  })
  const page = await reader.page(guildId, 1, 10)
  t.same(page.data.map((e) => [e.user_id, e.rank]), [[BIG[1], 1], [BIG[2], 2]])
})

t.test('the file format: ids stay text, a bad line is named', async (t) => {
  t.same(parseVisibilityLines('18446744073709551615 hide left\n 1,show,opted_out \n'), [
    { userId: '18446744073709551615', visible: false, reason: 'left' },
    { userId: '1', visible: true, reason: 'opted_out' }
  ])
  t.throws(() => parseVisibilityLines('1 hide left\n1 hidden left'), /line 2: expected/)
  t.throws(() => parseVisibilityLines('x show'), /line 1: "x" is not a user id/)
})
