// The rules' arithmetic, apart from Redis: an award's gain (src/rules/gain.ts) against a
// brute-force computation in reduced fractions from each multiplier's decimal text, and the role
// rewards (src/rules/role-rewards.ts) by hand and against their Lua twin
// (src/redis/commands/includes/rules.lua) inside a real redis-server.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { Redis } from 'ioredis'
import { RedisServer } from './helpers/redis-server.js'
import { Random } from '../src/random.js'
import { awardGain, boostHundredths, stackedMultiplier } from '../src/rules/gain.js'
import { roleChanges, rolesAtLevel } from '../src/rules/role-rewards.js'
import { levelForXp, MAX_XP } from '../src/levels/curves.js'
import { type GuildSettings, type RoleReward, type RoleRewardsMode, STACKING_MODES } from '../src/settings/settings.js'

const random = new Random('rules')

/** A reduced fraction, the brute force's number. */
interface Q { n: bigint, d: bigint }
const gcd = (a: bigint, b: bigint): bigint => b === 0n ? (a < 0n ? -a : a) : gcd(b, a % b)
const q = (n: bigint, d: bigint): Q => { const g = gcd(n, d) || 1n; return { n: n / g, d: d / g } }
const mul = (a: Q, b: Q): Q => q(a.n * b.n, a.d * b.d)
const add = (a: Q, b: Q): Q => q(a.n * b.d + b.n * a.d, a.d * b.d)
const greater = (a: Q, b: Q): boolean => a.n * b.d > b.n * a.d
/** "2.35" as 47/20: the multiplier as a person writes it, read as an exact fraction. */
const decimal = (text: string): Q => {
  const [whole = '0', fraction = ''] = text.split('.')
  return q(BigInt(whole + fraction), 10n ** BigInt(fraction.length))
}
/** Hundredths as the text a person would write: 235 -> "2.35", 200 -> "2". */
const text = (hundredths: number): string => String(hundredths / 100)

/** The contract's gain, by brute force: floor(xp × server × stacked × boost) in reduced fractions from decimal text. */
function bruteGain (xp: number, server: number, multipliers: number[], stacking: string, boost: number): bigint {
  const ms = multipliers.map((m) => decimal(text(m)))
  let stacked: Q = q(1n, 1n)
  if (ms.some((m) => m.n === 0n)) stacked = q(0n, 1n)
  else if (ms.length > 0 && stacking === 'highest') stacked = ms.reduce((a, b) => greater(b, a) ? b : a)
  else if (ms.length > 0 && stacking === 'add') stacked = ms.reduce(add)
  else if (ms.length > 0) stacked = ms.reduce(mul)
  const total = mul(mul(mul(q(BigInt(xp), 1n), decimal(text(server))), stacked), decimal(text(boost)))
  return total.n / total.d
}

const settingsOf = (roles: Record<string, number>, channels: Record<string, number>, stacking: GuildSettings['multipliers']['stacking']): GuildSettings['multipliers'] =>
  ({ roles, channels, stacking })

t.test('gain by hand: floor of the exact product, in hundredths (100 at 0.29 is 29, never 28)', async (t) => {
  const none = stackedMultiplier(settingsOf({}, {}, 'highest'), {})
  t.equal(awardGain(100, 29, none, 100), 29)
  t.equal(awardGain(57, 100, none, 100), 57, 'no multiplier: the award')
  const m = settingsOf({ 1: 200, 2: 150, 3: 0 }, { 9: 125 }, 'multiply')
  t.equal(awardGain(20, 100, stackedMultiplier(m, { roleIds: ['1', '2'], channelId: '9' }), 100), 75, '20 × 2 × 1.5 × 1.25')
  t.equal(awardGain(20, 100, stackedMultiplier({ ...m, stacking: 'highest' }, { roleIds: ['1', '2'], channelId: '9' }), 100), 40, 'the highest: 2')
  t.equal(awardGain(20, 100, stackedMultiplier({ ...m, stacking: 'add' }, { roleIds: ['1', '2'], channelId: '9' }), 100), 95, 'the sum: 4.75')
  for (const stacking of STACKING_MODES) {
    t.equal(awardGain(20, 100, stackedMultiplier({ ...m, stacking }, { roleIds: ['1', '3'], channelId: '9' }), 100), 0, `${stacking}: a role at 0 means no XP`)
  }
  t.equal(awardGain(20, 100, stackedMultiplier(m, { roleIds: ['1', '1', '1'] }), 100), 40, 'a role given twice counts once')
  t.equal(awardGain(20, 100, stackedMultiplier(m, { roleIds: ['77'], channelId: '78' }), 100), 20, 'roles and channels without a multiplier count as 1')
  t.equal(awardGain(15, 150, none, 200), 45, 'server 1.5 and a double-XP boost')
  t.equal(boostHundredths([]), 100)
  t.equal(boostHundredths([{ hundredths: 200, startsAt: 0, endsAt: 1 }, { hundredths: 300, startsAt: 0, endsAt: 1 }, { hundredths: 150, startsAt: 0, endsAt: 1 }]), 300,
    'overlapping boosts: the highest')
  const tens = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [String(i + 1), 1000]))
  t.equal(awardGain(1_000_000, 10_000, stackedMultiplier(settingsOf(tens, {}, 'multiply'), { roleIds: Object.keys(tens) }), 1000), MAX_XP + 1,
    'a gain past MAX_XP (10^6 × 100 × 10^20 × 10) is MAX_XP + 1, exact, which the script refuses')
})

