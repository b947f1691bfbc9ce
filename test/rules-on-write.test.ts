// Rules applied on write (CONTRACT part 4), each with its reason, over the write API and the
// library against a real Redis: the cooldown across instances, the daily cap in the server's time
// zone (Redis's clock deciding the day's edge), each stacking mode of role and channel
// multipliers, a boost's start and end, role rewards stacked and replaced on a multi-level jump
// and on a set that lowers XP, XP ranges drawn once, and a settings change taken at once by a
// writer whose cached settings are behind. Waits are derived from Redis's clock, never a guess.
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestAdmin, type TestAdmin } from './helpers/admin.js'
import { createRedis, redisNow } from '../src/redis/client.js'
import { boardMember } from '../src/redis/keys.js'
import { RedisClock } from '../src/redis/clock.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { COOLDOWN_HOUR_MS } from '../src/writer/calendar-writes.js'
import { zonedDay } from '../src/calendar/zoned.js'
import { MAX_XP } from '../src/levels/curves.js'

t.jobs = 4

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

let guilds = 0
const newGuild = (): string => String(6500000000000000000n + BigInt(++guilds))
const [ROLE_A, ROLE_B, ROLE_ZERO, CHANNEL, NO_XP_CHANNEL] = ['7100000000000000001', '7100000000000000002', '7100000000000000003', '7200000000000000001', '7200000000000000002']

interface Result { user_id: string, xp: number, gained: number, level: number, leveled_up: boolean, applied: boolean, reason?: string, roles?: { add: string[], remove: string[] } }

type Ctx = TestAdmin & { bearer: string }

async function setup (t: Test): Promise<Ctx> {
  const ctx = await buildTestAdmin(t, server.url)
  return { ...ctx, bearer: await ctx.token() }
}

async function call (ctx: Ctx, method: 'POST' | 'PUT' | 'GET', url: string, payload?: unknown, headers: Record<string, string> = {}): Promise<{ status: number, body: Record<string, unknown> }> {
  const res = await ctx.admin.inject({ method, url: `/admin/v1${url}`, headers: { authorization: `Bearer ${ctx.bearer}`, ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) })
  return { status: res.statusCode, body: res.body === '' ? {} : res.json() }
}

