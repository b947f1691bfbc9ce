// The in-place migration from schema 1 (names, streaks and claims in three hashes keyed by
// user_id) to schema 2 (one record per member, keyed by board member, and a data version), on a
// single redis-server and on a 3-master cluster: schema-1 data written with plain commands, as
// the old release left it, must read back through the reader exactly as it meant, once migrated.
import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { RedisCluster, RedisServer, redisFixture } from './helpers/redis-server.js'
import { type Snapshot, snapshot } from './helpers/redis-snapshot.js'
import { createRedis, redisNow, type RedisClient } from '../src/redis/client.js'
import { boardMember, KeyBuilder, SCHEMA_VERSION } from '../src/redis/keys.js'
import { migrate, schemaVersion } from '../src/redis/migrate.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { type Curve, CURVES, levelForXp, levelProgress } from '../src/levels/curves.js'
import { MemberNotFoundError } from '../src/errors.js'

const DAY = 86_400_000

interface LegacyMember {
  userId: string
  xp: number
  name?: string
  streak?: number
  claim?: number
}

interface LegacyGuild {
  guildId: string
  curve?: Curve
  members: LegacyMember[]
  /** Names left in schema 1 for users no longer on the board: not members, not moved. */
  strays?: Record<string, string>
}

/** Three kinds of server, with claims around `now`: alive (today, yesterday) and lapsed. */
function legacyGuilds (now: number, ids: string[]): LegacyGuild[] {
  const today = Math.floor(now / DAY) * DAY
  const claimAt = [today, today - DAY + 5 * 3_600_000, today - 10 * DAY, now - 1]
  const [named = '', nameless = '', mixed = ''] = ids
  return [
    {
      guildId: named,
      curve: 'linear',
      // Everyone named; some claimed. Ties at 500 XP, ids of different lengths.
      members: Array.from({ length: 23 }, (_, i) => ({
        userId: String(i < 5 ? 95 + i : 18_000_000_000_000_000_000n - BigInt(i) * 1_234_567n),
        xp: i % 4 === 0 ? 500 : 37 * i * i,
        name: i === 7 ? 'Zoë: the:colon' : `member ${i}`,
        ...(i % 3 === 0 ? { streak: 1 + i, claim: claimAt[i % claimAt.length] } : {})
      }))
    },
    {
      guildId: nameless,
      // Nobody named, nobody claimed: nothing to move but the server itself.
      members: Array.from({ length: 12 }, (_, i) => ({ userId: String(4000 + i), xp: i * 1000 }))
    },
    {
      guildId: mixed,
      curve: 'flat',
      // Half named; claims with and without names; members with 0 XP that only claimed.
      members: Array.from({ length: 31 }, (_, i) => ({
        userId: String(700 + 13 * i),
        xp: i % 5 === 0 ? 0 : 1000 * i + 1,
        ...(i % 2 === 0 ? { name: `m${i}` } : {}),
        ...(i % 5 === 0 || i % 7 === 0 ? { streak: 1 + (i % 4), claim: claimAt[i % claimAt.length] } : {})
      })),
      strays: { 999999: 'left long ago', 12: 'also gone' }
    }
  ]
}

/** Writes a server as the schema-1 release kept it, with plain commands. */
async function writeLegacy (redis: RedisClient, keys: KeyBuilder, guild: LegacyGuild): Promise<void> {
  const k = keys.guild(guild.guildId)
  const legacy = keys.legacyGuild(guild.guildId)
  await redis.zadd(k.board, ...guild.members.flatMap((m) => [m.xp, boardMember(m.userId)]))
  const names = Object.fromEntries(guild.members.filter((m) => m.name !== undefined).map((m) => [m.userId, m.name as string]))
  Object.assign(names, guild.strays ?? {})
  if (Object.keys(names).length > 0) await redis.hset(legacy.names, names)
  const claimed = guild.members.filter((m) => m.claim !== undefined)
  if (claimed.length > 0) {
    await redis.hset(legacy.streaks, Object.fromEntries(claimed.map((m) => [m.userId, String(m.streak)])))
    await redis.hset(legacy.claims, Object.fromEntries(claimed.map((m) => [m.userId, String(m.claim)])))
  }
  const xps = guild.members.map((m) => m.xp)
  await redis.hset(k.stats, {
    xp_total: xps.reduce((a, b) => a + b, 0),
    members_with_xp: xps.filter((x) => x > 0).length,
    ...Object.fromEntries(CURVES.map((c) => [`level_sum:${c}`, xps.reduce((a, x) => a + levelForXp(c, x), 0)]))
  })
  if (guild.curve !== undefined) await redis.hset(k.settings, 'curve', guild.curve)
}

