// The writer library against a real redis-server: every operation, its validation, and what it
// leaves in Redis (read back with plain commands, not through the library).
import t, { type Test } from 'tap'
import { redisFixture } from './helpers/redis-server.js'
import { dataSnapshot, snapshot } from './helpers/redis-snapshot.js'
import { boardMember, userIdFromBoardMember } from '../src/redis/keys.js'
import { type BaseRecord, baseRecord } from './helpers/guild-state.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { CURVES, levelForXp, MAX_XP } from '../src/levels/curves.js'
import { MAX_AWARD } from '../src/validation.js'
import { InvalidParameterError, XpLimitError } from '../src/errors.js'

const { redis, raw, keys } = await redisFixture(t, 't')
const writer = new LeaderboardWriter(redis, keys)

// Each test works in guilds of its own, so the tests are independent of one another.
let lastGuild = 1000
const newGuild = (): string => String(++lastGuild)

async function xpOf (guildId: string, userId: string): Promise<string | null> {
  return await raw.zscore(keys.guild(guildId).board, boardMember(userId))
}

/** A member's record as the members hash stores it, parsed. */
async function recordOf (guildId: string, userId: string): Promise<BaseRecord> {
  return baseRecord(await raw.hget(keys.guild(guildId).members, boardMember(userId)))
}

async function nameOf (guildId: string, userId: string): Promise<string | null> {
  return (await recordOf(guildId, userId)).username
}

/** The stats hash as numbers, an absent field read as 0. */
async function stats (guildId: string): Promise<Record<string, number>> {
  const fields = ['xp_total', 'members_with_xp', ...CURVES.map((c) => `level_sum:${c}`)]
  const values = await raw.hmget(keys.guild(guildId).stats, ...fields)
  return Object.fromEntries(fields.map((f, i) => [f, Number(values[i] ?? 0)]))
}

/** The stats a full scan of the board computes. */
async function recomputed (guildId: string): Promise<Record<string, number>> {
  const flat = await raw.zrange(keys.guild(guildId).board, 0, '-1', 'WITHSCORES')
  const xps = flat.filter((_, i) => i % 2 === 1).map(Number)
  const out: Record<string, number> = {
    xp_total: xps.reduce((a, b) => a + b, 0),
    members_with_xp: xps.filter((x) => x > 0).length
  }
  for (const c of CURVES) out[`level_sum:${c}`] = xps.reduce((a, x) => a + levelForXp(c, x), 0)
  return out
}

/**
 * Runs `fn`, expects it to throw `type`, and checks that Redis was not changed: not at all for
 * invalid input (refused before Redis is asked), and in none of its data for a refusal inside
 * Redis (which keeps only its operation reply, for resends).
 */
async function refusedUnchanged (t: Test, fn: () => Promise<unknown>, type: new (...args: never[]) => Error, what: string): Promise<void> {
  const read = type === InvalidParameterError ? snapshot : dataSnapshot
  const before = await read(raw)
  await t.rejects(fn(), type, what)
  t.same(await read(raw), before, `${what}: Redis unchanged`)
}

t.test('awardXp adds floor(award × multiplier) computed exactly in hundredths: 100 XP at 0.29 adds 29', async (t) => {
  const g = newGuild()
  await writer.configureGuild(g, { multiplier: 0.29 })
  // In floating point 100 * 0.29 is 28.999999999999996, so a float floor would give 28.
  t.equal(Math.floor(100 * 0.29), 28, 'the floating-point trap this test is about')
  t.match(await writer.awardXp({ guildId: g, userId: '1', xp: 100 }), { gained: 29, xp: 29 })
  t.equal(await xpOf(g, '1'), '29')
  t.match(await writer.awardXp({ guildId: g, userId: '1', xp: 100 }), { gained: 29, xp: 58 }, 'adds to the XP held')
  t.equal(await xpOf(g, '1'), '58')
})

