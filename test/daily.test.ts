// Daily claims against a real redis-server: once per UTC calendar day, streaks, refusals that
// change nothing, and the clock read from Redis.
import t, { type Test } from 'tap'
import { redisFixture } from './helpers/redis-server.js'
import { dataSnapshot, snapshot } from './helpers/redis-snapshot.js'
import { redisNow } from '../src/redis/client.js'
import { boardMember } from '../src/redis/keys.js'
import { parseRecord } from '../src/redis/records.js'
import { type DailyClaim, LeaderboardWriter, MAX_CLAIM_AHEAD_MS } from '../src/writer/leaderboard-writer.js'
import { CURVES, levelForXp } from '../src/levels/curves.js'
import { DailyClaimRefusedError, type DailyRefusal, InvalidParameterError } from '../src/errors.js'

const { redis, raw, keys } = await redisFixture(t, 'd')
const writer = new LeaderboardWriter(redis, keys)

let lastGuild = 2000
const newGuild = (): string => String(++lastGuild)
const DAY = 86_400_000
const at = (iso: string): Date => new Date(iso)

async function claim (guildId: string, userId: string, when?: Date): Promise<DailyClaim> {
  return await writer.claimDaily(when === undefined ? { guildId, userId } : { guildId, userId, at: when })
}

/** What Redis holds for one member's claims, read with plain commands. */
async function stored (guildId: string, userId: string): Promise<{ streak: string | null, last: string | null, xp: string | null }> {
  const k = keys.guild(guildId)
  const { streak, lastClaim } = parseRecord(await raw.hget(k.members, boardMember(userId)))
  return {
    // A record without a claim holds no streak: both read as absent, as they did in their own hashes.
    streak: lastClaim === null && streak === 0 ? null : String(streak),
    last: lastClaim === null ? null : String(lastClaim),
    xp: await raw.zscore(k.board, boardMember(userId))
  }
}

/** Expects the claim to be refused for `reason`, with the data in Redis byte-for-byte unchanged (only its operation reply is kept). */
async function refused (t: Test, guildId: string, userId: string, when: Date | undefined, reason: DailyRefusal, what: string): Promise<void> {
  const before = await dataSnapshot(raw)
  t.ok(Object.keys(before).length > 0, 'there is data to compare')
  const error = await claim(guildId, userId, when).then(() => null, (err: unknown) => err)
  t.type(error, DailyClaimRefusedError, what)
  t.equal((error as DailyClaimRefusedError | null)?.reason, reason, `${what}: reason ${reason}`)
  t.same(await dataSnapshot(raw), before, `${what}: Redis unchanged`)
}

t.test('the first claim starts a streak of 1 and records the claim time in ms', async (t) => {
  const g = newGuild()
  const when = at('2024-03-10T12:34:56.789Z')
  const result = await claim(g, '1', when)
  t.equal(result.streak, 1)
  t.equal(result.claimedAt.toISOString(), when.toISOString())
  t.same(await stored(g, '1'), { streak: '1', last: String(when.getTime()), xp: '0' })
})

t.test('a claim on the next UTC day adds 1 to the streak, whatever the hour', async (t) => {
  const g = newGuild()
  t.equal((await claim(g, '1', at('2024-03-10T23:00:00.000Z'))).streak, 1)
  t.equal((await claim(g, '1', at('2024-03-11T00:30:00.000Z'))).streak, 2, '90 minutes later, the next UTC day')
  t.equal((await claim(g, '1', at('2024-03-12T23:59:00.000Z'))).streak, 3, 'almost 48 hours later, still the next UTC day')
  t.equal((await claim(g, '1', at('2024-03-13T00:00:00.000Z'))).streak, 4)
  t.same(await stored(g, '1'), { streak: '4', last: String(Date.parse('2024-03-13T00:00:00.000Z')), xp: '0' })
})

t.test('a claim after a missed UTC day restarts the streak at 1', async (t) => {
  const g = newGuild()
  await claim(g, '1', at('2024-03-10T10:00:00.000Z'))
  t.equal((await claim(g, '1', at('2024-03-11T10:00:00.000Z'))).streak, 2)
  t.equal((await claim(g, '1', at('2024-03-13T00:00:00.000Z'))).streak, 1, 'skipped the 12th')
  t.equal((await claim(g, '1', at('2024-03-14T00:00:00.000Z'))).streak, 2)
  t.equal((await claim(g, '1', at('2024-06-01T00:00:00.000Z'))).streak, 1, 'months later')
  t.equal((await stored(g, '1')).streak, '1')
})