/** The contract's order: XP descending, then user_id ascending as numbers. */
function ranked (guild: LegacyGuild): LegacyMember[] {
  return [...guild.members].sort((a, b) => b.xp - a.xp || (BigInt(a.userId) < BigInt(b.userId) ? -1 : 1))
}

/** Every member's record, the reader's pages, members and stats against what the schema-1 data meant. */
async function checkGuild (t: Test, redis: RedisClient, keys: KeyBuilder, guild: LegacyGuild): Promise<void> {
  const k = keys.guild(guild.guildId)
  const legacy = keys.legacyGuild(guild.guildId)
  const g = guild.guildId

  const records = await redis.hgetall(k.members)
  const expected = Object.fromEntries(guild.members
    .filter((m) => m.name !== undefined || m.claim !== undefined)
    .map((m) => [boardMember(m.userId), `${m.streak ?? ''}:${m.claim ?? ''}:${m.name ?? ''}`]))
  t.same(records, expected, `${g}: one record per member with a name or a claim, "<streak>:<claim>:<name>", keyed by board member; strays dropped`)
  t.equal(await redis.exists(legacy.names, legacy.streaks, legacy.claims), 0, `${g}: the schema-1 hashes are gone`)

  const reader = new LeaderboardReader(redis, keys)
  const curve = guild.curve ?? 'mee6'
  const order = ranked(guild)
  const entries = order.map((m, i) => {
    const { level, xp, required } = levelProgress(curve, m.xp)
    return { rank: i + 1, user_id: m.userId, username: m.name ?? m.userId, display_name: null, avatar_url: null, level, xp: m.xp, level_progress: { xp, required }, rank_change: null }
  })
  const pages = []
  for (let page = 1; page <= Math.ceil(order.length / 7) + 1; page++) pages.push(await reader.page(g, page, 7))
  t.same(pages.flatMap((p) => p.data), entries, `${g}: paging through the board gives every member once, in order, with its name and level`)
  t.ok(pages.every((p, i) => p.total === order.length && p.page === i + 1), `${g}: every page has the real total`)

  const { nowMs } = await reader.readMember(g, order[0]?.userId ?? '')
  const wrong: string[] = []
  for (const [i, m] of order.entries()) {
    const alive = m.claim !== undefined && Math.floor(nowMs / DAY) - Math.floor(m.claim / DAY) <= 1
    const want = {
      user_id: m.userId,
      username: m.name ?? m.userId,
      level: levelForXp(curve, m.xp),
      xp: m.xp,
      rank: i + 1,
      daily_streak: alive ? m.streak : 0,
      last_daily_claim: m.claim === undefined ? null : new Date(m.claim).toISOString()
    }
    const got = await reader.member(g, m.userId)
    if (JSON.stringify(got) !== JSON.stringify({ ...got, ...want })) wrong.push(`${m.userId}: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`)
  }
  t.same(wrong, [], `${g}: every member record (rank, name, level, streak, last claim) is what schema 1 meant`)
  for (const stray of Object.keys(guild.strays ?? {})) {
    await t.rejects(reader.member(g, stray), MemberNotFoundError, `${g}: ${stray}, a stray schema-1 name, is not a member`)
  }
  const withXp = guild.members.filter((m) => m.xp > 0)
  const levelSum = BigInt(withXp.reduce((a, m) => a + levelForXp(curve, m.xp), 0))
  t.same(await reader.stats(g), {
    total_members: withXp.length,
    total_xp: guild.members.reduce((a, m) => a + m.xp, 0),
    average_level: withXp.length === 0 ? 0 : Number((2n * levelSum + BigInt(withXp.length)) / (2n * BigInt(withXp.length))),
    xp_curve: curve,
    xp_multiplier: 1,
    name: null,
    icon_url: null
  }, `${g}: the stats`)
}

/** Every key on every node, byte for byte. */
async function snapshotAll (nodes: Redis[]): Promise<Snapshot> {
  const parts = await Promise.all(nodes.map(async (n) => await snapshot(n)))
  return Object.assign({}, ...parts) as Snapshot
}