t.test('gain against the brute force: 20,000 random awards, server multipliers, roles, channels, stacking modes and boosts', async (t) => {
  const wrong: string[] = []
  const hundredths = (): number => random.pick([0, 1, 5, 29, 33, 99, 100, 101, 125, 150, 199, 233, 250, 999, 1000, random.int(0, 1000)])
  for (let i = 0; i < 20_000; i++) {
    const roles: Record<string, number> = {}
    const channels: Record<string, number> = {}
    for (let r = 1; r <= 12; r++) if (random.next() < 0.5) roles[String(r)] = hundredths()
    for (let c = 100; c <= 103; c++) if (random.next() < 0.5) channels[String(c)] = hundredths()
    const stacking = random.pick(STACKING_MODES)
    const roleIds = Array.from({ length: random.int(0, 8) }, () => String(random.int(1, 15)))
    const channelId = random.next() < 0.8 ? String(random.int(99, 104)) : undefined
    const xp = random.pick([1, 7, 15, 25, 100, 999, random.int(1, 1_000_000)])
    const server = random.pick([1, 29, 100, 150, 333, 10_000, random.int(1, 10_000)])
    const boost = random.pick([100, 150, 200, 1000, random.int(1, 1000)])
    const applicable = [...new Set(roleIds)].filter((r) => roles[r] !== undefined).map((r) => roles[r] as number)
    if (channelId !== undefined && channels[channelId] !== undefined) applicable.push(channels[channelId])
    const want = bruteGain(xp, server, applicable, stacking, boost)
    const got = awardGain(xp, server, stackedMultiplier(settingsOf(roles, channels, stacking), { roleIds, channelId }), boost)
    const expected = want > BigInt(MAX_XP) ? MAX_XP + 1 : Number(want)
    if (got !== expected) wrong.push(`${xp} × ${server} × ${stacking}(${applicable.join(',')}) × ${boost}: ${got}, want ${want}`)
  }
  t.same(wrong.slice(0, 10), [])
})

const rewards: RoleReward[] = [
  { level: 5, roleId: '500' },
  { level: 10, roleId: '1000' },
  { level: 10, roleId: '1001' },
  { level: 20, roleId: '2000' }
]

t.test('role rewards by hand: stack keeps every reward reached, replace only the highest; a jump and a drop of many levels', async (t) => {
  t.same(rolesAtLevel(rewards, 'stack', 4), [])
  t.same(rolesAtLevel(rewards, 'stack', 12), ['500', '1000', '1001'])
  t.same(rolesAtLevel(rewards, 'replace', 12), ['1000', '1001'])
  t.same(rolesAtLevel(rewards, 'replace', 25), ['2000'])
  t.same(roleChanges(rewards, 'stack', 0, 25), { add: ['500', '1000', '1001', '2000'], remove: [] }, 'stack: a jump past every threshold adds every role')
  t.same(roleChanges(rewards, 'replace', 0, 25), { add: ['2000'], remove: [] }, 'replace: only the highest')
  t.same(roleChanges(rewards, 'replace', 7, 12), { add: ['1000', '1001'], remove: ['500'] })
  t.same(roleChanges(rewards, 'stack', 25, 7), { add: [], remove: ['1000', '1001', '2000'] }, 'stack: a drop takes back the roles above the new level')
  t.same(roleChanges(rewards, 'replace', 25, 7), { add: ['500'], remove: ['2000'] }, 'replace: a drop gives back the reward of the new level')
  t.same(roleChanges(rewards, 'replace', 25, 3), { add: [], remove: ['2000'] })
  t.equal(roleChanges(rewards, 'stack', 11, 19), null, 'no threshold crossed')
  t.equal(roleChanges(rewards, 'stack', 11, 11), null)
  t.equal(roleChanges([], 'stack', 0, 50), null, 'no rewards')
})

/** A redis-server of the test's own, for the Lua twins. */
async function luaRedis (t: Test): Promise<Redis> {
  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  const raw = new Redis(server.url)
  t.teardown(() => { raw.disconnect() })
  return raw
}

