// `xp_curve: "custom"` wherever a level is shown: the leaderboard (all-time and period), the
// member record and its level_progress, around, bulk members, stats (average_level counted from
// the board, exact), export and import; a change of the list shows in the very next read.
import t from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import { levelForXp } from '../src/levels/curves.js'
import { averageRoundedHalfUp, LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { exportMembers } from '../src/transfer/export-members.js'
import { importMembers } from '../src/transfer/import-members.js'
import { csvSource } from '../src/transfer/import-sources.js'
import { Readable } from 'node:stream'
import { Random } from '../src/random.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const GUILD = '6400000000000000001'

/** The parts of the read bodies the test looks at. */
interface Body {
  data: Array<{ user_id: string, level: number }>
  xp_curve: string
  average_level: number
}

t.test('a custom curve shows in every read, and stats\' average_level is exact under it', async (t) => {
  const { app, writer, apiKeys } = await buildTestApp(t, server.url)
  const { key } = await apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const get = async (path: string): Promise<Body> => (await app.inject({ url: `/api/v1/servers/${GUILD}${path}`, headers: { 'x-api-key': key } })).json()
  const thresholds = [10, 30, 60, 100]
  await writer.configureGuild(GUILD, { curve: 'custom', customCurve: thresholds })
  const random = new Random('custom-curve')
  const xps = new Map<string, number>([['1', 0], ['2', 9], ['3', 10], ['4', 59], ['5', 100], ['6', 5000]])
  for (let i = 7; i <= 60; i++) xps.set(String(i), random.int(0, 150))
  for (const [userId, xp] of xps) await writer.setXp({ guildId: GUILD, userId, xp })
  const curve = { thresholds }
  const levels = new Map([...xps].map(([id, xp]) => [id, levelForXp(curve, xp)]))

  const board = await get('/leaderboard?limit=100')
  t.same(board.data.filter((e) => e.level !== levels.get(e.user_id)), [], 'every leaderboard level is the custom curve\'s')
  t.match(await get('/members/4'), { xp: 59, level: 2, level_progress: { xp: 29, required: 30 } })
  t.match(await get('/members/5'), { level: 4, level_progress: { xp: 0, required: 0 } }, 'the last level: none to complete')
  t.match(await get('/members/6'), { level: 4, level_progress: { xp: 4900, required: 0 } })
  t.same((await get('/members?ids=2,3')).data.map((m) => m.level), [0, 1])
  t.same((await get('/members/3/around?radius=1')).data.filter((e) => e.level !== levels.get(e.user_id)), [])

  const withXp = [...xps.values()].filter((xp) => xp > 0)
  const sum = withXp.reduce((s, xp) => s + levelForXp(curve, xp), 0)
  const stats = await get('/stats')
  t.equal(stats.xp_curve, 'custom')
  t.equal(stats.average_level, averageRoundedHalfUp(BigInt(sum), BigInt(withXp.length)), `average_level: ${sum} levels over ${withXp.length} members`)

  await writer.awardXp({ guildId: GUILD, userId: '2', xp: 1 })
  t.match((await get('/leaderboard?period=week')).data, [{ user_id: '2', xp: 1, level: 1 }], 'a period board\'s levels too')

  await writer.configureGuild(GUILD, { customCurve: [5, 10, 20, 40, 80, 160] })
  t.match(await get('/members/4'), { level: 4, level_progress: { xp: 19, required: 40 } }, 'a new list shows in the very next read')
  const after = await get('/stats')
  const sumAfter = withXp.map((xp, i) => xp + (i === 1 ? 1 : 0)).reduce((s, xp) => s + levelForXp({ thresholds: [5, 10, 20, 40, 80, 160] }, xp), 0)
  t.equal(after.average_level, averageRoundedHalfUp(BigInt(sumAfter), BigInt(withXp.length)), 'and in the stats')

  await writer.configureGuild(GUILD, { curve: 'mee6' })
  t.match(await get('/members/4'), { level: 0, level_progress: { xp: 59, required: 100 } }, 'back to a built-in curve')
  t.equal((await get('/stats')).xp_curve, 'mee6')
})

t.test('a read whose custom curve the settings moved past is read again, never shown under the other curve', async (t) => {
  const ctx = await buildTestApp(t, server.url)
  const reader = new LeaderboardReader(ctx.redis, ctx.keys)
  const guild = '6400000000000000002'
  await ctx.writer.configureGuild(guild, { curve: 'custom', customCurve: [10, 20] })
  const { epoch } = await ctx.writer.settings.read(guild)
  t.same(await reader.curves.named(guild, `custom:${epoch}`), { thresholds: [10, 20] })
  await ctx.writer.configureGuild(guild, { customCurve: [1, 2] })
  t.same(await reader.curves.named(guild, `custom:${epoch}`), { thresholds: [10, 20] }, 'the list of that epoch, kept: exact for a read of that epoch')
  const fresh = new LeaderboardReader(ctx.redis, ctx.keys)
  t.equal(await fresh.curves.named(guild, `custom:${epoch}`), null, 'a process that never read it: the settings are past it, so the read is made again')
  t.same(await reader.curves.named(guild, `custom:${epoch + 1}`), { thresholds: [1, 2] })
  let reads = 0
  const { curve } = await new LeaderboardReader(ctx.redis, ctx.keys).curves.read(guild, async () => {
    reads++
    // The first read names the old epoch, as a read made just before the change would.
    return reads === 1 ? `custom:${epoch}` : `custom:${epoch + 1}`
  }, (r) => r)
  t.equal(reads, 2)
  t.same(curve, { thresholds: [1, 2] })
})

t.test('export says custom; importing that file keeps the target\'s curve and sets the multiplier', async (t) => {
  const ctx = await buildTestApp(t, server.url)
  const reader = new LeaderboardReader(ctx.redis, ctx.keys)
  const from = '6400000000000000003'
  const to = '6400000000000000004'
  await ctx.writer.configureGuild(from, { curve: 'custom', customCurve: [10, 20], multiplier: 1.5 })
  await ctx.writer.setXp({ guildId: from, userId: '1', xp: 15 })
  let csv = ''
  for await (const chunk of exportMembers(reader, from, { format: 'csv' })) csv += chunk
  t.match(csv, /\n1,,15,1,0,,custom,1\.5\r?\n/, `the row: level 1 under the custom curve, xp_curve custom (${csv})`)
  const summary = await importMembers(ctx.writer, to, csvSource(Readable.from([csv])).rows)
  t.same(summary.settings, { curve: null, multiplier: 1.5 }, 'the multiplier is set, the curve kept')
  t.equal(summary.imported, 1)
  const settings = await ctx.writer.settings.read(to)
  t.same([settings.curve, settings.multiplierHundredths], ['mee6', 150])
})