t.test('a second claim on the same UTC day is refused (already_claimed) and changes nothing; 00:00:00.000 the next day is +1', async (t) => {
  const g = newGuild()
  t.equal((await claim(g, '1', at('2024-03-10T00:00:00.000Z'))).streak, 1)
  await refused(t, g, '1', at('2024-03-10T00:00:00.000Z'), 'already_claimed', 'the same instant again')
  await refused(t, g, '1', at('2024-03-10T12:00:00.000Z'), 'already_claimed', 'noon the same day')
  await refused(t, g, '1', at('2024-03-10T23:59:59.999Z'), 'already_claimed', '23:59:59.999 the same day')
  t.equal((await claim(g, '1', at('2024-03-11T00:00:00.000Z'))).streak, 2, '00:00:00.000 the next day')

  const h = newGuild()
  t.equal((await claim(h, '1', at('2024-03-10T23:59:59.999Z'))).streak, 1, 'claimed at 23:59:59.999')
  t.equal((await claim(h, '1', at('2024-03-11T00:00:00.000Z'))).streak, 2, 'one ms later is the next UTC day: +1')
  await refused(t, h, '1', at('2024-03-11T23:59:59.999Z'), 'already_claimed', 'the end of that day')
  t.same(await stored(h, '1'), { streak: '2', last: String(Date.parse('2024-03-11T00:00:00.000Z')), xp: '0' })
})

t.test('a claim dated before the last claim is refused (before_last_claim) and changes nothing', async (t) => {
  const g = newGuild()
  await claim(g, '1', at('2024-03-10T12:00:00.000Z'))
  await claim(g, '1', at('2024-03-11T12:00:00.000Z'))
  await refused(t, g, '1', at('2024-03-10T13:00:00.000Z'), 'before_last_claim', 'the day before the last claim')
  await refused(t, g, '1', at('2020-01-01T00:00:00.000Z'), 'before_last_claim', 'years before')
  t.same(await stored(g, '1'), { streak: '2', last: String(Date.parse('2024-03-11T12:00:00.000Z')), xp: '0' })
  t.equal((await claim(g, '1', at('2024-03-12T00:00:00.000Z'))).streak, 3, 'the next day still counts')
})

t.test('a claim more than 5 minutes ahead of Redis\'s clock is refused (in_future); 4 minutes ahead is accepted', async (t) => {
  t.equal(MAX_CLAIM_AHEAD_MS, 5 * 60 * 1000)
  const g = newGuild()
  await claim(g, '1', at('2024-03-10T12:00:00.000Z')) // so the snapshot has something to compare
  let now = await redisNow(raw)
  await refused(t, g, '2', new Date(now + 5 * 60_000 + 5_000), 'in_future', '5 min 5 s ahead, new member')
  t.same(await stored(g, '2'), { streak: null, last: null, xp: null }, 'no member was created')
  await refused(t, g, '1', new Date(now + 6 * 60_000), 'in_future', '6 min ahead, existing member')
  await refused(t, g, '1', new Date(now + 365 * DAY), 'in_future', 'a year ahead')

  now = await redisNow(raw)
  const soon = new Date(now + 4 * 60_000)
  const result = await claim(g, '3', soon)
  t.same(result, { streak: 1, claimedAt: soon }, '4 min ahead is accepted')
  t.equal((await stored(g, '3')).last, String(soon.getTime()))
})

t.test('a claim without a date is dated by Redis\'s clock', async (t) => {
  const g = newGuild()
  const before = await redisNow(raw)
  const result = await claim(g, '1')
  const after = await redisNow(raw)
  t.equal(result.streak, 1)
  t.ok(result.claimedAt.getTime() >= before && result.claimedAt.getTime() <= after,
    `${result.claimedAt.toISOString()} within [${new Date(before).toISOString()}, ${new Date(after).toISOString()}]`)
  t.equal((await stored(g, '1')).last, String(result.claimedAt.getTime()))
  await refused(t, g, '1', undefined, 'already_claimed', 'a second undated claim the same day')
})