/** A script of `body` after includes/rules.lua and what it includes, as a script file includes it. */
const withRules = (body: string): string => ['numbers', 'levels', 'cooldowns', 'rules']
  .map((name) => readFileSync(new URL(`../src/redis/commands/includes/${name}.lua`, import.meta.url), 'utf8'))
  .concat(body).join('\n')

t.test('the Lua twin of the role rewards, by XP against the reward levels\' XP, agrees with role-rewards.ts by levels', async (t) => {
  const raw = await luaRedis(t)
  // The settings hash as the settings store writes it; then for each pair of XP, the roles of the move (by XP, no level).
  const script = withRules(`local rules = load_rules(KEYS[1])
local out = {}
for i = 1, #ARGV, 2 do
  local changes = role_changes(rules, tonumber(ARGV[i]), tonumber(ARGV[i + 1]))
  if changes then out[#out + 1] = { table.concat(changes.add, ','), table.concat(changes.remove, ',') } else out[#out + 1] = 0 end
end
return out`)
  let guild = 0
  for (let round = 0; round < 60; round++) {
    const mode: RoleRewardsMode = round % 2 === 0 ? 'stack' : 'replace'
    const set: RoleReward[] = Array.from({ length: random.int(0, 12) }, (_, i) => ({ level: random.int(1, 30), roleId: String(1000 + i) }))
      .sort((a, b) => a.level - b.level || (a.roleId < b.roleId ? -1 : 1))
    // A custom curve of 25 levels: rewards at levels 26 to 30 are reached by no XP.
    const custom = round % 3 === 0 ? Array.from({ length: 25 }, (_, i) => 10 * (i + 1) * (i + 1)) : null
    const key = `rules-test:${guild++}`
    await raw.hset(key, { epoch: '3', role_rewards: JSON.stringify(set), role_rewards_mode: mode, ...(custom === null ? { curve: 'linear' } : { curve: 'custom', custom_curve: JSON.stringify(custom) }) })
    const pairs = Array.from({ length: 200 }, () => [random.int(0, 30_000), random.int(0, 30_000)] as const)
    const replies = await raw.eval(script, 1, key, ...pairs.flat()) as Array<[string, string] | 0>
    const curve = custom === null ? 'linear' as const : { thresholds: custom }
    const wrong: string[] = []
    pairs.forEach(([a, b], i) => {
      const changes = roleChanges(set, mode, levelForXp(curve, a), levelForXp(curve, b))
      const want = changes === null ? 0 : [changes.add.join(','), changes.remove.join(',')]
      if (JSON.stringify(replies[i]) !== JSON.stringify(want)) wrong.push(`${a} -> ${b}: ${JSON.stringify(replies[i])}, want ${JSON.stringify(want)}`)
    })
    t.same(wrong.slice(0, 5), [], `${mode}, ${set.length} rewards, ${custom === null ? 'linear' : 'custom'} curve`)
  }
})

t.test('the cooldown\'s Lua, at times the test sets: a cooldown ends at its award\'s ms plus the cooldown, to the ms, whether the call wrote it as it went or at its end', async (t) => {
  const raw = await luaRedis(t)
  // One call's cooldowns (ARGV[3] 'batch': kept for its end, as award-batch does), all started at
  // ms ARGV[1]; then how many hold a ms before their end, and how many have ended at it, in the
  // call and in the next.
  const script = withRules(`local rules = load_rules(KEYS[1])
local now, n = tonumber(ARGV[1]), tonumber(ARGV[2])
local c = cooldown_keys(KEYS[2], KEYS[3], KEYS[4], KEYS[5])
if ARGV[3] == 'batch' then begin_cooldowns(rules) end
for i = 1, n do start_cooldown(rules, c, 'm' .. i, now) end
local function count ()
  local held, ended = 0, 0
  for i = 1, n do
    if in_cooldown(rules, c, 'm' .. i, now + rules.cooldown_ms - 1) then held = held + 1 end
    if not in_cooldown(rules, c, 'm' .. i, now + rules.cooldown_ms) then ended = ended + 1 end
  end
  return { held, ended }
end
local during = count()
write_cooldowns(rules, c)
rules = load_rules(KEYS[1])
return { during, count() }`)
  await raw.hset('rules-test:cooldown', { epoch: '1', cooldown_seconds: '60' })
  for (const mode of ['single', 'batch']) {
    const key = `rules-test:cooldowns:${mode}`
    const now = 1_795_000_000_123
    t.same(await raw.eval(script, 5, 'rules-test:cooldown', key, `${key}:prev`, `${key}:old`, `${key}:legacy`, now, 250, mode), [[250, 250], [250, 250]],
      `${mode}: all 250 hold until their last ms and end at the next, in the call and after it`)
    t.same(new Set(Object.values(await raw.hgetall(key))), new Set([String(now)]), `${mode}: each in the hour's hash at its award's ms`)
    t.equal(await raw.hlen(key), 250)
  }
})