t.test('awardXp multiplies exactly for a table of multipliers and awards (floor of award × hundredths / 100)', async (t) => {
  const cases: Array<[string, number]> = [
    ['0.29', 100], ['0.57', 100], ['1.1', 3], ['0.07', 100], ['2.55', 7], ['1.15', 20],
    ['0.33', 3], ['0.99', 101], ['12.34', 999_999], ['0.01', 150], ['99.99', 1_000_000], ['3', 33]
  ]
  for (const [multiplier, award] of cases) {
    const g = newGuild()
    await writer.configureGuild(g, { multiplier })
    const [whole = '0', frac = ''] = multiplier.split('.')
    const hundredths = BigInt(whole) * 100n + BigInt(frac.padEnd(2, '0'))
    const expected = Number(BigInt(award) * hundredths / 100n)
    t.match(await writer.awardXp({ guildId: g, userId: '5', xp: award }), { gained: expected, xp: expected }, `${award} at ${multiplier} adds ${expected}`)
    t.equal(await xpOf(g, '5'), String(expected))
  }
})

t.test('awardXp of 1 at multiplier 0.5 adds 0 but records the member, with 0 XP, on the board', async (t) => {
  const g = newGuild()
  await writer.configureGuild(g, { multiplier: 0.5 })
  t.match(await writer.awardXp({ guildId: g, userId: '42', xp: 1, username: 'half' }), { gained: 0, xp: 0 })
  t.equal(await xpOf(g, '42'), '0', 'the member is on the board with 0 XP')
  t.equal(await raw.zcard(keys.guild(g).board), 1)
  t.equal(await nameOf(g, '42'), 'half')
  t.same(await stats(g), await recomputed(g), 'aggregates exact')
  t.equal((await stats(g)).members_with_xp, 0, 'a 0-XP member does not count in members_with_xp')
})

t.test('awardXp at the extreme multipliers: 0.01 and 100', async (t) => {
  const low = newGuild()
  await writer.configureGuild(low, { multiplier: 0.01 })
  t.match(await writer.awardXp({ guildId: low, userId: '1', xp: 99 }), { gained: 0, xp: 0 }, '99 at 0.01 adds 0')
  t.match(await writer.awardXp({ guildId: low, userId: '1', xp: 100 }), { gained: 1, xp: 1 }, '100 at 0.01 adds 1')
  t.match(await writer.awardXp({ guildId: low, userId: '1', xp: MAX_AWARD }), { gained: MAX_AWARD / 100, xp: MAX_AWARD / 100 + 1 })
  const high = newGuild()
  await writer.configureGuild(high, { multiplier: 100 })
  t.match(await writer.awardXp({ guildId: high, userId: '1', xp: 1 }), { gained: 100, xp: 100 }, '1 at 100 adds 100')
  t.match(await writer.awardXp({ guildId: high, userId: '1', xp: MAX_AWARD }), { gained: MAX_AWARD * 100, xp: MAX_AWARD * 100 + 100 })
  t.equal(await xpOf(high, '1'), String(MAX_AWARD * 100 + 100))
  t.same(await stats(high), await recomputed(high))
})

t.test('awardXp without a configured multiplier adds the award as is and keeps the aggregates exact', async (t) => {
  const g = newGuild()
  t.match(await writer.awardXp({ guildId: g, userId: '3', xp: 150 }), { gained: 150, xp: 150 })
  t.match(await writer.awardXp({ guildId: g, userId: '4', xp: 99 }), { gained: 99, xp: 99 })
  const s = await stats(g)
  t.same(s, await recomputed(g))
  t.same(s, { xp_total: 249, members_with_xp: 2, 'level_sum:mee6': 1, 'level_sum:linear': 2, 'level_sum:flat': 0 })
})

t.test('awardXp: the username is optional; given, it is stored (trimmed); omitted, the stored one stays', async (t) => {
  const g = newGuild()
  await writer.awardXp({ guildId: g, userId: '8', xp: 5 })
  t.equal(await nameOf(g, '8'), null, 'no username given, none stored')
  await writer.awardXp({ guildId: g, userId: '8', xp: 5, username: '  alice  ' })
  t.equal(await nameOf(g, '8'), 'alice')
  await writer.awardXp({ guildId: g, userId: '8', xp: 5 })
  t.equal(await nameOf(g, '8'), 'alice', 'an award without a username keeps the stored one')
  await writer.awardXp({ guildId: g, userId: '8', xp: 5, username: 'bob' })
  t.equal(await nameOf(g, '8'), 'bob')
})

