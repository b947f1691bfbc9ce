// Who is shown, at a bot's join and leave sync's size: one setVisibilityMany call (the write
// API's batch, POST /servers/{g}/visibility, is this call) hiding 10,000 members of a seeded
// board, then one showing them again, timed, against a throwaway redis-server; after each, the
// whole visible board is read back and compared with a model of it (every rank exact, hidden
// members on no page, the total and the aggregates the shown members' own).
//
//   npx tsx scripts/bench-visibility.ts [--members N] [--changes N] [--rounds R]
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { boardMember, KeyBuilder, userIdFromBoardMember } from '../src/redis/keys.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { seedGuild } from '../src/seed/seed-guild.js'
import { benchRedis, type Cleanups, runBenchmark } from './run-benchmark.js'

const { values: args } = parseArgs({
  options: {
    members: { type: 'string', default: '100000' },
    changes: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '5' }
  }
})
const MEMBERS = Number(args.members)
const CHANGES = Number(args.changes)
const ROUNDS = Number(args.rounds)
const GUILD = '400000000000000002'

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN

async function main (cleanups: Cleanups): Promise<void> {
  const { redis } = await benchRedis(cleanups, 'visibility')

  const keys = new KeyBuilder()
  const writer = new LeaderboardWriter(redis, keys)
  const reader = new LeaderboardReader(redis, keys)
  await seedGuild(writer, { guildId: GUILD, members: MEMBERS, seed: 'visibility' })
  const k = keys.guild(GUILD)
  // The model: every member and its XP, in board order (XP descending, ties by id as the board orders them).
  const flat = await redis.zrevrange(k.board, 0, -1, 'WITHSCORES')
  const all: Array<{ userId: string, xp: number }> = []
  for (let i = 0; i < flat.length; i += 2) all.push({ userId: userIdFromBoardMember(flat[i] as string), xp: Number(flat[i + 1]) })
  const statsBefore = await reader.stats(GUILD)
  console.log(`seeded ${fmt(MEMBERS)} members; each round hides ${fmt(CHANGES)} of them (every ${Math.floor(MEMBERS / CHANGES)}th, the top one among them) in one call, then shows them in one\n`)

  /** Reads the whole visible board back and compares it with the model of what is shown. */
  const check = async (hidden: Set<string>, what: string): Promise<void> => {
    const expected = all.filter((m) => !hidden.has(m.userId))
    const { total } = await reader.page(GUILD, 1, 1)
    if (total !== expected.length) throw new Error(`${what}: total ${total}, expected ${expected.length}`)
    const shown = await redis.zrevrange(k.board, 0, expected.length - 1, 'WITHSCORES')
    for (let i = 0; i < expected.length; i++) {
      const e = expected[i] as { userId: string, xp: number }
      if (shown[2 * i] !== boardMember(e.userId) || Number(shown[2 * i + 1]) !== e.xp) throw new Error(`${what}: rank ${i + 1} is not ${e.userId}`)
    }
    const sample = expected.filter((_, i) => i % Math.max(1, Math.floor(expected.length / 100)) === 0)
    const { data } = (await reader.readMembers(GUILD, sample.slice(0, 100).map((m) => m.userId))).value
    for (const m of data) {
      if (m.rank !== expected.findIndex((e) => e.userId === m.user_id) + 1) throw new Error(`${what}: ${m.user_id}'s record says rank ${m.rank}`)
    }
    const stats = await reader.stats(GUILD)
    const xp = expected.reduce((sum, m) => sum + m.xp, 0)
    const withXp = expected.filter((m) => m.xp > 0).length // total_members counts members with XP
    if (stats.total_members !== withXp || stats.total_xp !== xp) throw new Error(`${what}: stats ${stats.total_members} members, ${stats.total_xp} XP`)
  }

  const hides: number[] = []
  const shows: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    // A different tenth each round, the first member among them at rank `round + 1`.
    const step = Math.floor(MEMBERS / CHANGES)
    const chosen = Array.from({ length: CHANGES }, (_, i) => all[(round + i * step) % all.length]?.userId as string)
    const hidden = new Set(chosen)
    let started = performance.now()
    await writer.setVisibilityMany(GUILD, chosen.map((userId) => ({ userId, visible: false, reason: 'left' })))
    hides.push(performance.now() - started)
    await check(hidden, `round ${round + 1}, hidden`)
    started = performance.now()
    await writer.setVisibilityMany(GUILD, chosen.map((userId) => ({ userId, visible: true })))
    shows.push(performance.now() - started)
    await check(new Set(), `round ${round + 1}, shown`)
    console.log(`round ${round + 1}: hide ${fmt(hides[round] ?? NaN)} ms, show ${fmt(shows[round] ?? NaN)} ms; every rank, the total and the stats exact after each`)
  }
  const statsAfter = await reader.stats(GUILD)
  if (JSON.stringify(statsAfter) !== JSON.stringify(statsBefore)) throw new Error('the stats moved over hide and show')
  console.log(`\n${fmt(CHANGES)} changes in one call on a board of ${fmt(MEMBERS)}: hide median ${fmt(median(hides))} ms (max ${fmt(Math.max(...hides))}), ` +
    `show median ${fmt(median(shows))} ms (max ${fmt(Math.max(...shows))}); load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
}

await runBenchmark(main)
