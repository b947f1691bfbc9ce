// The per-server data version (src/redis/commands/includes/version.lua) that ETags and response
// caches key on: every kind of write moves it, atomically with the write; a refused write leaves
// it, and the server's data, as they were; it never repeats, even after the data is deleted.
import t, { type Test } from 'tap'
import { commandCalls, redisFixture } from './helpers/redis-server.js'
import { redisNow } from '../src/redis/client.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { BULK_BATCH, LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { MAX_XP } from '../src/levels/curves.js'
import { DailyClaimRefusedError, XpLimitError } from '../src/errors.js'

const { redis, raw, keys } = await redisFixture(t, 'ver')
const writer = new LeaderboardWriter(redis, keys)
const reader = new LeaderboardReader(redis, keys)

let lastGuild = 6000
const newGuild = (): string => String(++lastGuild)

async function version (guildId: string): Promise<bigint> {
  return BigInt(await raw.get(keys.guild(guildId).version) ?? '0')
}

/** The server's data keys, byte for byte (the version among them). */
async function data (guildId: string): Promise<Record<string, string | null>> {
  const k = keys.guild(guildId)
  const out: Record<string, string | null> = {}
  for (const key of [k.board, k.members, k.stats, k.settings, k.version]) out[key] = (await raw.dumpBuffer(key))?.toString('hex') ?? null
  return out
}

/** A server with a few members, one of whom claimed today. */
async function populated (): Promise<string> {
  const g = newGuild()
  await writer.setXp({ guildId: g, userId: '1', xp: MAX_XP - 5, username: 'one' })
  await writer.awardXp({ guildId: g, userId: '2', xp: 50 })
  await writer.claimDaily({ guildId: g, userId: '3' })
  return g
}

t.test('every kind of write moves the version forward: award, set XP, rename, remove, daily claim, curve, multiplier, bulk', async (t) => {
  const g = await populated()
  const writes: Array<[string, () => Promise<unknown>]> = [
    ['award', async () => await writer.awardXp({ guildId: g, userId: '2', xp: 5 })],
    ['award creating a member', async () => await writer.awardXp({ guildId: g, userId: '20', xp: 5 })],
    ['award adding 0 XP (multiplier 0.01)', async () => {
      await writer.configureGuild(g, { multiplier: 0.01 })
      const before = await version(g)
      await writer.awardXp({ guildId: g, userId: '2', xp: 1 })
      if (await version(g) <= before) throw new Error('an award of 0 XP did not move the version')
      await writer.configureGuild(g, { multiplier: 1 })
    }],
    ['set XP', async () => await writer.setXp({ guildId: g, userId: '2', xp: 777 })],
    ['set XP to the XP held', async () => await writer.setXp({ guildId: g, userId: '2', xp: 777 })],
    ['rename', async () => await writer.setUsername({ guildId: g, userId: '2', username: 'two' })],
    ['daily claim', async () => await writer.claimDaily({ guildId: g, userId: '2' })],
    ['daily claim creating a member', async () => await writer.claimDaily({ guildId: g, userId: '21' })],
    ['remove', async () => await writer.removeMember({ guildId: g, userId: '21' })],
    ['curve', async () => { await writer.configureGuild(g, { curve: 'flat' }) }],
    ['multiplier', async () => { await writer.configureGuild(g, { multiplier: '2.5' }) }],
    ['bulk set', async () => await writer.bulkSetMembers(g, [{ userId: '30', xp: 3, username: 'bulk' }])],
    ['bulk set changing nothing', async () => await writer.bulkSetMembers(g, [{ userId: '30', xp: 3, username: 'bulk' }])]
  ]
  for (const [what, write] of writes) {
    const before = await version(g)
    await write()
    const after = await version(g)
    t.ok(after > before, `${what}: ${before} -> ${after}`)
  }
})

t.test('a bulk write moves the version once per batch', async (t) => {
  const g = await populated()
  const before = await version(g)
  const sets = await commandCalls(raw, 'set') // a bump is the script's one SET
  const members = Array.from({ length: 2 * BULK_BATCH + 1 }, (_, i) => ({ userId: String(1000 + i), xp: i }))
  await writer.bulkSetMembers(g, members)
  t.equal(await commandCalls(raw, 'set') - sets, 3, `${members.length} members in batches of ${BULK_BATCH}: three bumps`)
  t.ok(await version(g) > before, 'and the version moved forward')
})

async function unchanged (t: Test, guildId: string, what: string, write: () => Promise<unknown>, refusal?: new (...args: never[]) => Error): Promise<void> {
  const before = await data(guildId)
  if (refusal === undefined) await write()
  else await t.rejects(write(), refusal, what)
  t.same(await data(guildId), before, `${what}: the version and the data are as they were`)
}