async function awards (ctx: Ctx, guild: string, items: unknown[], headers: Record<string, string> = {}): Promise<Result[]> {
  const res = await call(ctx, 'POST', `/servers/${guild}/awards`, { awards: items }, headers)
  if (res.status !== 200) throw new Error(`awards: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.results as Result[]
}

/** Waits until Redis's clock reads `ms` or later. */
async function untilRedisTime (ctx: TestAdmin, ms: number): Promise<void> {
  for (;;) {
    const now = await redisNow(ctx.redis)
    if (now >= ms) return
    await sleep(Math.min(200, ms - now))
  }
}

/** The Unix ms of the member's last award that added XP, as the cooldowns' hashes keep it (the current hour's or the one before), or null. */
async function lastAward (ctx: TestAdmin, guild: string, userId: string): Promise<number | null> {
  const hour = Math.floor(await redisNow(ctx.redis) / COOLDOWN_HOUR_MS)
  for (const h of [hour, hour - 1]) {
    const ms = await ctx.redis.hget(ctx.keys.cooldownHour(guild, h), boardMember(userId))
    if (ms !== null) return Number(ms)
  }
  return null
}

/** A writer on its own connection (another instance), whose estimate of Redis's clock is off by `skewMs`. */
function otherInstance (t: Test, ctx: TestAdmin, skewMs = 0): LeaderboardWriter {
  const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 10_000 })
  t.teardown(() => { redis.disconnect() })
  const clock = new RedisClock()
  clock.observe(Date.now() + skewMs)
  return new LeaderboardWriter(redis, ctx.keys, { clock })
}

t.test('cooldown: an award within cooldown_seconds of the member\'s last one that added XP is not applied (reason cooldown), across instances, by Redis\'s clock', async (t) => {
  const ctx = await setup(t)
  const guild = newGuild()
  // A minute: long enough that no loaded machine passes it between two calls that expect it to hold.
  await ctx.writer.configureGuild(guild, { cooldownSeconds: 60, multipliers: { channels: { [NO_XP_CHANNEL]: 0 } } })
  const [first, second] = await awards(ctx, guild, [{ user_id: '5', xp: 20 }, { user_id: '5', xp: 20 }])
  t.match(first, { applied: true, gained: 20, xp: 20 })
  t.same(second, { user_id: '5', xp: 20, gained: 0, level: 0, leveled_up: false, applied: false, reason: 'cooldown' }, 'the second of a batch: within the cooldown')
  const last = await lastAward(ctx, guild, '5')
  t.ok(last !== null, 'its cooldown is kept')

  // Another instance, whose own clock is an hour ahead: Redis's clock decides.
  const ahead = otherInstance(t, ctx, 3600_000)
  t.match(await ahead.awardXp({ guildId: guild, userId: '5', xp: 20 }), { applied: false, reason: 'cooldown', xp: 20, gained: 0 }, 'another instance sees the cooldown')
  // A cooldown of a second, measured from the same last award: passed once Redis's clock says so.
  await ctx.writer.configureGuild(guild, { cooldownSeconds: 1 })
  await untilRedisTime(ctx, (last ?? 0) + 1000)
  t.match(await ahead.awardXp({ guildId: guild, userId: '5', xp: 20 }), { applied: true, gained: 20, xp: 40 }, 'once Redis\'s clock is past it, applied')
  await ctx.writer.configureGuild(guild, { cooldownSeconds: 60 })
  t.match((await awards(ctx, guild, [{ user_id: '5', xp: 20 }]))[0], { applied: false, reason: 'cooldown' }, 'and that award started the next cooldown, seen by the write API')

  t.match((await awards(ctx, guild, [{ user_id: '6', xp: 20, channel_id: NO_XP_CHANNEL }]))[0], { applied: true, gained: 0, xp: 0 }, 'an award in a channel at 0 adds nothing')
  t.match((await awards(ctx, guild, [{ user_id: '6', xp: 20 }]))[0], { applied: true, gained: 20 }, 'and starts no cooldown')

  // The hour's hash lives through the next hour (test/cooldown-hours.test.ts: then it is deleted).
  await awards(ctx, guild, [{ user_id: '7', xp: 1 }])
  const now = await redisNow(ctx.redis)
  const hour = Math.floor(now / COOLDOWN_HOUR_MS)
  const ttl = await ctx.redis.pttl(ctx.keys.cooldownHour(guild, hour))
  t.ok(ttl > (hour + 2) * COOLDOWN_HOUR_MS - now && ttl <= (hour + 3) * COOLDOWN_HOUR_MS - now, `the hour's hash expires at the end of the hour after next (${ttl} ms)`)

  await ctx.writer.configureGuild(guild, { cooldownSeconds: 0 })
  const [a, b] = await awards(ctx, guild, [{ user_id: '8', xp: 1 }, { user_id: '8', xp: 1 }])
  t.match([a, b], [{ applied: true }, { applied: true, xp: 2 }], 'cooldown 0: every award applies')
})

t.test('cooldown: a member removed (DELETE) and added again within the cooldown is not refused; the others\' cooldowns stay', async (t) => {
  const ctx = await setup(t)
  const guild = newGuild()
  await ctx.writer.configureGuild(guild, { cooldownSeconds: 3600 })
  t.match(await awards(ctx, guild, [{ user_id: '5', xp: 20 }, { user_id: '6', xp: 20 }]), [{ applied: true }, { applied: true }])
  t.match((await awards(ctx, guild, [{ user_id: '5', xp: 20 }]))[0], { applied: false, reason: 'cooldown' }, 'within the cooldown before the removal')
  t.equal((await ctx.admin.inject({ method: 'DELETE', url: `/admin/v1/servers/${guild}/members/5`, headers: { authorization: `Bearer ${ctx.bearer}` } })).statusCode, 204)
  t.equal(await lastAward(ctx, guild, '5'), null, 'the removal drops the member\'s cooldown')
  t.same((await awards(ctx, guild, [{ user_id: '5', xp: 20 }]))[0], { user_id: '5', xp: 20, gained: 20, level: 0, leveled_up: false, applied: true },
    'added again: applied, from 0 XP, and its cooldown starts over')
  t.match((await awards(ctx, guild, [{ user_id: '5', xp: 20 }, { user_id: '6', xp: 20 }])), [{ applied: false, reason: 'cooldown' }, { applied: false, reason: 'cooldown' }],
    'the new cooldown holds, and the other member\'s was left alone')
  // The library's removeMember is the same script.
  t.equal(await ctx.writer.removeMember({ guildId: guild, userId: '6' }), true)
  t.match(await ctx.writer.awardXp({ guildId: guild, userId: '6', xp: 7 }), { applied: true, gained: 7, xp: 7 }, 'through the library too')
  // The day's gains are the day's (its history counts them): a removal does not reset the daily cap.
  await ctx.writer.configureGuild(guild, { cooldownSeconds: 0, dailyXpCap: 30 })
  t.match(await ctx.writer.awardXp({ guildId: guild, userId: '6', xp: 10 }), { applied: true, gained: 3, xp: 10, reason: 'daily_cap' },
    'the 20 XP gained before the removal and the 7 after count toward the cap')
})