t.test('awardXp refuses an award of 0, negative, non-integer, not a number or above MAX_AWARD, writing nothing', async (t) => {
  const g = newGuild()
  await writer.awardXp({ guildId: g, userId: '1', xp: 10 })
  for (const xp of [0, -1, -100, 1.5, 0.5, NaN, Infinity, MAX_AWARD + 1, '10' as unknown as number]) {
    await refusedUnchanged(t, async () => await writer.awardXp({ guildId: g, userId: '1', xp }), InvalidParameterError, `award ${String(xp)}`)
    await refusedUnchanged(t, async () => await writer.awardXp({ guildId: g, userId: '2', xp }), InvalidParameterError, `award ${String(xp)} to a new user`)
  }
  t.match(await writer.awardXp({ guildId: g, userId: '1', xp: MAX_AWARD }), { gained: MAX_AWARD, xp: MAX_AWARD + 10 }, 'MAX_AWARD itself is accepted')
})

t.test('awardXp and setXp refuse a bad username, writing nothing', async (t) => {
  const g = newGuild()
  for (const username of ['', '   ', 'x'.repeat(101), 'a\nb', 'tab\there', 'nul\u0000', 'del\u007f']) {
    await refusedUnchanged(t, async () => await writer.awardXp({ guildId: g, userId: '1', xp: 10, username }), InvalidParameterError, `award with ${JSON.stringify(username)}`)
    await refusedUnchanged(t, async () => await writer.setXp({ guildId: g, userId: '1', xp: 10, username }), InvalidParameterError, `setXp with ${JSON.stringify(username)}`)
  }
  await writer.awardXp({ guildId: g, userId: '1', xp: 10, username: 'x'.repeat(100) })
  t.equal(await nameOf(g, '1'), 'x'.repeat(100), '100 characters are accepted')
})

t.test('awardXp past MAX_XP is refused with XpLimitError and changes nothing; reaching MAX_XP exactly is allowed', async (t) => {
  const g = newGuild()
  await writer.setXp({ guildId: g, userId: '1', xp: MAX_XP - 10 })
  await refusedUnchanged(t, async () => await writer.awardXp({ guildId: g, userId: '1', xp: 11, username: 'new' }), XpLimitError, 'award 11 at MAX_XP - 10')
  t.equal(await nameOf(g, '1'), null, 'the refused award did not store its username')
  await writer.configureGuild(g, { multiplier: 2 })
  await refusedUnchanged(t, async () => await writer.awardXp({ guildId: g, userId: '1', xp: 6 }), XpLimitError, 'award 6 at multiplier 2 (12 XP) at MAX_XP - 10')
  t.match(await writer.awardXp({ guildId: g, userId: '1', xp: 5 }), { gained: 10, xp: MAX_XP }, 'exactly MAX_XP')
  t.equal(await xpOf(g, '1'), String(MAX_XP))
  await refusedUnchanged(t, async () => await writer.awardXp({ guildId: g, userId: '1', xp: 1 }), XpLimitError, 'award 1 at MAX_XP')
  t.same(await stats(g), await recomputed(g))
})

t.test('setXp sets XP outright, not multiplied, creates the member and returns the previous XP', async (t) => {
  const g = newGuild()
  await writer.configureGuild(g, { multiplier: 2.5 })
  t.equal(await writer.setXp({ guildId: g, userId: '1', xp: 1000, username: 'sam' }), 0, 'a new member had 0')
  t.equal(await xpOf(g, '1'), '1000', 'not multiplied')
  t.equal(await nameOf(g, '1'), 'sam')
  t.equal(await writer.setXp({ guildId: g, userId: '1', xp: 400 }), 1000, 'returns the previous XP')
  t.equal(await xpOf(g, '1'), '400', 'XP may go down')
  t.equal(await nameOf(g, '1'), 'sam', 'the username stays when none is given')
  t.equal(await writer.setXp({ guildId: g, userId: '1', xp: MAX_XP }), 400, 'MAX_XP is allowed')
  t.equal(await xpOf(g, '1'), String(MAX_XP))
  t.same(await stats(g), await recomputed(g))
})

