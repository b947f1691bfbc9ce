// The events the write scripts append (includes/events.lua), read back from the server's event
// stream as the delivery worker and the stats streams read them: which write emits what, that a
// refused write emits nothing, and that a server nothing listens to gets no stream at all.
import t from 'tap'
import { redisFixture } from './helpers/redis-server.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { WebhookStore } from '../src/webhooks/webhook-store.js'
import { queuedEvent, type ServerEvent } from '../src/webhooks/events.js'
import { boardMember } from '../src/redis/keys.js'
import { withIncludes } from '../src/redis/scripts.js'
import { ServerEventFeed } from '../src/live/server-events.js'
import { RedisClock } from '../src/redis/clock.js'
import { redisNow } from '../src/redis/client.js'
import { MAX_XP } from '../src/levels/curves.js'

const { redis, keys } = await redisFixture(t, 'ev')
const writer = new LeaderboardWriter(redis, keys)
const store = new WebhookStore(redis, keys, { allowPrivate: true })
const URL = 'http://127.0.0.1:9/hook'
let guilds = 0
const newGuild = (): string => String(7200000000000000000n + BigInt(++guilds))

/** The server's events, oldest first. */
async function events (guildId: string): Promise<ServerEvent[]> {
  const entries = await redis.xrange(keys.guild(guildId).events, '-', '+')
  return entries.map(([id, fields]) => queuedEvent(guildId, id, fields)?.event).filter((e): e is ServerEvent => e !== undefined)
}

t.test('a server no webhook and no live stream listens to gets no events, and no key for them', async (t) => {
  const g = newGuild()
  await writer.awardXp({ guildId: g, userId: '1', xp: 5000 })
  await writer.setXp({ guildId: g, userId: '2', xp: 9000 })
  t.equal(await redis.exists(keys.guild(g).events, keys.guild(g).eventSubscriptions), 0)
})

t.test('member.leveled_up: from an award, a batch (a jump of several levels), a set that raises XP; the level under the current curve', async (t) => {
  const g = newGuild()
  await store.create(g, { url: URL, events: ['member.leveled_up'] })
  await writer.awardXp({ guildId: g, userId: '1', xp: 150, username: 'Ada' }) // mee6: level 1 at 100
  await writer.awardXp({ guildId: g, userId: '1', xp: 10 }) // no level change
  await writer.awardMany(g, [{ userId: '2', xp: 1000 }, { userId: '3', xp: 1 }]) // 0 -> 4 (mee6: 100, 255, 475, 770, 1100)
  await writer.setXp({ guildId: g, userId: '1', xp: 100 }) // lowered: no event
  await writer.configureGuild(g, { curve: 'flat' })
  await writer.setXp({ guildId: g, userId: '4', xp: 2500 }) // new member, flat: level 2
  const got = await events(g)
  t.match(got, [
    { type: 'member.leveled_up', server_id: g, data: { user_id: '1', username: 'Ada', old_level: 0, new_level: 1, xp: 150, roles: { add: [], remove: [] } } },
    { type: 'member.leveled_up', data: { user_id: '2', username: null, old_level: 0, new_level: 4, xp: 1000 } },
    { type: 'member.leveled_up', data: { user_id: '4', old_level: 0, new_level: 2, xp: 2500 } }
  ])
  t.equal(got.length, 3)
  t.ok(got.every((e) => /^evt_\d+_\d+_\d+$/.test(e.id) && !Number.isNaN(Date.parse(e.created_at))))
})

t.test('member.leveled_up carries the role rewards the move crossed, and the level under a custom curve; an award the rules refuse emits nothing', async (t) => {
  const g = newGuild()
  const [R1, R3] = ['1300000000000000001', '1300000000000000003']
  await writer.configureGuild(g, {
    curve: 'custom',
    customCurve: [100, 200, 300, 400],
    roleRewards: [{ level: 1, roleId: R1 }, { level: 3, roleId: R3 }],
    roleRewardsMode: 'replace',
    cooldownSeconds: 3600
  })
  await store.create(g, { url: URL, events: ['member.leveled_up'] })
  await writer.awardMany(g, [{ userId: '1', xp: 150 }, { userId: '2', xp: 350 }])
  t.match(await writer.awardXp({ guildId: g, userId: '1', xp: 500 }), { applied: false, reason: 'cooldown' })
  await writer.setXp({ guildId: g, userId: '1', xp: 400 })
  t.same((await events(g)).map((e) => e.data), [
    { user_id: '1', username: null, old_level: 0, new_level: 1, xp: 150, roles: { add: [R1], remove: [] } },
    { user_id: '2', username: null, old_level: 0, new_level: 3, xp: 350, roles: { add: [R3], remove: [] } },
    { user_id: '1', username: null, old_level: 1, new_level: 4, xp: 400, roles: { add: [R3], remove: [R1] } }
  ], 'two awards of a batch, then a set: the cooldown\'s refusal in between emitted nothing')
})

