// The bulk write path (LeaderboardWriter.bulkSetMembers, used by imports, and bulkSetMembersFrom,
// which seeding streams its crowd through) against a real
// redis-server and a 3-master cluster: what it leaves on the board and in the member records, and
// aggregates equal to a full recount for new members, overwrites, repeats, reruns and concurrent
// single writes; bad input refused before anything is written.
import t, { type Test } from 'tap'
import { setImmediate as setImmediatePromise } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { RedisCluster, redisFixture } from './helpers/redis-server.js'
import { snapshot } from './helpers/redis-snapshot.js'
import { Random } from '../src/random.js'
import { type BaseRecord, boardOf, malformedRecords, rawRecordsOf, recordsOf, statsOf, storedStats } from './helpers/guild-state.js'
import { createRedis, type RedisClient } from '../src/redis/client.js'
import { BULK_BATCH, BULK_IN_FLIGHT, type BulkMember, LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { CURVES, MAX_XP, xpForLevel } from '../src/levels/curves.js'
import { DailyClaimRefusedError, InvalidParameterError, XpLimitError } from '../src/errors.js'

const { redis, raw, keys } = await redisFixture(t, 'bulk')
const writer = new LeaderboardWriter(redis, keys)

let lastGuild = 3000
const newGuild = (): string => String(++lastGuild)
const DAY = 86_400_000
const at = (iso: string): Date => new Date(iso)

/** XP values at, below and above level thresholds of every curve, and the extremes. */
const THRESHOLD_XPS = [...new Set([0, 1, MAX_XP, MAX_XP - 1, ...CURVES.flatMap((c) =>
  [1, 2, 3, 10, 57, 100, 1000, 8000].flatMap((l) => [xpForLevel(c, l) - 1, xpForLevel(c, l), xpForLevel(c, l) + 1]))])]
  .filter((x) => x >= 0 && x <= MAX_XP)

/** A member of `kind`: 0 given a username and a daily record, 1 a username only, 2 a daily record only, 3 neither. */
function shaped (random: Random, userId: string, xp: number, kind: number): BulkMember {
  const member: BulkMember = { userId, xp }
  if (kind <= 1) member.username = `${random.pick(['ada', 'Zoë', 'x:y:z', '  padded  '])} ${random.int(1, 999)}`
  if (kind === 0 || kind === 2) member.daily = { streak: random.int(1, 400), lastClaim: new Date(Date.UTC(2026, 0, 1) + random.int(0, 300) * DAY + random.int(0, DAY - 1)) }
  return member
}

/** `count` members with ids of 1 to 20 digits, XP over the whole range, and every mix of username and daily record. */
function crowd (random: Random, count: number, idBase = 1n): BulkMember[] {
  return Array.from({ length: count }, (_, i) => {
    const xp = i < THRESHOLD_XPS.length ? THRESHOLD_XPS[i] as number : random.next() < 0.1 ? 0 : random.int(1, random.next() < 0.9 ? 100_000 : MAX_XP)
    return shaped(random, String(idBase + BigInt(i) * 7_777_777_777n), xp, i % 4)
  })
}

/** The record a member given to bulkSetMembers holds, over a `prior` record. */
function expectedRecord (m: BulkMember, prior = { streak: 0, lastClaim: null as number | null, username: null as string | null }) {
  return {
    streak: m.daily?.streak ?? prior.streak,
    lastClaim: m.daily?.lastClaim.getTime() ?? prior.lastClaim,
    username: m.username?.trim() ?? prior.username
  }
}

/** The ids of `members` whose stored record is not `expected(m)`. */
function unexpectedRecords (records: Map<string, BaseRecord>, members: BulkMember[], expected: (m: BulkMember) => ReturnType<typeof expectedRecord>): string[] {
  return members.filter((m) => {
    const want = expected(m)
    const got = records.get(m.userId) ?? { streak: 0, lastClaim: null, username: null }
    return got.streak !== want.streak || got.lastClaim !== want.lastClaim || got.username !== want.username
  }).map((m) => m.userId)
}

async function checkExact (t: Test, client: RedisClient, guildId: string, what: string): Promise<void> {
  const k = keys.guild(guildId)
  const board = await boardOf(client, k)
  t.same(await storedStats(client, k), statsOf([...board.values()]), `${what}: the stats hash equals a full recount of the board`)
  const records = await rawRecordsOf(client, k)
  t.same([...records.keys()].filter((id) => !board.has(id)), [], `${what}: every record belongs to a member on the board`)
  t.same(malformedRecords(records), [], `${what}: every record is well formed`)
}

t.test('new members: each on the board with its XP, username and daily record as given, aggregates exact', async (t) => {
  const g = newGuild()
  const members = crowd(new Random(1), 2 * BULK_BATCH + 17)
  const progress: number[] = []
  t.equal(await writer.bulkSetMembers(g, members, (done) => { progress.push(done) }), members.length, 'returns the members set')
  t.equal(progress.at(-1), members.length, 'progress ends at the count')
  t.ok(progress.length >= 3 && progress.every((p, i) => i === 0 || p > (progress[i - 1] as number)), `progress grows batch by batch (${progress.join(', ')})`)

  const k = keys.guild(g)
  const board = await boardOf(redis, k)
  const records = await recordsOf(redis, k)
  t.same(board, new Map(members.map((m) => [m.userId, m.xp])), 'the board holds every member with its XP, 0 XP included')
  t.same(unexpectedRecords(records, members, (m) => expectedRecord(m)), [], 'every record holds the username and daily record given, and nothing else')
  t.equal(records.size, members.filter((m) => m.username !== undefined || m.daily !== undefined).length, 'a member given neither has no record')
  await checkExact(t, redis, g, 'new members')
  t.ok(THRESHOLD_XPS.length > 60, `${THRESHOLD_XPS.length} XP values at level thresholds among them`)
})

/** `members` as a generator that counts how many were taken from it, and whether it was closed. */
function counted (members: BulkMember[]): { source: Generator<BulkMember>, taken: () => number, closed: () => boolean } {
  let taken = 0
  let closed = false
  function * source (): Generator<BulkMember> {
    try {
      for (const m of members) {
        taken++
        yield m
      }
    } finally {
      closed = true
    }
  }
  return { source: source(), taken: () => taken, closed: () => closed }
}

t.test('from an iterable (bulkSetMembersFrom): every member as given, in order, aggregates exact; the source is read no more than the batches in flight ahead of Redis', async (t) => {
  const g = newGuild()
  const members = crowd(new Random(21), 8 * BULK_BATCH + 123)
  // A member given again, batches later: set again, its last XP and username count.
  const first = members[7] as BulkMember
  const again: BulkMember = { userId: first.userId, xp: 4242, username: 'again' }
  const { source, taken } = counted([...members, again])
  let ahead = 0
  const progress: number[] = []
  const set = await writer.bulkSetMembersFrom(g, source, (done) => {
    progress.push(done)
    ahead = Math.max(ahead, taken() - done)
  })
  t.equal(set, members.length + 1, 'returns the members set, the one given twice counted twice')
  t.equal(progress.at(-1), set, 'progress ends at the count')
  t.ok(ahead <= BULK_IN_FLIGHT * BULK_BATCH, `taken from the source ahead of Redis's answers: ${ahead} members at most (${BULK_IN_FLIGHT} batches of ${BULK_BATCH})`)

  const k = keys.guild(g)
  const want = new Map(members.map((m) => [m.userId, m]))
  want.set(again.userId, again)
  t.same(await boardOf(redis, k), new Map([...want].map(([id, m]) => [id, m.xp])), 'the board holds every member with its XP, the last given for the repeated one')
  const records = await recordsOf(redis, k)
  t.same(unexpectedRecords(records, [...want.values()], (m) => m === again ? expectedRecord(again, expectedRecord(first)) : expectedRecord(m)), [],
    'every record holds the username and daily record given')
  await checkExact(t, redis, g, 'streamed')
})

t.test('from an iterable: a bad member rejects the call once the batches before it are written (and no more), and the source is closed', async (t) => {
  const g = newGuild()
  const good = crowd(new Random(22), 6 * BULK_BATCH, 10n ** 14n)
  const badAt = 3 * BULK_BATCH + 17 // in the fourth batch
  const { source, taken, closed } = counted([...good.slice(0, badAt), { userId: '0123', xp: 1 }, ...good.slice(badAt)])
  await t.rejects(writer.bulkSetMembersFrom(g, source), InvalidParameterError)
  // Read at once: when the call rejects, no batch of it is still on its way.
  t.same(await boardOf(redis, keys.guild(g)), new Map(good.slice(0, 3 * BULK_BATCH).map((m) => [m.userId, m.xp])), 'the three batches before the bad member, and nothing of its own')
  t.ok(closed(), 'the source was closed')
  t.equal(taken(), badAt + 1, 'and read no further than the bad member')
  await checkExact(t, redis, g, 'stopped')

  await t.rejects(writer.bulkSetMembersFrom(g, 5 as unknown as BulkMember[]), InvalidParameterError, 'not iterable')
  await t.rejects(writer.bulkSetMembersFrom('0123', []), InvalidParameterError, 'a bad guild id')
  t.equal(await writer.bulkSetMembersFrom(g, []), 0, 'no members: nothing to do')
})

t.test('overwrites: XP set outright (up, down, to and from 0), records merged, aggregates exact under every curve', async (t) => {
  const g = newGuild()
  const random = new Random(2)
  const before = crowd(random, 1500)
  await writer.bulkSetMembers(g, before)
  // Single writes on some of them too, so the bulk write meets what they left.
  await writer.configureGuild(g, { multiplier: 1.5 })
  await writer.setXp({ guildId: g, userId: before[100]?.userId ?? '', xp: 10 })
  await writer.awardXp({ guildId: g, userId: before[100]?.userId ?? '', xp: 1000, username: 'awarded' })
  await writer.claimDaily({ guildId: g, userId: before[7]?.userId ?? '', at: at('2026-06-01T10:00:00Z') })

  const storedBefore = await recordsOf(redis, keys.guild(g))
  const after = before.map((m, i) => {
    const xp = i % 3 === 0 ? 0 : i % 3 === 1 ? Math.min(MAX_XP, m.xp + random.int(1, 5000)) : Math.max(0, m.xp - random.int(1, 5000))
    return shaped(random, m.userId, xp, (i * 7) % 4)
  })
  // Members new to the server among the overwritten ones.
  after.push(...crowd(random, 300, 10n ** 18n))
  t.equal(await writer.bulkSetMembers(g, after), after.length)

  const k = keys.guild(g)
  t.same(await boardOf(redis, k), new Map(after.map((m) => [m.userId, m.xp])), 'every member holds the XP given, not multiplied')
  const records = await recordsOf(redis, k)
  t.same(unexpectedRecords(records, after, (m) => expectedRecord(m, storedBefore.get(m.userId))), [], 'what was given replaced what was stored; what was not given was kept')
  await checkExact(t, redis, g, 'overwrites')
})

t.test('a member given more than once in a call counts as applied in turn: the last XP, the last username and daily record given', async (t) => {
  const g = newGuild()
  const filler = crowd(new Random(3), BULK_BATCH + 10, 5_000_000_000n)
  const claim = (iso: string, streak: number) => ({ streak, lastClaim: at(iso) })
  const members: BulkMember[] = [
    { userId: '1', xp: 500, username: 'first', daily: claim('2026-01-01T00:00:00Z', 3) },
    { userId: '2', xp: 70 },
    ...filler.slice(0, 100),
    { userId: '1', xp: 20 },                        // same batch: XP only
    { userId: '2', xp: 0, username: 'two' },
    ...filler.slice(100),
    { userId: '1', xp: 9000, username: 'last' },   // a later batch
    { userId: '2', xp: 35, daily: claim('2026-02-02T02:02:02Z', 1) },
    { userId: '3', xp: 1 },
    { userId: '3', xp: 1 }
  ]
  t.equal(await writer.bulkSetMembers(g, members), filler.length + 3, 'returns the distinct members set')
  const k = keys.guild(g)
  const board = await boardOf(redis, k)
  const records = await recordsOf(redis, k)
  t.equal(board.get('1'), 9000)
  t.same(records.get('1'), { streak: 3, lastClaim: Date.parse('2026-01-01T00:00:00Z'), username: 'last' })
  t.equal(board.get('2'), 35)
  t.same(records.get('2'), { streak: 1, lastClaim: Date.parse('2026-02-02T02:02:02Z'), username: 'two' })
  t.equal(board.get('3'), 1)
  t.equal(board.size, filler.length + 3)
  await checkExact(t, redis, g, 'repeats')
})

t.test('a member not given a username or daily record keeps the stored ones', async (t) => {
  const g = newGuild()
  await writer.setXp({ guildId: g, userId: '10', xp: 100, username: 'keeper' })
  await writer.claimDaily({ guildId: g, userId: '10', at: at('2026-03-01T12:00:00Z') })
  await writer.claimDaily({ guildId: g, userId: '10', at: at('2026-03-02T12:00:00Z') })
  const k = keys.guild(g)
  const stored = { streak: 2, lastClaim: Date.parse('2026-03-02T12:00:00Z'), username: 'keeper' }
  t.same((await recordsOf(redis, k)).get('10'), stored)

  await writer.bulkSetMembers(g, [{ userId: '10', xp: 5 }])
  t.same((await recordsOf(redis, k)).get('10'), stored, 'XP only: the whole record is kept')
  await writer.bulkSetMembers(g, [{ userId: '10', xp: 6, username: 'renamed' }])
  t.same((await recordsOf(redis, k)).get('10'), { ...stored, username: 'renamed' }, 'a username only: the daily record is kept')
  await writer.bulkSetMembers(g, [{ userId: '10', xp: 7, daily: { streak: 9, lastClaim: at('2026-04-01T00:00:00Z') } }])
  t.same((await recordsOf(redis, k)).get('10'), { streak: 9, lastClaim: Date.parse('2026-04-01T00:00:00Z'), username: 'renamed' }, 'a daily record only: the username is kept')
  t.equal((await boardOf(redis, k)).get('10'), 7)

  // The records the single-member scripts keep on working from.
  await t.rejects(writer.claimDaily({ guildId: g, userId: '10', at: at('2026-04-01T20:00:00Z') }), DailyClaimRefusedError, 'the daily record set in bulk counts: same day refused')
  t.equal((await writer.claimDaily({ guildId: g, userId: '10', at: at('2026-04-02T08:00:00Z') })).streak, 10, 'and the next day extends it')
  await checkExact(t, redis, g, 'kept records')
})

t.test('idempotent: the same call again leaves the board, records and stats byte for byte the same; only the version moves', async (t) => {
  const g = newGuild()
  const members = crowd(new Random(4), BULK_BATCH + 333)
  await writer.bulkSetMembers(g, members)
  const k = keys.guild(g)
  const data = async () => await snapshot(raw, `${keys.prefix}:{${g}}:*`)
  const first = await data()
  const version = await raw.get(k.version)
  t.equal(await writer.bulkSetMembers(g, members), members.length)
  const second = await data()
  for (const key of [k.board, k.members, k.stats]) t.same(second[key], first[key], `${key} unchanged`)
  t.not(await raw.get(k.version), version, 'the version moved')
  t.same(Object.keys(second).sort(), Object.keys(first).sort(), 'no key added or removed')
  await checkExact(t, redis, g, 'rerun')
})

/**
 * Two bulk calls (one overlapping the other's members) while other connections award, set,
 * remove, claim and rename some of the same members. Members only the bulk calls touch must end
 * as given; everything must stay exact.
 */
async function mixedWorkload (t: Test, clients: RedisClient[], guildId: string, seed: number): Promise<void> {
  const random = new Random(seed)
  const writers = clients.map((c) => new LeaderboardWriter(c, keys))
  await Promise.all(writers.map(async (w) => await w.configureGuild(guildId, { curve: 'linear' }))) // every connection is up
  // More batches than the writer keeps in flight (2 calls x BULK_IN_FLIGHT x BULK_BATCH), so later
  // batches go out while the single writes are queued, and Redis runs them in between.
  const bulkOnly = crowd(random, 7000, 7_000_000_000_000n)
  const shared = crowd(random, 1500, 9_000_000_000_000n)
  const sharedIds = shared.map((m) => m.userId)
  let bulkInFlight = true
  let landedDuringBulk = 0
  let singles = 0
  let landed = 0
  const single = async (w: LeaderboardWriter, i: number): Promise<void> => {
    const userId = random.pick(sharedIds)
    const roll = random.next()
    try {
      if (roll < 0.35) await w.awardXp({ guildId, userId, xp: random.int(1, 5000), username: random.next() < 0.3 ? `award ${i}` : undefined })
      else if (roll < 0.55) await w.setXp({ guildId, userId, xp: random.next() < 0.2 ? 0 : random.int(1, 10_000_000) })
      else if (roll < 0.7) await w.removeMember({ guildId, userId })
      else if (roll < 0.85) await w.claimDaily({ guildId, userId, at: new Date(Date.UTC(2026, 0, 1) + random.int(0, 400) * DAY) })
      else await w.setUsername({ guildId, userId, username: `renamed ${i}` })
    } catch (err) {
      if (!(err instanceof DailyClaimRefusedError) && !(err instanceof XpLimitError)) throw err
    }
    landed++
    if (bulkInFlight) landedDuringBulk++
  }
  // Loops of single writes on the other connections, started first and kept going for as long
  // as the bulk calls run (and for 1500 writes at least), so the two really interleave. The bulk
  // calls start once the loops have landed a write each: a connection's first write pays its
  // first calls (the settings, the award functions' library), which the whole bulk can outrun.
  const more = (): boolean => bulkInFlight || singles < 1500 // bulkInFlight turns false when the bulk calls end
  const loops = Array.from({ length: 8 }, async (_, loop) => {
    const w = writers[1 + loop % (writers.length - 1)] as LeaderboardWriter
    while (more()) await single(w, singles++)
  })
  const bulk = writers[0] as LeaderboardWriter
  while (landed < loops.length) await setImmediatePromise()
  const bulks = Promise.all([
    bulk.bulkSetMembers(guildId, [...bulkOnly.slice(0, 3500), ...shared]),
    bulk.bulkSetMembers(guildId, [...shared.slice(0, 700).map((m) => ({ ...m, xp: m.xp === MAX_XP ? 0 : m.xp + 1 })), ...bulkOnly.slice(3500)])
  ]).finally(() => { bulkInFlight = false })
  await Promise.all([bulks, ...loops])
  t.ok(landedDuringBulk > 0, `single writes landed while the bulk calls ran (${landedDuringBulk} of ${singles})`)
  const k = keys.guild(guildId)
  const board = await boardOf(clients[0] as RedisClient, k)
  const records = await recordsOf(clients[0] as RedisClient, k)
  const wrong = bulkOnly.filter((m) => {
    const want = expectedRecord(m)
    const got = records.get(m.userId) ?? { streak: 0, lastClaim: null, username: null }
    return board.get(m.userId) !== m.xp || got.streak !== want.streak || got.lastClaim !== want.lastClaim || got.username !== want.username
  }).map((m) => m.userId)
  t.same(wrong, [], `guild ${guildId}: members only the bulk calls wrote hold what they were given`)
  await checkExact(t, clients[0] as RedisClient, guildId, `guild ${guildId} after concurrent writes`)
}

t.test('mixed with concurrent single writes from other connections, the aggregates stay exact', async (t) => {
  const { server } = await redisFixture(t, 'bulk-mixed')
  const clients = Array.from({ length: 3 }, () => createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 20_000 }))
  t.teardown(() => { for (const c of clients) c.disconnect() })
  await mixedWorkload(t, clients, '4242', 5)
})