t.test('setXp to 0 is allowed, creates a ranked member, and drops it from members_with_xp', async (t) => {
  const g = newGuild()
  t.equal(await writer.setXp({ guildId: g, userId: '11', xp: 0 }), 0)
  t.equal(await xpOf(g, '11'), '0', 'a new member with 0 XP is on the board')
  await writer.setXp({ guildId: g, userId: '12', xp: 500 })
  t.equal((await stats(g)).members_with_xp, 1)
  t.equal(await writer.setXp({ guildId: g, userId: '12', xp: 0 }), 500)
  t.equal(await xpOf(g, '12'), '0')
  t.same(await stats(g), await recomputed(g))
  t.same(await stats(g), { xp_total: 0, members_with_xp: 0, 'level_sum:mee6': 0, 'level_sum:linear': 0, 'level_sum:flat': 0 })
})

t.test('setXp refuses XP below 0, above MAX_XP or not an integer, writing nothing', async (t) => {
  const g = newGuild()
  await writer.setXp({ guildId: g, userId: '1', xp: 50 })
  for (const xp of [-1, 1.5, NaN, Infinity, MAX_XP + 1, '5' as unknown as number]) {
    await refusedUnchanged(t, async () => await writer.setXp({ guildId: g, userId: '1', xp }), InvalidParameterError, `setXp ${String(xp)}`)
  }
})

t.test('setUsername records the name of a member, trimmed', async (t) => {
  const g = newGuild()
  await writer.setXp({ guildId: g, userId: '1', xp: 0 })
  t.equal(await writer.setUsername({ guildId: g, userId: '1', username: ' carol ' }), true)
  t.equal(await nameOf(g, '1'), 'carol')
  t.equal(await writer.setUsername({ guildId: g, userId: '1', username: 'dave' }), true)
  t.equal(await nameOf(g, '1'), 'dave')
})

t.test('setUsername returns false for a non-member and stores nothing', async (t) => {
  const g = newGuild()
  await writer.setXp({ guildId: g, userId: '1', xp: 5 })
  const before = await dataSnapshot(raw)
  t.equal(await writer.setUsername({ guildId: g, userId: '2', username: 'ghost' }), false)
  t.equal(await writer.setUsername({ guildId: newGuild(), userId: '2', username: 'ghost' }), false, 'in a server with no data')
  t.same(await dataSnapshot(raw), before, 'Redis unchanged')
  await refusedUnchanged(t, async () => await writer.setUsername({ guildId: g, userId: '1', username: ' ' }), InvalidParameterError, 'blank username')
})

t.test('removeMember drops the member from the aggregates and deletes all its fields; false the second time', async (t) => {
  const g = newGuild()
  const k = keys.guild(g)
  await writer.configureGuild(g, { curve: 'linear' })
  await writer.setXp({ guildId: g, userId: '1', xp: 12_345, username: 'one' })
  await writer.setXp({ guildId: g, userId: '2', xp: 777, username: 'two' })
  await writer.setXp({ guildId: g, userId: '3', xp: 0, username: 'three' })
  await writer.claimDaily({ guildId: g, userId: '1', at: new Date('2024-01-01T10:00:00Z') })
  await writer.claimDaily({ guildId: g, userId: '2', at: new Date('2024-01-01T10:00:00Z') })
  const full = await stats(g)
  t.same(full, await recomputed(g))

  t.equal(await writer.removeMember({ guildId: g, userId: '1' }), true)
  t.equal(await xpOf(g, '1'), null, 'off the board')
  t.equal(await raw.hexists(k.members, boardMember('1')), 0, 'its record (name, streak, claim) is gone')
  const after = await stats(g)
  t.same(after, await recomputed(g), 'aggregates equal a full scan')
  t.same(after, {
    xp_total: 777,
    members_with_xp: 1,
    'level_sum:mee6': levelForXp('mee6', 777),
    'level_sum:linear': levelForXp('linear', 777),
    'level_sum:flat': 0
  })
  t.same(await recordOf(g, '2'), { streak: 1, lastClaim: Date.parse('2024-01-01T10:00:00Z'), username: 'two' }, 'other members keep their data')

  const before = await dataSnapshot(raw)
  t.equal(await writer.removeMember({ guildId: g, userId: '1' }), false, 'false the second time')
  t.equal(await writer.removeMember({ guildId: g, userId: '99' }), false, 'false for a user never seen')
  t.same(await dataSnapshot(raw), before, 'nothing changed')

  t.equal(await writer.removeMember({ guildId: g, userId: '3' }), true, 'a 0-XP member can be removed')
  t.equal(await writer.removeMember({ guildId: g, userId: '2' }), true)
  t.equal(await raw.zcard(k.board), 0)
  t.same(await stats(g), { xp_total: 0, members_with_xp: 0, 'level_sum:mee6': 0, 'level_sum:linear': 0, 'level_sum:flat': 0 })
})