t.test('daily cap: the part under the cap is applied (reason daily_cap), then nothing; counted per day of the server\'s time zone', async (t) => {
  const ctx = await setup(t)
  const guild = newGuild()
  const timeZone = 'Asia/Kolkata' // UTC+5:30: its days are not UTC days
  await ctx.writer.configureGuild(guild, { dailyXpCap: 100, season: { timezone: timeZone } })
  t.match((await awards(ctx, guild, [{ user_id: '5', xp: 60 }]))[0], { applied: true, gained: 60, xp: 60 })
  t.same((await awards(ctx, guild, [{ user_id: '5', xp: 60 }]))[0], { user_id: '5', xp: 100, gained: 40, level: 1, leveled_up: true, applied: true, reason: 'daily_cap' },
    'the part under the cap')
  t.same((await awards(ctx, guild, [{ user_id: '5', xp: 10 }]))[0], { user_id: '5', xp: 100, gained: 0, level: 1, leveled_up: false, applied: false, reason: 'daily_cap' },
    'then nothing, with the reason')
  await ctx.writer.setXp({ guildId: guild, userId: '5', xp: 500 })
  t.match((await awards(ctx, guild, [{ user_id: '5', xp: 10 }]))[0], { applied: false, reason: 'daily_cap', xp: 500 }, 'setting XP outright is no gain: the cap still holds')
  const day = zonedDay(await redisNow(ctx.redis), timeZone)
  t.equal(Number(await ctx.redis.hget(ctx.keys.dayGains(guild, day.label), boardMember('5'))), 100, `the day's gains of ${day.label} in ${timeZone} count the gains`)
  const ttl = await ctx.redis.pttl(ctx.keys.dayGains(guild, day.label))
  t.ok(ttl > day.end - Date.now(), 'and is kept past the day\'s end')
  t.match((await awards(ctx, guild, [{ user_id: '6', xp: 150 }]))[0], { applied: true, gained: 100, reason: 'daily_cap' }, 'one award over the cap: the part under it')
  await ctx.writer.setXp({ guildId: guild, userId: '7', xp: MAX_XP - 5 })
  await awards(ctx, guild, [{ user_id: '7', xp: 3 }])
  t.match((await awards(ctx, guild, [{ user_id: '7', xp: 10 }]))[0], { applied: false, reason: 'xp_limit' }, 'an award over the XP limit')
  t.equal(Number(await ctx.redis.hget(ctx.keys.dayGains(guild, day.label), boardMember('7'))), 3, 'is not counted against the cap')
})

t.test('daily cap within one batch: a member awarded again in the same call counts its earlier awards of the call; the day\'s keys get their expiry', async (t) => {
  const ctx = await setup(t)
  const guild = newGuild()
  await ctx.writer.configureGuild(guild, { dailyXpCap: 100 })
  const results = await awards(ctx, guild, [{ user_id: '5', xp: 60 }, { user_id: '6', xp: 30 }, { user_id: '5', xp: 60 }, { user_id: '5', xp: 10 }, { user_id: '6', xp: 30 }])
  t.match(results, [
    { user_id: '5', applied: true, gained: 60, xp: 60 },
    { user_id: '6', applied: true, gained: 30, xp: 30 },
    { user_id: '5', applied: true, gained: 40, xp: 100, reason: 'daily_cap' },
    { user_id: '5', applied: false, gained: 0, xp: 100, reason: 'daily_cap' },
    { user_id: '6', applied: true, gained: 30, xp: 60 }
  ], 'each award sees the gains before it in the call')
  const day = zonedDay(await redisNow(ctx.redis), 'UTC')
  const gains = ctx.keys.dayGains(guild, day.label)
  t.same([await ctx.redis.hget(gains, boardMember('5')), await ctx.redis.hget(gains, boardMember('6'))], ['100', '60'], 'the day\'s gains count what was applied')
  t.ok(await ctx.redis.pttl(gains) > day.end - Date.now(), 'the day\'s gains expire past the day\'s end')
  t.ok(await ctx.redis.pttl(ctx.keys.dayStart(guild, day.label)) > day.end - Date.now(), 'and so does its day-start hash')
})

