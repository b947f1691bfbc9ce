// POST /admin/v1/servers/{g}/settings/preview: what a change of settings would do (members whose
// level moves, role rewards gained and lost), against a brute force over every member, for random
// curves (custom ones among them), rewards and modes; nothing is changed; and its Redis work
// follows the settings, not the number of members.
import t from 'tap'
import { Redis } from 'ioredis'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestAdmin } from './helpers/admin.js'
import { Random } from '../src/random.js'
import { type LevelCurve, levelForXp } from '../src/levels/curves.js'
import { type GuildSettings, levelCurve, type RoleReward, type SettingsInput } from '../src/settings/settings.js'
import { rolesAtLevel } from '../src/rules/role-rewards.js'
import { previewSettings } from '../src/settings/settings-preview.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })
const random = new Random('preview')

/** The preview, member by member: what the service would tell the bot for each. */
function bruteForce (xps: number[], current: GuildSettings, proposed: GuildSettings): { levelChanges: number, roles: Map<string, { gained: number, lost: number }> } {
  const a: LevelCurve = levelCurve(current)
  const b: LevelCurve = levelCurve(proposed)
  const roles = new Map<string, { gained: number, lost: number }>()
  for (const r of [...proposed.roleRewards, ...current.roleRewards]) roles.set(r.roleId, { gained: 0, lost: 0 })
  let levelChanges = 0
  for (const xp of xps) {
    const from = levelForXp(a, xp)
    const to = levelForXp(b, xp)
    if (from !== to) levelChanges++
    const had = rolesAtLevel(current.roleRewards, current.roleRewardsMode, from)
    const has = rolesAtLevel(proposed.roleRewards, proposed.roleRewardsMode, to)
    for (const role of has) if (!had.includes(role)) (roles.get(role) as { gained: number }).gained++
    for (const role of had) if (!has.includes(role)) (roles.get(role) as { lost: number }).lost++
  }
  return { levelChanges, roles }
}

function randomSettings (): SettingsInput {
  const curve = random.pick(['mee6', 'linear', 'flat', 'custom'] as const)
  const custom = Array.from({ length: random.int(1, 60) }, () => random.int(1, 400))
  const rewards: Array<{ level: number, roleId: string }> = Array.from({ length: random.int(0, 8) }, (_, i) => ({ level: random.int(1, 40), roleId: String(8000 + random.int(0, 12) * 10 + i % 10) }))
  const unique = [...new Map(rewards.map((r) => [r.roleId, r])).values()]
  return {
    curve,
    ...(curve === 'custom' ? { customCurve: custom.map((_, i) => custom.slice(0, i + 1).reduce((s, x) => s + x, 0)) } : {}),
    roleRewards: unique,
    roleRewardsMode: random.pick(['stack', 'replace'] as const)
  }
}