t.test('a claim dated ahead of now (within 5 min) is the last claim: an undated claim after it is refused and changes nothing', async (t) => {
  const g = newGuild()
  const now = await redisNow(raw)
  await claim(g, '1', new Date(now + 2 * 60_000))
  const before = await dataSnapshot(raw)
  const error = await claim(g, '1').then(() => null, (err: unknown) => err)
  t.type(error, DailyClaimRefusedError)
  // Dated before the last claim, and on the same UTC day too unless midnight fell in between:
  // the contract does not rank the two reasons.
  t.ok(['before_last_claim', 'already_claimed'].includes((error as DailyClaimRefusedError).reason))
  t.same(await dataSnapshot(raw), before, 'Redis unchanged')
})

t.test('a claim creates a 0-XP member that is ranked but does not count in members_with_xp', async (t) => {
  const g = newGuild()
  const k = keys.guild(g)
  await writer.setXp({ guildId: g, userId: '5', xp: 300 })
  const statsBefore = await raw.hgetall(k.stats)
  await claim(g, '6', at('2024-03-10T12:00:00.000Z'))
  t.equal(await raw.zscore(k.board, boardMember('6')), '0', 'on the board with 0 XP')
  t.equal(await raw.zcard(k.board), 2, 'ranked beside the member with XP')
  t.equal(await raw.zrevrank(k.board, boardMember('6')), 1, 'after the member with XP')
  t.same(await raw.hgetall(k.stats), statsBefore, 'the aggregates did not move')
  t.equal(await raw.hget(k.stats, 'members_with_xp'), '1')
  t.same((await raw.hmget(k.stats, ...CURVES.map((c) => `level_sum:${c}`))).map(Number), CURVES.map((c) => levelForXp(c, 300)))

  await writer.awardXp({ guildId: g, userId: '6', xp: 20 })
  t.equal(await raw.hget(k.stats, 'members_with_xp'), '2', 'XP makes it count')
  t.same(await stored(g, '6'), { streak: '1', last: String(Date.parse('2024-03-10T12:00:00.000Z')), xp: '20' })
})

t.test('a claim by a member with XP keeps its XP', async (t) => {
  const g = newGuild()
  await writer.setXp({ guildId: g, userId: '7', xp: 4321 })
  await claim(g, '7', at('2024-03-10T12:00:00.000Z'))
  t.equal((await stored(g, '7')).xp, '4321')
})

t.test('after removeMember, claims start over: streak 1 and no before_last_claim from the old data', async (t) => {
  const g = newGuild()
  await claim(g, '1', at('2024-03-10T12:00:00.000Z'))
  await claim(g, '1', at('2024-03-11T12:00:00.000Z'))
  t.equal(await writer.removeMember({ guildId: g, userId: '1' }), true)
  t.equal((await claim(g, '1', at('2024-03-01T12:00:00.000Z'))).streak, 1)
})

t.test('claimDaily refuses an invalid date or one before 1970 without touching Redis', async (t) => {
  const g = newGuild()
  await claim(g, '1', at('2024-03-10T12:00:00.000Z'))
  for (const bad of [new Date(NaN), new Date(-1), '2024-03-11' as unknown as Date, 0 as unknown as Date]) {
    const before = await snapshot(raw)
    await t.rejects(writer.claimDaily({ guildId: g, userId: '1', at: bad }), InvalidParameterError, String(bad))
    t.same(await snapshot(raw), before, `${String(bad)}: Redis unchanged`)
  }
})

t.test('streaks are per member and per server', async (t) => {
  const g = newGuild()
  const h = newGuild()
  await claim(g, '1', at('2024-03-10T12:00:00.000Z'))
  await claim(g, '1', at('2024-03-11T12:00:00.000Z'))
  t.equal((await claim(g, '2', at('2024-03-11T12:00:00.000Z'))).streak, 1, 'another member of the same server')
  t.equal((await claim(h, '1', at('2024-03-11T12:00:00.000Z'))).streak, 1, 'the same user in another server')
  t.equal((await stored(g, '1')).streak, '2')
})