t.test('daily cap at the day\'s edge: Redis\'s clock decides the server\'s day, whatever a writer\'s own clock says', async (t) => {
  const ctx = await setup(t)
  const guild = newGuild()
  const timeZone = 'America/St_Johns' // UTC-3:30 (-2:30 in summer)
  await ctx.writer.configureGuild(guild, { dailyXpCap: 50, season: { timezone: timeZone } })
  const now = await redisNow(ctx.redis)
  const today = zonedDay(now, timeZone)
  const yesterday = zonedDay(today.start - 1, timeZone)
  const tomorrow = zonedDay(today.end, timeZone)
  // Yesterday's cap reached: a writer that believes it is still yesterday is told the time and counts today.
  await ctx.redis.hset(ctx.keys.dayGains(guild, yesterday.label), boardMember('1'), 50)
  const behind = otherInstance(t, ctx, today.start - 60_000 - now)
  t.match(await behind.awardXp({ guildId: guild, userId: '1', xp: 30 }), { applied: true, gained: 30 }, 'a writer a minute before the day\'s start by its clock: today\'s cap applies')
  t.equal(Number(await ctx.redis.hget(ctx.keys.dayGains(guild, today.label), boardMember('1'))), 30, `counted in ${today.label}`)
  t.equal(Number(await ctx.redis.hget(ctx.keys.dayGains(guild, yesterday.label), boardMember('1'))), 50, `${yesterday.label} unchanged`)
  // Today's cap reached: a writer that believes it is already tomorrow is refused by today's.
  await ctx.redis.hset(ctx.keys.dayGains(guild, today.label), boardMember('2'), 50)
  const ahead = otherInstance(t, ctx, tomorrow.start + 60_000 - now)
  t.match(await ahead.awardXp({ guildId: guild, userId: '2', xp: 30 }), { applied: false, reason: 'daily_cap' }, 'a writer a minute into tomorrow by its clock: still today\'s cap')
  t.equal(await ctx.redis.exists(ctx.keys.dayGains(guild, tomorrow.label), ctx.keys.day(guild, tomorrow.label)), 0, 'nothing counted in tomorrow')
})

t.test('multipliers by role and channel: highest, multiply and add; a role or channel at 0 means no XP; exact in hundredths', async (t) => {
  const ctx = await setup(t)
  const guild = newGuild()
  await ctx.writer.configureGuild(guild, {
    multiplier: 1.5,
    multipliers: { roles: { [ROLE_A]: 2, [ROLE_B]: 1.5, [ROLE_ZERO]: 0 }, channels: { [CHANNEL]: 1.25 }, stacking: 'highest' }
  })
  const item = { user_id: '5', xp: 20, role_ids: [ROLE_A, ROLE_B, '7100000000000000099'], channel_id: CHANNEL }
  const gained = async (): Promise<number> => (await awards(ctx, guild, [item]))[0]?.gained ?? NaN
  t.equal(await gained(), 60, 'highest: 20 × 1.5 × 2')
  await ctx.writer.configureGuild(guild, { multipliers: { stacking: 'multiply' } })
  t.equal(await gained(), 112, 'multiply: floor(20 × 1.5 × 2 × 1.5 × 1.25) = floor(112.5)')
  await ctx.writer.configureGuild(guild, { multipliers: { stacking: 'add' } })
  t.equal(await gained(), 142, 'add: floor(20 × 1.5 × (2 + 1.5 + 1.25)) = floor(142.5)')
  for (const stacking of ['highest', 'multiply', 'add'] as const) {
    await ctx.writer.configureGuild(guild, { multipliers: { stacking } })
    t.match((await awards(ctx, guild, [{ ...item, role_ids: [ROLE_A, ROLE_ZERO] }]))[0], { gained: 0, applied: true }, `${stacking}: a role at 0 means no XP`)
  }
  t.equal((await awards(ctx, guild, [{ user_id: '6', xp: 20 }]))[0]?.gained, 30, 'no role or channel given: the server\'s multiplier alone')
})