t.test('configureGuild stores a valid curve and refuses any other name', async (t) => {
  const g = newGuild()
  const k = keys.guild(g)
  for (const curve of CURVES) {
    await writer.configureGuild(g, { curve })
    t.equal(await raw.hget(k.settings, 'curve'), curve)
  }
  for (const curve of ['MEE6', 'quadratic', '', ' flat', 'linear ']) {
    await refusedUnchanged(t, async () => await writer.configureGuild(g, { curve }), InvalidParameterError, `curve ${JSON.stringify(curve)}`)
  }
  await refusedUnchanged(t, async () => await writer.configureGuild(g, {}), InvalidParameterError, 'neither curve nor multiplier')
})

t.test('configureGuild reads multipliers exactly: "0.29" and 0.29 are both 29 hundredths; 0.01 and 100 are the bounds', async (t) => {
  const g = newGuild()
  const k = keys.guild(g)
  const cases: Array<[number | string, string]> = [
    ['0.29', '29'], [0.29, '29'], [0.01, '1'], ['0.01', '1'], [100, '10000'], ['100', '10000'],
    ['100.00', '10000'], [1, '100'], [0.1, '10'], ['2.5', '250'], [1.15, '115'], [99.99, '9999']
  ]
  for (const [multiplier, hundredths] of cases) {
    await writer.configureGuild(g, { multiplier })
    t.equal(await raw.hget(k.settings, 'multiplier_hundredths'), hundredths, `${typeof multiplier} ${multiplier}`)
  }
})

t.test('configureGuild refuses multipliers 0, 0.001, 100.01, "1.234", "abc" and other non-multipliers, changing nothing', async (t) => {
  const g = newGuild()
  await writer.configureGuild(g, { curve: 'flat', multiplier: 3 })
  const bad: unknown[] = [0, 0.001, 100.01, '1.234', 'abc', -1, '-1', 101, '0', '0.00', '', '1e2', NaN, Infinity, '1.', '.5', true, null]
  for (const multiplier of bad) {
    await refusedUnchanged(t, async () => await writer.configureGuild(g, { multiplier: multiplier as number }), InvalidParameterError, `multiplier ${JSON.stringify(multiplier)}`)
    await refusedUnchanged(t, async () => await writer.configureGuild(g, { curve: 'mee6', multiplier: multiplier as number }), InvalidParameterError, `valid curve with multiplier ${JSON.stringify(multiplier)}`)
  }
  t.same(await raw.hgetall(keys.guild(g).settings), { curve: 'flat', multiplier_hundredths: '300', epoch: '1' })
})

t.test('a curve switch leaves the aggregates exact: the level sums of every curve are kept all along', async (t) => {
  const g = newGuild()
  await writer.setXp({ guildId: g, userId: '1', xp: 5000 })
  await writer.setXp({ guildId: g, userId: '2', xp: 123_456 })
  const before = await raw.hgetall(keys.guild(g).stats)
  await writer.configureGuild(g, { curve: 'flat' })
  t.same(await raw.hgetall(keys.guild(g).stats), before, 'the stats hash is untouched')
  t.same(await stats(g), await recomputed(g))
  t.equal((await stats(g))['level_sum:flat'], 5 + 123)
})