t.test('the preview is the brute force\'s answer, for random curves, custom curves, rewards and modes; nothing is changed', async (t) => {
  const ctx = await buildTestAdmin(t, server.url)
  const token = await ctx.token()
  const guild = '6600000000000000001'
  const xps = [0, 0, 99, 100, 101, 254, 255, ...Array.from({ length: 600 }, () => random.pick([random.int(0, 2000), random.int(0, 40_000), random.int(0, 3_000_000)]))]
  await ctx.writer.bulkSetMembers(guild, xps.map((xp, i) => ({ userId: String(i + 1), xp })))
  const raw = new Redis(server.url)
  t.teardown(() => { raw.disconnect() })
  for (let round = 0; round < 40; round++) {
    await ctx.writer.configureGuild(guild, randomSettings())
    const input = randomSettings()
    const before = await ctx.writer.settings.read(guild)
    const version = await raw.get(ctx.keys.guild(guild).version)
    const { proposed } = await ctx.writer.settings.proposed(guild, input)
    const want = bruteForce(xps, before, proposed)
    const body: Record<string, unknown> = {
      xp_curve: input.curve,
      role_rewards: input.roleRewards?.map((r) => ({ level: r.level, role_id: r.roleId })),
      role_rewards_mode: input.roleRewardsMode,
      ...(input.customCurve === undefined ? {} : { custom_curve: input.customCurve })
    }
    const res = await ctx.admin.inject({ method: 'POST', url: `/admin/v1/servers/${guild}/settings/preview`, headers: { authorization: `Bearer ${token}` }, payload: body })
    t.equal(res.statusCode, 200, `round ${round}: answered`)
    const got = res.json() as { members: number, level_changes: number, roles: Array<{ role_id: string, level: number | null, gained: number, lost: number }> }
    t.equal(got.members, xps.length)
    t.equal(got.level_changes, want.levelChanges, `round ${round}: ${before.curve} -> ${proposed.curve}: members whose level moves`)
    t.same(Object.fromEntries(got.roles.map((r) => [r.role_id, { gained: r.gained, lost: r.lost }])), Object.fromEntries(want.roles), `round ${round}: roles gained and lost`)
    t.same(got.roles.map((r) => r.level), got.roles.map((r) => proposed.roleRewards.find((x: RoleReward) => x.roleId === r.role_id)?.level ?? null), 'each role\'s new level, null when no longer given')
    t.same(await ctx.writer.settings.read(guild), before, 'the settings unchanged')
    t.equal(await raw.get(ctx.keys.guild(guild).version), version, 'the data version unchanged')
  }
})

t.test('a custom curve\'s preview by hand: who changes level, who gains and loses which role', async (t) => {
  const ctx = await buildTestAdmin(t, server.url)
  const guild = '6600000000000000002'
  const [R1, R3] = ['9100000000000000001', '9100000000000000003']
  // mee6 thresholds: 100, 255, 475. Members at 0, 50, 150, 300, 500 XP: levels 0, 0, 1, 2, 3.
  await ctx.writer.bulkSetMembers(guild, [0, 50, 150, 300, 500].map((xp, i) => ({ userId: String(i + 1), xp })))
  await ctx.writer.configureGuild(guild, { roleRewards: [{ level: 1, roleId: R1 }, { level: 3, roleId: R3 }], roleRewardsMode: 'stack' })
  // Custom: level 1 at 50, 2 at 200, 3 at 400: levels 0, 1, 1, 2, 3. R1 (stack, level 1) goes to the member at 50 XP.
  const preview = await previewSettings(ctx.writer.settings, guild, { curve: 'custom', customCurve: [50, 200, 400] })
  t.same(preview, {
    members: 5,
    levelChanges: 1, // the member at 50 XP, from level 0 to 1
    roles: [{ roleId: R1, level: 1, gained: 1, lost: 0 }, { roleId: R3, level: 3, gained: 0, lost: 0 }]
  })
})

t.test('the preview\'s Redis work follows the settings, not the members: as many commands for 5,000 members as for 50', async (t) => {
  const ctx = await buildTestAdmin(t, server.url)
  const raw = new Redis(server.url)
  t.teardown(() => { raw.disconnect() })
  const zcounts = async (): Promise<number> => Number(/cmdstat_zcount:calls=(\d+)/.exec(await raw.info('commandstats'))?.[1] ?? 0)
  const costs: number[] = []
  for (const [guild, members] of [['6600000000000000003', 50], ['6600000000000000004', 5000]] as const) {
    // The same highest XP on both boards, members spread below it.
    await ctx.writer.bulkSetMembers(guild, Array.from({ length: members }, (_, i) => ({ userId: String(i + 1), xp: i === 0 ? 100_000 : random.int(0, 100_000) })))
    await ctx.writer.configureGuild(guild, { roleRewards: [{ level: 5, roleId: '9200000000000000005' }, { level: 10, roleId: '9200000000000000010' }] })
    const before = await zcounts()
    await previewSettings(ctx.writer.settings, guild, { curve: 'linear', roleRewardsMode: 'replace' })
    costs.push(await zcounts() - before)
  }
  t.ok((costs[0] ?? 0) > 0, `${costs[0]} ZCOUNTs`)
  t.equal(costs[1], costs[0], `${costs[1]} ZCOUNTs for 5,000 members, ${costs[0]} for 50`)
})