async function migrationScenario (t: Test, redis: RedisClient, nodes: Redis[], concurrent: boolean): Promise<void> {
  const keys = new KeyBuilder('mig')
  const bystander = new KeyBuilder('other') // another prefix: never touched
  const now = await redisNow(redis)
  const guilds = legacyGuilds(now, ['1100000000000000001', '1100000000000000002', '1100000000000000003'])
  for (const guild of guilds) await writeLegacy(redis, keys, guild)
  await writeLegacy(redis, bystander, guilds[0] as LegacyGuild)
  const untouched = Object.fromEntries(Object.entries(await snapshotAll(nodes)).filter(([key]) => key.startsWith('other:')))
  t.equal(await schemaVersion(redis, keys), 1, 'data and no schema key: schema 1')

  const runs = concurrent
    ? await Promise.all([migrate(redis, keys), migrate(redis, keys)])
    : [await migrate(redis, keys)]
  const moved = guilds.flatMap((g) => g.members).filter((m) => m.name !== undefined || m.claim !== undefined).length
  t.ok(runs.every((r) => r.from === 1 && r.to === SCHEMA_VERSION), 'from schema 1 to 2')
  t.equal(runs.reduce((a, r) => a + r.members, 0), moved, `${moved} member records moved${concurrent ? ', once, by the two runs together' : ''}`)
  t.ok(runs.some((r) => r.guilds === guilds.length), `every server with a board visited (${runs.map((r) => r.guilds).join(', ')})`)
  t.equal(await redis.get(keys.schema), String(SCHEMA_VERSION), 'the schema key says 2')
  t.equal(await schemaVersion(redis, keys), SCHEMA_VERSION)

  for (const guild of guilds) await checkGuild(t, redis, keys, guild)
  for (const guild of guilds) {
    const version = await redis.get(keys.guild(guild.guildId).version)
    const hadLegacy = guild.members.some((m) => m.name !== undefined || m.claim !== undefined)
    if (hadLegacy) t.match(version, /^[1-9]\d{15,}$/, `${guild.guildId}: moved data bumps the data version (${version})`)
    else t.equal(version, null, `${guild.guildId}: nothing to move, no version`)
  }
  const after = await snapshotAll(nodes)
  t.same(Object.fromEntries(Object.entries(after).filter(([key]) => key.startsWith('other:'))), untouched, 'another prefix is left alone')

  const again = await migrate(redis, keys)
  t.same(again, { from: SCHEMA_VERSION, to: SCHEMA_VERSION, guilds: 0, members: 0 }, 'a second run finds nothing to do')
  t.same(await snapshotAll(nodes), after, 'and changes nothing at all')
}

t.test('single redis-server: schema-1 servers (named, nameless, mixed with claims) migrate in place and read as they meant', async (t) => {
  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 10_000 })
  t.teardown(() => { redis.disconnect() })
  const raw = new Redis(server.url)
  t.teardown(() => { raw.disconnect() })
  await migrationScenario(t, redis, [raw], false)
})

t.test('3-master cluster: servers on different nodes migrate, two runs at once move each record once', async (t) => {
  const cluster = await RedisCluster.start(3)
  t.teardown(async () => { await cluster.close() })
  const redis = createRedis({ url: cluster.url, cluster: true, offlineQueue: true, commandTimeoutMs: 10_000 })
  t.teardown(() => { redis.disconnect() })
  const nodes = cluster.nodes.map((n) => new Redis(n.url))
  t.teardown(() => { for (const n of nodes) n.disconnect() })
  // The three servers' slots are served by more than one node, or the scan of every master is not tested.
  const keys = new KeyBuilder('mig')
  const ports = new Set<number>()
  const slots = await (nodes[0] as Redis).cluster('SLOTS')
  for (const id of ['1100000000000000001', '1100000000000000002', '1100000000000000003']) {
    const slot = await (nodes[0] as Redis).cluster('KEYSLOT', keys.guild(id).board) as number
    ports.add(Number(slots.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1]))
  }
  t.ok(ports.size >= 2, `the servers live on ${ports.size} nodes`)
  await migrationScenario(t, redis, nodes, true)
})

t.test('a fresh, empty Redis gets schema 2 and nothing else', async (t) => {
  const { redis, raw, keys } = await redisFixture(t, 'fresh')
  t.equal(await schemaVersion(redis, keys), 0, 'nothing under the prefix: schema 0')
  t.same(await migrate(redis, keys), { from: 0, to: SCHEMA_VERSION, guilds: 0, members: 0 })
  t.same(await raw.keys('*'), [keys.schema], 'only the schema key was written')
  t.equal(await raw.get(keys.schema), String(SCHEMA_VERSION))
  t.same(await migrate(redis, keys), { from: SCHEMA_VERSION, to: SCHEMA_VERSION, guilds: 0, members: 0 }, 'and again: nothing to do')
})

t.test('data newer than this code is refused, untouched', async (t) => {
  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  const redis = createRedis({ url: server.url, offlineQueue: true })
  t.teardown(() => { redis.disconnect() })
  const keys = new KeyBuilder('future')
  await redis.set(keys.schema, String(SCHEMA_VERSION + 1))
  await t.rejects(migrate(redis, keys), /newer than this code/)
  t.equal(await redis.get(keys.schema), String(SCHEMA_VERSION + 1))
})