t.test('a refused award emits nothing; an award sent again with its operation id emits once', async (t) => {
  const g = newGuild()
  await store.create(g, { url: URL, events: ['member.leveled_up', 'member.rank_entered_top'] })
  await writer.setXp({ guildId: g, userId: '1', xp: MAX_XP - 10 })
  const before = (await events(g)).length
  await t.rejects(writer.awardXp({ guildId: g, userId: '1', xp: 1000 }), { code: 'xp_limit' })
  const refused = await writer.awardMany(g, [{ userId: '1', xp: 1000 }])
  t.equal(refused[0]?.refused, 'xp_limit')
  t.equal((await events(g)).length, before, 'no event for a refused award')
  await writer.awardXp({ guildId: g, userId: '2', xp: 200, opId: 'msg-1' })
  await writer.awardXp({ guildId: g, userId: '2', xp: 200, opId: 'msg-1' })
  t.equal((await events(g)).filter((e) => e.type === 'member.leveled_up' && e.data.user_id === '2').length, 1)
})

t.test('member.rank_entered_top: entering the top 10; moving within it, or below it, is no event', async (t) => {
  const g = newGuild()
  await store.create(g, { url: URL, events: ['member.rank_entered_top'] })
  // Twelve members at 1000..1110 XP: ids 1..12, so 12 is first and 1, 2 are ranks 12, 11.
  for (let i = 1; i <= 12; i++) await writer.setXp({ guildId: g, userId: String(i), xp: 1000 + 10 * (i - 1) })
  const seeded = (await events(g)).length
  t.equal(seeded, 12, 'each new member entered the top: the first ten while it had room, 11 and 12 above them all')
  await writer.awardXp({ guildId: g, userId: '12', xp: 5 }) // already first
  await writer.awardXp({ guildId: g, userId: '2', xp: 5 }) // 1015: still 11th
  t.equal((await events(g)).length, seeded, 'no event')
  await writer.awardXp({ guildId: g, userId: '2', xp: 20 }) // 1035: 9th
  // 1 ties 4 at 1030 and ranks before it (ties by user id): 10th.
  await writer.awardXp({ guildId: g, userId: '1', xp: 30 })
  t.match((await events(g)).slice(seeded), [
    { type: 'member.rank_entered_top', data: { user_id: '2', rank: 9, xp: 1035 } },
    { type: 'member.rank_entered_top', data: { user_id: '1', rank: 10, xp: 1030 } }
  ])
  t.equal((await events(g)).length, seeded + 2)
})

t.test('member.rank_entered_top counts members tied at the old XP as the board orders them (by user id)', async (t) => {
  const g = newGuild()
  for (const id of ['1', '2', '3', '4', '5', '6', '7', '8', '9', '20', '30']) await writer.setXp({ guildId: g, userId: id, xp: 500 })
  await store.create(g, { url: URL, events: ['member.rank_entered_top'] })
  await writer.awardXp({ guildId: g, userId: '30', xp: 1 }) // 11th of eleven tied, to first
  await writer.awardXp({ guildId: g, userId: '5', xp: 1 }) // was 6th (behind 30, 1..4): no event
  await writer.awardXp({ guildId: g, userId: '20', xp: 1 }) // was 11th (behind 30, 5, 1..4, 6..9)
  t.match(await events(g), [
    { type: 'member.rank_entered_top', data: { user_id: '30', rank: 1 } },
    { type: 'member.rank_entered_top', data: { user_id: '20', rank: 2 } } // 5 and 20 tie at 501, 30 too: 5, 20, 30
  ])
  t.equal((await events(g)).length, 2)
})