t.test('on a 3-master cluster: two servers in different slots on different nodes, each exact', async (t) => {
  const cluster = await RedisCluster.start(3)
  t.teardown(async () => { await cluster.close() })
  const clients = Array.from({ length: 3 }, () => createRedis({ url: cluster.url, cluster: true, offlineQueue: true, commandTimeoutMs: 20_000 }))
  t.teardown(() => { for (const c of clients) c.disconnect() })
  const probe = new Redis(cluster.nodes[0]?.url ?? '')
  t.teardown(() => { probe.disconnect() })
  const owners = await probe.cluster('SLOTS')
  const nodeOf = async (guildId: string): Promise<number> => {
    const slot = await probe.cluster('KEYSLOT', keys.guild(guildId).board) as number
    return Number(owners.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1])
  }
  const guilds: string[] = []
  const ports = new Set<number>()
  for (let candidate = 1; guilds.length < 2; candidate++) {
    const port = await nodeOf(String(candidate))
    if (!ports.has(port)) {
      ports.add(port)
      guilds.push(String(candidate))
    }
  }
  await Promise.all(guilds.map(async (g, i) => { await mixedWorkload(t, clients, g, 6 + i) }))
})

t.test('bad input is refused with InvalidParameterError before anything is written', async (t) => {
  const g = newGuild()
  await writer.bulkSetMembers(g, crowd(new Random(7), 10))
  const good = crowd(new Random(8), 2 * BULK_BATCH, 10n ** 15n)
  const bad: Array<[string, unknown]> = [
    ['a user id with a leading zero', { userId: '0123', xp: 1 }],
    ['an empty user id', { userId: '', xp: 1 }],
    ['a user id of 21 digits', { userId: '123456789012345678901', xp: 1 }],
    ['a user id that is a number', { userId: 123, xp: 1 }],
    ['XP below 0', { userId: '5', xp: -1 }],
    ['XP past MAX_XP', { userId: '5', xp: MAX_XP + 1 }],
    ['XP not an integer', { userId: '5', xp: 1.5 }],
    ['XP as a string', { userId: '5', xp: '5' }],
    ['XP NaN', { userId: '5', xp: NaN }],
    ['a blank username', { userId: '5', xp: 1, username: '   ' }],
    ['a username of 101 characters', { userId: '5', xp: 1, username: 'x'.repeat(101) }],
    ['a username with a newline', { userId: '5', xp: 1, username: 'a\nb' }],
    ['a streak of 0', { userId: '5', xp: 1, daily: { streak: 0, lastClaim: at('2026-01-01T00:00:00Z') } }],
    ['a streak of 1.5', { userId: '5', xp: 1, daily: { streak: 1.5, lastClaim: at('2026-01-01T00:00:00Z') } }],
    ['an invalid claim date', { userId: '5', xp: 1, daily: { streak: 1, lastClaim: new Date(NaN) } }],
    ['a claim date before 1970', { userId: '5', xp: 1, daily: { streak: 1, lastClaim: new Date(-1) } }],
    ['a claim date that is not a Date', { userId: '5', xp: 1, daily: { streak: 1, lastClaim: '2026-01-01' } }],
    ['null', null]
  ]
  for (const [what, member] of bad) {
    const before = await snapshot(raw)
    await t.rejects(writer.bulkSetMembers(g, [...good, member as BulkMember]), InvalidParameterError, `${what}, after ${good.length} good members`)
    t.same(await snapshot(raw), before, `${what}: Redis unchanged, the good members included`)
  }
  const before = await snapshot(raw)
  await t.rejects(writer.bulkSetMembers('0123', good), InvalidParameterError, 'a bad guild id')
  await t.rejects(writer.bulkSetMembers(g, 'members' as unknown as BulkMember[]), InvalidParameterError, 'members not an array')
  t.same(await snapshot(raw), before, 'Redis unchanged')
  t.equal(await writer.bulkSetMembers(g, []), 0, 'no members: nothing to do')
  t.equal(await raw.zcard(keys.guild(g).board), 10, 'the server kept its members')
})