t.test('refused writes leave the version (and the data) as they were', async (t) => {
  const g = await populated()
  const now = await redisNow(raw)
  await unchanged(t, g, 'a second daily claim the same UTC day', async () => await writer.claimDaily({ guildId: g, userId: '3' }), DailyClaimRefusedError)
  await unchanged(t, g, 'a daily claim dated before the last', async () => await writer.claimDaily({ guildId: g, userId: '3', at: new Date(now - 3 * 86_400_000) }), DailyClaimRefusedError)
  await unchanged(t, g, 'a daily claim dated an hour ahead', async () => await writer.claimDaily({ guildId: g, userId: '4', at: new Date(now + 3_600_000) }), DailyClaimRefusedError)
  await unchanged(t, g, 'an award past the XP limit', async () => await writer.awardXp({ guildId: g, userId: '1', xp: 6, username: 'too much' }), XpLimitError)
  await unchanged(t, g, 'removing a non-member', async () => {
    if (await writer.removeMember({ guildId: g, userId: '99' })) throw new Error('removed a non-member')
  })
  await unchanged(t, g, 'renaming a non-member', async () => {
    if (await writer.setUsername({ guildId: g, userId: '99', username: 'ghost' })) throw new Error('renamed a non-member')
  })
})

t.test('the version of a server follows Redis\'s clock in microseconds, so it never repeats after the data is deleted', async (t) => {
  const g = newGuild()
  t.equal(await version(g), 0n, 'no version before the first write')
  t.equal((await reader.readStats(g)).version, '0', 'the reader says "0" for a server never written')
  const from = BigInt(await redisNow(raw)) * 1000n
  await writer.setXp({ guildId: g, userId: '1', xp: 10 })
  const to = BigInt(await redisNow(raw) + 1) * 1000n
  const first = await version(g)
  t.ok(first >= from && first <= to, `the first version ${first} is Redis's time in µs, within [${from}, ${to}]`)
  await writer.setXp({ guildId: g, userId: '1', xp: 11 })
  const second = await version(g)
  const secondTo = BigInt(await redisNow(raw) + 1) * 1000n
  t.ok(second > first && second <= secondTo, `then it follows Redis's clock: ${second} in (${first}, ${secondTo}]`)

  await raw.del(...Object.values(keys.guild(g)))
  await writer.setXp({ guildId: g, userId: '1', xp: 10 })
  t.ok(await version(g) > first + 1n, 'written again after a delete, the server gets a version it never had')
})

t.test('a stored version ahead of Redis\'s clock (a Redis whose clock is behind the one that wrote it) is counted on from, never written again', async (t) => {
  const g = newGuild()
  await writer.awardXp({ guildId: g, userId: '1', xp: 10 })
  const ahead = BigInt(await redisNow(raw)) * 1000n + 3_600_000_000n // an hour past Redis's clock, in µs
  await raw.set(keys.guild(g).version, ahead.toString())
  await writer.awardXp({ guildId: g, userId: '1', xp: 10 })
  t.equal(await version(g), ahead + 1n, 'a single award: one past it')
  await writer.awardMany(g, [{ userId: '2', xp: 5 }, { userId: '3', xp: 5 }])
  t.equal(await version(g), ahead + 2n, 'a batch')
  await writer.setXp({ guildId: g, userId: '1', xp: 500 })
  t.equal(await version(g), ahead + 3n, 'a set')
})

t.test('reads carry the version they were made at', async (t) => {
  const g = await populated()
  const stored = String(await version(g))
  t.equal((await reader.readPage(g, 1, 10)).version, stored, 'a page')
  t.equal((await reader.readMember(g, '2')).version, stored, 'a member')
  t.equal((await reader.readMember(g, '99')).version, stored, 'a non-member')
  t.equal((await reader.readStats(g)).version, stored, 'the stats')
  await writer.awardXp({ guildId: g, userId: '2', xp: 1 })
  t.not((await reader.readPage(g, 1, 10)).version, stored, 'and a read after a write sees the new one')
})

t.test('version reads of one event-loop turn share one GET per server; a read in a later turn sees a write made between', async (t) => {
  const [g, h] = [await populated(), await populated()]
  const before = await commandCalls(raw, 'get')
  const read = await Promise.all(Array.from({ length: 10 }, async (_, i) => await reader.version(i % 2 === 0 ? g : h)))
  t.equal(await commandCalls(raw, 'get') - before, 2, 'ten reads on two servers: two GETs')
  t.same(read.filter((_, i) => i % 2 === 0), Array<string>(5).fill(String(await version(g))), 'the five reads of one server name its stored version')
  t.same(read.filter((_, i) => i % 2 === 1), Array<string>(5).fill(String(await version(h))), 'and those of the other, its own')
  await writer.awardXp({ guildId: g, userId: '2', xp: 1 })
  t.equal(await reader.version(g), String(await version(g)), 'after a write, the next read has the new version')
  t.not(await reader.version(g), read[0])
})

t.test('a version read that fails in a turn fails only its own server\'s reads, not the other servers\' of that turn', async (t) => {
  const [good, bad] = [await populated(), newGuild()]
  await raw.hset(keys.guild(bad).version, 'not', 'a string') // GET answers WRONGTYPE for this server alone
  const reads = await Promise.allSettled([reader.version(good), reader.version(bad), reader.version(good)])
  t.same(reads.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled'], 'the failing server\'s read is rejected, the others are answered')
  t.equal((reads[0] as PromiseFulfilledResult<string>).value, String(await version(good)))
  t.match((reads[1] as PromiseRejectedResult).reason, { message: /WRONGTYPE/ })
})