t.test('a hidden member emits no level-up or top-10 event (awards, batches, sets, and when shown again), while its results still carry leveled_up and roles', async (t) => {
  const g = newGuild()
  const R1 = '1300000000000000001'
  await writer.configureGuild(g, { roleRewards: [{ level: 1, roleId: R1 }] })
  await store.create(g, { url: URL, events: ['member.leveled_up', 'member.rank_entered_top'] })
  await writer.setVisibility({ guildId: g, userId: '1', visible: false, reason: 'opted_out' })
  await writer.setVisibility({ guildId: g, userId: '2', visible: false, reason: 'left' })
  t.match(await writer.awardXp({ guildId: g, userId: '1', xp: 150 }), { applied: true, level: 1, leveledUp: true, roles: { add: [R1], remove: [] } },
    'the award\'s result says the level-up and the roles to give')
  t.match(await writer.awardMany(g, [{ userId: '2', xp: 1000 }]), [{ level: 4, leveledUp: true, roles: { add: [R1], remove: [] } }], 'so does a batch\'s')
  t.equal(await writer.setXp({ guildId: g, userId: '1', xp: 2000 }), 150, 'a set raising it to level 6')
  t.equal((await events(g)).length, 0, 'no event for any of them: a new member of an empty board, levels crossed')
  await writer.setVisibilityMany(g, [{ userId: '1', visible: true }, { userId: '2', visible: true }])
  t.equal((await events(g)).length, 0, 'none when shown again at the top, with levels reached while hidden')
  await writer.awardXp({ guildId: g, userId: '3', xp: 150 })
  t.match(await events(g), [
    { type: 'member.leveled_up', data: { user_id: '3', new_level: 1, roles: { add: [R1] } } },
    { type: 'member.rank_entered_top', data: { user_id: '3', rank: 3 } }
  ], 'a shown member\'s award, after them, emits both')
})

t.test('only the types a webhook wants are queued; a disabled or deleted webhook wants none', async (t) => {
  const g = newGuild()
  const { id } = await store.create(g, { url: URL, events: ['member.rank_entered_top'] })
  await writer.awardXp({ guildId: g, userId: '1', xp: 500 })
  t.same((await events(g)).map((e) => e.type), ['member.rank_entered_top'], 'no level-up event: no webhook wants it')
  await store.remove(g, id)
  await writer.awardXp({ guildId: g, userId: '2', xp: 500 })
  t.equal((await events(g)).length, 1)
})

t.test('a live stream listening gets every type, until its listening lapses', async (t) => {
  const g = newGuild()
  const clock = new RedisClock()
  clock.observe(await redisNow(redis))
  t.equal(await new ServerEventFeed(redis, keys, clock).listen(g), '0-0', 'no event yet')
  await writer.awardXp({ guildId: g, userId: '1', xp: 500 })
  t.same((await events(g)).map((e) => e.type), ['member.leveled_up', 'member.rank_entered_top'])
  // The listening lapses (as when the stream closed LISTEN_MS ago).
  await redis.hset(keys.guild(g).eventSubscriptions, 'live', String(await redisNow(redis) - 1))
  await writer.awardXp({ guildId: g, userId: '2', xp: 500 })
  t.equal((await events(g)).length, 2, 'nothing after the listening lapsed')
})

t.test('season.ended: the function a season\'s end script calls queues the season and its final top', async (t) => {
  const g = newGuild()
  const k = keys.guild(g)
  await store.create(g, { url: URL, events: ['season.ended'] })
  const endSeason = withIncludes(`--- @include "events"
local ctx = events_context(KEYS[1], KEYS[2])
season_ended(ctx, { id = 3, name = ARGV[1], started_at = 1764547200000, ended_at = 1767225600000 },
  { { member = ARGV[2], xp = 900, name = 'Ada' }, { member = ARGV[3], xp = 450, name = '' } })
events_done(ctx)
season_ended(events_context(KEYS[1], KEYS[2]), { id = 4, name = 'Empty', started_at = 1767225600000, ended_at = 1769904000000 }, {})
return 1`)
  await redis.eval(endSeason, 2, k.eventSubscriptions, k.events, 'Winter', boardMember('42'), boardMember('7'))
  t.match(await events(g), [{
    type: 'season.ended',
    server_id: g,
    data: {
      season: { id: 3, name: 'Winter', started_at: '2025-12-01T00:00:00.000Z', ended_at: '2026-01-01T00:00:00.000Z' },
      top: [{ rank: 1, user_id: '42', username: 'Ada', xp: 900 }, { rank: 2, user_id: '7', username: null, xp: 450 }]
    }
  }, { type: 'season.ended', data: { season: { id: 4, name: 'Empty' }, top: [] } }])
})