t.test('ids: guild_id and user_id must be 1-20 digits without a leading zero; every operation refuses others, writing nothing', async (t) => {
  const bad = ['0', '01', '007', '123456789012345678901', '12a', 'abc', '', ' 1', '1 ', '1.0', '-1', '+1', '１２', 12 as unknown as string]
  const good = '5'
  const ops: Record<string, (guildId: string, userId: string) => Promise<unknown>> = {
    awardXp: async (guildId, userId) => await writer.awardXp({ guildId, userId, xp: 10 }),
    setXp: async (guildId, userId) => await writer.setXp({ guildId, userId, xp: 10 }),
    setUsername: async (guildId, userId) => await writer.setUsername({ guildId, userId, username: 'n' }),
    removeMember: async (guildId, userId) => await writer.removeMember({ guildId, userId }),
    claimDaily: async (guildId, userId) => await writer.claimDaily({ guildId, userId, at: new Date('2024-01-01T00:00:00Z') })
  }
  for (const [name, op] of Object.entries(ops)) {
    for (const id of bad) {
      await refusedUnchanged(t, async () => await op(id, good), InvalidParameterError, `${name} with guild_id ${JSON.stringify(id)}`)
      await refusedUnchanged(t, async () => await op(good, id), InvalidParameterError, `${name} with user_id ${JSON.stringify(id)}`)
    }
  }
  for (const id of bad) {
    await refusedUnchanged(t, async () => await writer.configureGuild(id, { curve: 'flat' }), InvalidParameterError, `configureGuild with guild_id ${JSON.stringify(id)}`)
  }
  const twenty = '12345678901234567890'
  t.match(await writer.awardXp({ guildId: twenty, userId: twenty, xp: 1 }), { gained: 1, xp: 1 }, '20 digits are accepted')
  t.match(await writer.awardXp({ guildId: '9', userId: '1', xp: 1 }), { gained: 1, xp: 1 }, 'one digit is accepted')
})

t.test('board order: XP descending, ties by user_id ascending as numbers ("99" before "100"), read with ZREVRANGE', async (t) => {
  const g = newGuild()
  // Three XP values; each tie group mixes ids of different lengths, and ids beyond 2^53 and 2^64.
  const groups: Array<[number, string[]]> = [
    [500, ['100', '99', '1', '9007199254740993', '9007199254740992', '18446744073709551616', '18446744073709551615', '20', '19']],
    [70, ['10', '101', '1000', '12345678901234567890', '2', '200', '11', '110', '9']],
    [0, ['99999999999999999999', '100000', '3']]
  ]
  const members = groups.flatMap(([xp, ids]) => ids.map((userId) => ({ userId, xp })))
  members.push({ userId: '55', xp: 501 })
  for (const m of [...members].reverse()) await writer.setXp({ guildId: g, userId: m.userId, xp: m.xp })
  const flat = await raw.zrevrange(keys.guild(g).board, 0, -1, 'WITHSCORES')
  const got: Array<{ userId: string, xp: number }> = []
  for (let i = 0; i < flat.length; i += 2) got.push({ userId: userIdFromBoardMember(flat[i] as string), xp: Number(flat[i + 1]) })
  const expected = [...members].sort((a, b) =>
    b.xp - a.xp || (BigInt(a.userId) < BigInt(b.userId) ? -1 : BigInt(a.userId) > BigInt(b.userId) ? 1 : 0))
  t.same(got, expected)
  const at = (id: string): number => got.findIndex((m) => m.userId === id)
  t.ok(at('99') < at('100'), '"99" before "100" at equal XP')
  t.ok(at('9007199254740992') < at('9007199254740993'), 'ids beyond 2^53 compare exactly')
  t.equal(got[0]?.userId, '55', 'the highest XP first')
})

t.test('boardMember and userIdFromBoardMember are inverses for ids of 1 to 20 digits', async (t) => {
  for (const id of ['1', '9', '10', '99', '100', '12345678901234567890', '99999999999999999999', '10000000000000000000']) {
    t.equal(userIdFromBoardMember(boardMember(id)), id)
    t.equal(boardMember(id).length, 20)
  }
})

t.test('a member with 0 XP is on the board, ranked after every member with XP', async (t) => {
  const g = newGuild()
  await writer.setXp({ guildId: g, userId: '1', xp: 0 })
  await writer.awardXp({ guildId: g, userId: '2', xp: 3 })
  const ids = (await raw.zrevrange(keys.guild(g).board, 0, -1)).map(userIdFromBoardMember)
  t.same(ids, ['2', '1'])
  t.equal(await raw.zcard(keys.guild(g).board), 2)
})