t.test('a writer whose cached settings are behind is refused by the script (settings epoch) and applies the new ones, once', async (t) => {
  const ctx = await setup(t)
  const guild = newGuild()
  const other = otherInstance(t, ctx)
  t.match(await other.awardXp({ guildId: guild, userId: '5', xp: 10 }), { gained: 10 }, 'the other instance caches the settings')
  await ctx.writer.configureGuild(guild, { multiplier: 3, multipliers: { roles: { [ROLE_A]: 2 } } })
  t.match(await other.awardXp({ guildId: guild, userId: '5', xp: 10, roleIds: [ROLE_A] }), { gained: 60, xp: 70 }, 'its next award is computed from the new settings')
  t.equal(Number(await ctx.redis.zscore(ctx.keys.guild(guild).board, boardMember('5'))), 70, 'applied once')
})

t.test('a boost applies from its start to its end, by Redis\'s clock', async (t) => {
  const ctx = await setup(t)
  const guild = newGuild()
  const now = await redisNow(ctx.redis)
  // Starts in ten minutes and ends in twenty at first, so that no loaded machine reaches either
  // before the checks around them; each is then moved to a second on, and waited for.
  const endsLater = new Date(now + 1_200_000)
  await ctx.writer.configureGuild(guild, { boosts: [{ multiplier: 2, startsAt: new Date(now + 600_000), endsAt: endsLater }] })
  // A writer whose own clock is 10 s behind: it would think the boost not started yet.
  const behind = otherInstance(t, ctx, -10_000)
  t.match((await awards(ctx, guild, [{ user_id: '5', xp: 10 }]))[0], { gained: 10 }, 'before its start: ×1')
  const startsAt = await redisNow(ctx.redis) + 1000
  await ctx.writer.configureGuild(guild, { boosts: [{ multiplier: 2, startsAt: new Date(startsAt), endsAt: endsLater }] })
  await untilRedisTime(ctx, startsAt)
  t.match((await awards(ctx, guild, [{ user_id: '5', xp: 10 }]))[0], { gained: 20 }, 'from its start: ×2')
  t.match(await behind.awardXp({ guildId: guild, userId: '6', xp: 10 }), { gained: 20 }, 'also from a writer whose clock is behind')
  const endsAt = await redisNow(ctx.redis) + 1000
  await ctx.writer.configureGuild(guild, { boosts: [{ multiplier: 2, startsAt: new Date(startsAt), endsAt: new Date(endsAt) }] })
  await untilRedisTime(ctx, endsAt)
  t.match((await awards(ctx, guild, [{ user_id: '5', xp: 10 }]))[0], { gained: 10 }, 'from its end: ×1 again')
  t.match(await behind.awardXp({ guildId: guild, userId: '6', xp: 10 }), { gained: 10 }, 'also for the writer whose clock is behind')
})

t.test('role rewards, stack: a multi-level jump adds every role reached; a set that lowers XP takes back those above', async (t) => {
  const ctx = await setup(t)
  const guild = newGuild()
  const [R1, R2, R5] = ['7300000000000000001', '7300000000000000002', '7300000000000000005']
  await ctx.writer.configureGuild(guild, { roleRewards: [{ level: 5, roleId: R5 }, { level: 1, roleId: R1 }, { level: 2, roleId: R2 }], roleRewardsMode: 'stack' })
  // mee6: level 1 at 100 XP, 2 at 255, 5 at 1,150.
  t.same((await awards(ctx, guild, [{ user_id: '5', xp: 300 }]))[0], { user_id: '5', xp: 300, gained: 300, level: 2, leveled_up: true, applied: true, roles: { add: [R1, R2], remove: [] } })
  t.notOk('roles' in ((await awards(ctx, guild, [{ user_id: '5', xp: 10 }]))[0] ?? {}), 'no threshold crossed: no roles')
  t.match((await awards(ctx, guild, [{ user_id: '5', xp: 1000 }]))[0], { level: 5, roles: { add: [R5], remove: [] } })
  const lowered = await call(ctx, 'PUT', `/servers/${guild}/members/5`, { xp: 120 })
  t.equal(lowered.status, 200)
  t.match(lowered.body, { user_id: '5', xp: 120, level: 1, roles: { add: [], remove: [R2, R5] } }, 'the record, with the roles to take back')
  t.notOk('roles' in (await call(ctx, 'PUT', `/servers/${guild}/members/5`, { xp: 130 })).body, 'a set within the level: no roles')
  t.match(await ctx.writer.setMemberXp({ guildId: guild, userId: '5', xp: 0 }), { previousXp: 130, level: 0, roles: { add: [], remove: [R1] } }, 'the library says the same')
})

t.test('role rewards, replace: only the highest reached; a jump and a set that lowers XP swap it', async (t) => {
  const ctx = await setup(t)
  const guild = newGuild()
  const [R1, R2, R5] = ['7300000000000000001', '7300000000000000002', '7300000000000000005']
  await ctx.writer.configureGuild(guild, { roleRewards: [{ level: 1, roleId: R1 }, { level: 2, roleId: R2 }, { level: 5, roleId: R5 }], roleRewardsMode: 'replace' })
  t.match((await awards(ctx, guild, [{ user_id: '5', xp: 300 }]))[0], { level: 2, roles: { add: [R2], remove: [] } }, 'a jump from 0 to 2: the reward of 2 only')
  t.match((await awards(ctx, guild, [{ user_id: '5', xp: 1000 }]))[0], { level: 5, roles: { add: [R5], remove: [R2] } })
  t.match((await call(ctx, 'PUT', `/servers/${guild}/members/5`, { xp: 120 })).body, { level: 1, roles: { add: [R1], remove: [R5] } }, 'a set from 5 down to 1')
  t.match((await call(ctx, 'PUT', `/servers/${guild}/members/5`, { xp: 50 })).body, { level: 0, roles: { add: [], remove: [R1] } })
  // Under a custom curve too.
  await ctx.writer.configureGuild(guild, { curve: 'custom', customCurve: [10, 20, 30, 40, 50] })
  t.match((await awards(ctx, guild, [{ user_id: '6', xp: 45 }]))[0], { level: 4, roles: { add: [R2], remove: [] } }, 'custom curve: 45 XP is level 4')
})

t.test('an XP range is drawn by the service between its bounds; a resend with the same op_id or Idempotency-Key gives the first draw', async (t) => {
  const ctx = await setup(t)
  const guild = newGuild()
  const results = await awards(ctx, guild, Array.from({ length: 50 }, (_, i) => ({ user_id: String(i + 1), xp: { min: 15, max: 25 } })))
  t.same(results.filter((r) => r.gained < 15 || r.gained > 25 || !r.applied), [], 'every draw within 15 to 25')
  t.ok(new Set(results.map((r) => r.gained)).size > 3, `draws vary (${[...new Set(results.map((r) => r.gained))].join(', ')})`)
  const wide = { user_id: '99', xp: { min: 1, max: 1_000_000 }, op_id: 'msg-1' }
  const [first] = await awards(ctx, guild, [wide])
  const [again] = await awards(ctx, guild, [wide])
  t.equal(again?.gained, first?.gained, 'the same op_id: the first draw')
  t.equal(Number(await ctx.redis.zscore(ctx.keys.guild(guild).board, boardMember('99'))), first?.gained, 'applied once')
  const keyed = await awards(ctx, guild, [{ user_id: '98', xp: { min: 1, max: 1_000_000 } }], { 'idempotency-key': 'draw-1' })
  t.same(await awards(ctx, guild, [{ user_id: '98', xp: { min: 1, max: 1_000_000 } }], { 'idempotency-key': 'draw-1' }), keyed, 'the same Idempotency-Key: the first answer')
  t.same((await awards(ctx, guild, [{ user_id: '97', xp: { min: 7, max: 7 } }]))[0]?.gained, 7, 'a range of one value')
  const bad = await call(ctx, 'POST', `/servers/${guild}/awards`, { awards: [{ user_id: '1', xp: 1 }, { user_id: '2', xp: { min: 25, max: 15 } }] })
  t.match(bad, { status: 400, body: { code: 'invalid_parameter', message: /awards\[1\]: xp\.max must be an integer from 25/ } }, 'max below min: 400 naming the item')
})

t.test('GET /api/v1/servers/{g}/role-rewards lists the rewards by level with the XP each takes; its ETag holds until the settings change', async (t) => {
  const ctx = await setup(t)
  const guild = newGuild()
  const { key } = await ctx.apiKeys.create({ guildId: guild, plan: 'professional' })
  const get = async (etag?: string): Promise<{ status: number, etag: string, body: unknown }> => {
    const res = await ctx.app.inject({ url: `/api/v1/servers/${guild}/role-rewards`, headers: { 'x-api-key': key, ...(etag === undefined ? {} : { 'if-none-match': etag }) } })
    return { status: res.statusCode, etag: String(res.headers.etag), body: res.body === '' ? null : res.json() }
  }
  t.same((await get()).body, { mode: 'stack', data: [] }, 'none set')
  const [R1, R2, R9] = ['7300000000000000001', '7300000000000000002', '7300000000000000009']
  await ctx.writer.configureGuild(guild, { roleRewards: [{ level: 9, roleId: R9 }, { level: 2, roleId: R2 }, { level: 1, roleId: R1 }], roleRewardsMode: 'replace' })
  const first = await get()
  t.same(first.body, { mode: 'replace', data: [{ level: 1, role_id: R1, xp: 100 }, { level: 2, role_id: R2, xp: 255 }, { level: 9, role_id: R9, xp: 3720 }] }, 'by level, with the mee6 XP of each')
  t.equal((await get(first.etag)).status, 304, 'unchanged: 304')
  await ctx.writer.configureGuild(guild, { curve: 'custom', customCurve: [10, 20, 30] })
  const custom = await get(first.etag)
  t.equal(custom.status, 200, 'a settings change moves the ETag')
  t.same(custom.body, { mode: 'replace', data: [{ level: 1, role_id: R1, xp: 10 }, { level: 2, role_id: R2, xp: 20 }, { level: 9, role_id: R9, xp: null }] },
    'under a custom curve: a level past its last is reached by no XP')
  const other = await ctx.apiKeys.create({ guildId: newGuild(), plan: 'professional' })
  t.equal((await ctx.app.inject({ url: `/api/v1/servers/${guild}/role-rewards`, headers: { 'x-api-key': other.key } })).statusCode, 403, 'another server\'s key: 403')
})

t.test('what discord.py sends: role and channel ids as Python ints (JSON numbers) are 400 saying to send strings, and nothing is applied', async (t) => {
  const ctx = await setup(t)
  const guild = newGuild()
  // As json.dumps writes a discord.py bot's ints: every digit, past 2^53.
  const send = async (item: string): Promise<{ status: number, body: Record<string, unknown> }> => {
    const res = await ctx.admin.inject({
      method: 'POST',
      url: `/admin/v1/servers/${guild}/awards`,
      headers: { authorization: `Bearer ${ctx.bearer}`, 'content-type': 'application/json' },
      payload: `{"awards": [{"user_id": "5", "xp": 10}, ${item}]}`
    })
    return { status: res.statusCode, body: res.json() }
  }
  t.match(await send(`{"user_id": "6", "xp": 10, "role_ids": ["${ROLE_A}", ${ROLE_B}]}`),
    { status: 400, body: { code: 'invalid_parameter', message: /^awards\/1\/role_ids\/1 must be a JSON string, not a number: send ids as strings/ } })
  t.match(await send(`{"user_id": "6", "xp": 10, "channel_id": ${CHANNEL}}`),
    { status: 400, body: { message: /^awards\/1\/channel_id must be a JSON string, not a number/ } })
  t.match(await send('{"user_id": "6", "xp": {"min": 0, "max": 5}}'), { status: 400, body: { message: 'awards/1/xp/min must be an integer from 1 to 1000000' } })
  t.match(await send('{"user_id": "6", "xp": {"min": 5}}'), { status: 400, body: { message: /^awards\/1\/xp/ } })
  t.match(await send('{"user_id": "6", "xp": "15-25"}'), { status: 400, body: { message: 'awards/1/xp must be an integer from 1 to 1000000 or an object {min, max} (got a string)' } })
  t.equal(await ctx.redis.zcard(ctx.keys.guild(guild).board), 0, 'nothing applied, the good item neither')
  t.match((await awards(ctx, guild, [{ user_id: '6', xp: 10, role_ids: [ROLE_A], channel_id: CHANNEL }]))[0], { applied: true }, 'the same as strings: applied')
})
