// The three XP curves of CONTRACT.md and a server's custom curve, pinned twice:
// src/levels/curves.ts against thresholds the test sums itself from the contract's per-level
// formula (a custom curve: against a count of its thresholds), and the Lua twin
// (src/redis/commands/includes/levels.lua) against curves.ts, inside a real redis-server.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { Redis } from 'ioredis'
import { RedisServer } from './helpers/redis-server.js'
import { Random } from '../src/random.js'
import { createRedis } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { LeaderboardWriter } from '../src/writer/leaderboard-writer.js'
import { type Curve, CURVES, type CustomCurve, levelForXp, levelProgress, MAX_XP, xpForLevel, xpToNextLevel } from '../src/levels/curves.js'
import { buildTestApp } from './helpers/app.js'

/** XP from level l to l + 1, exactly as the table in CONTRACT.md writes it. */
const perLevel: Record<Curve, (l: bigint) => bigint> = {
  mee6: (l) => 5n * l * l + 50n * l + 100n,
  linear: (l) => 100n * l + 75n,
  flat: () => 1000n
}

/**
 * thresholds[L] = XP needed to reach level L, summed term by term, for every L whose threshold
 * is at most MAX_XP (and one more), or the first `cap` levels when that is fewer.
 */
function thresholds (curve: Curve, cap = Infinity): bigint[] {
  const out = [0n]
  let total = 0n
  for (let l = 0n; out.length <= cap && total <= BigInt(MAX_XP); l++) {
    total += perLevel[curve](l)
    out.push(total)
  }
  return out
}

// mee6 and linear reach MAX_XP within ~8,500 and ~141,500 levels; flat needs 10^9 levels, so its
// table stops early and its large thresholds are sums of L equal terms of 1000.
const TABLES: Record<Curve, bigint[]> = {
  mee6: thresholds('mee6'),
  linear: thresholds('linear'),
  flat: thresholds('flat', 200_000)
}

function threshold (curve: Curve, level: number): bigint {
  const table = TABLES[curve]
  if (level < table.length) return table[level] as bigint
  if (curve !== 'flat') throw new Error(`no threshold for ${curve} level ${level}`)
  return 1000n * BigInt(level)
}

/** The contract's level: the largest L with threshold(L) <= xp, found by walking the table. */
function contractLevel (curve: Curve, xp: bigint): number {
  if (curve === 'flat') return Number(xp / 1000n)
  const table = TABLES[curve]
  let lo = 0
  let hi = table.length - 1
  if ((table[hi] as bigint) <= xp) throw new Error('table too short')
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1
    if ((table[mid] as bigint) <= xp) lo = mid
    else hi = mid
  }
  return lo
}

const random = new Random(20240611)
const randomXp = (max: number): number => random.int(0, max)

/**
 * The thresholds of the table up to MAX_XP, each with one XP below and above it: every one up to
 * level `dense`, every `stride`-th one beyond.
 */
function thresholdPoints (curve: Curve, dense: number, stride = Infinity): number[] {
  const points = new Set<number>()
  TABLES[curve].forEach((x, level) => {
    if ((level > dense && level % stride !== 0) || x > BigInt(MAX_XP)) return
    for (const p of [x - 1n, x, x + 1n]) if (p >= 0n && p <= BigInt(MAX_XP)) points.add(Number(p))
  })
  return [...points]
}

t.test('the XP from level l to l+1 is the contract table: mee6 5l²+50l+100, linear 100l+75, flat 1000', async (t) => {
  for (const curve of CURVES) {
    const wrong: string[] = []
    for (let l = 0; l <= 20_000; l++) {
      const expected = Number(perLevel[curve](BigInt(l)))
      if (xpToNextLevel(curve, l) !== expected) wrong.push(`xpToNextLevel(${l}) = ${xpToNextLevel(curve, l)}, want ${expected}`)
      const step = xpForLevel(curve, l + 1) - xpForLevel(curve, l)
      if (step !== expected) wrong.push(`xpForLevel(${l + 1}) - xpForLevel(${l}) = ${step}, want ${expected}`)
    }
    t.same(wrong.slice(0, 10), [], `${curve}: per-level XP for l = 0..20000`)
  }
  // A few values worked out by hand, so a wrong transcription of the table above cannot hide.
  t.same([0, 1, 2, 10].map((l) => xpToNextLevel('mee6', l)), [100, 155, 220, 1100])
  t.same([0, 1, 2, 10].map((l) => xpToNextLevel('linear', l)), [75, 175, 275, 1075])
  t.same([0, 1, 2, 10].map((l) => xpToNextLevel('flat', l)), [1000, 1000, 1000, 1000])
  t.same([1, 2, 3, 4].map((l) => Number(threshold('mee6', l))), [100, 255, 475, 770])
  t.same([1, 2, 3, 4].map((l) => Number(threshold('linear', l))), [75, 250, 525, 900])
})

t.test('level 0 needs 0 XP: 0 XP is level 0 and one XP short of the first threshold is still level 0', async (t) => {
  for (const curve of CURVES) {
    t.equal(xpForLevel(curve, 0), 0, `${curve}: xpForLevel(0)`)
    t.equal(levelForXp(curve, 0), 0, `${curve}: 0 XP`)
    t.equal(levelForXp(curve, Number(threshold(curve, 1)) - 1), 0, `${curve}: first threshold - 1`)
    t.equal(levelForXp(curve, Number(threshold(curve, 1))), 1, `${curve}: first threshold`)
  }
})

t.test('levels at, just below and just above each of the first 60 thresholds', async (t) => {
  for (const curve of CURVES) {
    for (let level = 1; level <= 60; level++) {
      const x = Number(threshold(curve, level))
      t.equal(xpForLevel(curve, level), x, `${curve}: level ${level} needs ${x} XP`)
      t.equal(levelForXp(curve, x), level, `${curve}: ${x} XP is level ${level}`)
      t.equal(levelForXp(curve, x - 1), level - 1, `${curve}: ${x - 1} XP is level ${level - 1}`)
      t.equal(levelForXp(curve, x + 1), level, `${curve}: ${x + 1} XP is level ${level}`)
    }
  }
})

t.test('every threshold up to MAX_XP (and sampled large flat ones), at, -1 and +1, gives the contract level', async (t) => {
  const flatLevels = [1_000, 99_999, 1_000_000, 123_456_789, 999_999_999, 1_000_000_000]
  for (const curve of CURVES) {
    const levels = curve === 'flat'
      ? [...Array.from({ length: TABLES.flat.length }, (_, i) => i), ...flatLevels]
      : TABLES[curve].map((_, i) => i).filter((l) => threshold(curve, l) <= BigInt(MAX_XP))
    const wrong: string[] = []
    for (const level of levels) {
      const x = threshold(curve, level)
      if (xpForLevel(curve, level) !== Number(x)) wrong.push(`xpForLevel(${level}) = ${xpForLevel(curve, level)}, want ${x}`)
      for (const [xp, want] of [[x - 1n, level - 1], [x, level], [x + 1n, level]] as const) {
        if (xp < 0n || xp > BigInt(MAX_XP)) continue
        const got = levelForXp(curve, Number(xp))
        if (got !== want) wrong.push(`levelForXp(${xp}) = ${got}, want ${want}`)
      }
    }
    t.ok(levels.length > 1000, `${curve}: ${levels.length} thresholds checked`)
    t.same(wrong.slice(0, 10), [], `${curve}: no level off at any threshold`)
  }
})

t.test('MAX_XP is still exact: its level is the contract level and the top thresholds are exact integers', async (t) => {
  const expected: Record<Curve, number> = { mee6: 0, linear: 0, flat: 0 }
  for (const curve of CURVES) {
    expected[curve] = contractLevel(curve, BigInt(MAX_XP))
    const top = expected[curve]
    t.equal(levelForXp(curve, MAX_XP), top, `${curve}: MAX_XP is level ${top}`)
    t.equal(levelForXp(curve, MAX_XP - 1), contractLevel(curve, BigInt(MAX_XP - 1)), `${curve}: MAX_XP - 1`)
    for (const level of [top - 1, top, top + 1]) {
      t.equal(BigInt(xpForLevel(curve, level)), threshold(curve, level), `${curve}: threshold of level ${level} is exact`)
    }
  }
  // MAX_XP = 10^12 is exactly the flat threshold of level 10^9.
  t.equal(expected.flat, 1_000_000_000)
  t.ok(expected.mee6 > 8000 && expected.linear > 140_000, `mee6 ${expected.mee6}, linear ${expected.linear}`)
})

t.test('level progress: XP within the current level and the XP that level takes, at 0, at a threshold and one below', async (t) => {
  // By hand, from the contract's table (mee6 thresholds 100, 255, 475; linear 75, 250, 525).
  const cases: Array<[Curve, number, { level: number, xp: number, required: number }]> = [
    ['mee6', 0, { level: 0, xp: 0, required: 100 }],
    ['mee6', 99, { level: 0, xp: 99, required: 100 }],
    ['mee6', 100, { level: 1, xp: 0, required: 155 }],
    ['mee6', 254, { level: 1, xp: 154, required: 155 }],
    ['mee6', 255, { level: 2, xp: 0, required: 220 }],
    ['mee6', 474, { level: 2, xp: 219, required: 220 }],
    ['linear', 0, { level: 0, xp: 0, required: 75 }],
    ['linear', 74, { level: 0, xp: 74, required: 75 }],
    ['linear', 75, { level: 1, xp: 0, required: 175 }],
    ['linear', 249, { level: 1, xp: 174, required: 175 }],
    ['linear', 250, { level: 2, xp: 0, required: 275 }],
    ['flat', 0, { level: 0, xp: 0, required: 1000 }],
    ['flat', 999, { level: 0, xp: 999, required: 1000 }],
    ['flat', 1000, { level: 1, xp: 0, required: 1000 }],
    ['flat', 123_456, { level: 123, xp: 456, required: 1000 }]
  ]
  for (const [curve, xp, expected] of cases) t.same(levelProgress(curve, xp), expected, `${curve} at ${xp} XP`)
  // And at every threshold of the first 2,000 levels, and one below it, against the test's own table.
  for (const curve of CURVES) {
    const wrong: string[] = []
    for (let l = 1; l <= 2000; l++) {
      const at = Number(threshold(curve, l))
      const below = levelProgress(curve, at - 1)
      const exact = levelProgress(curve, at)
      if (below.level !== l - 1 || below.xp !== below.required - 1 || below.required !== Number(perLevel[curve](BigInt(l - 1)))) wrong.push(`${at - 1}: ${JSON.stringify(below)}`)
      if (exact.level !== l || exact.xp !== 0 || exact.required !== Number(perLevel[curve](BigInt(l)))) wrong.push(`${at}: ${JSON.stringify(exact)}`)
    }
    t.same(wrong.slice(0, 10), [], `${curve}: thresholds 1..2000`)
  }
})

t.test('the member record carries level_progress under the server\'s current curve', async (t) => {
  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  const { app, writer, apiKeys } = await buildTestApp(t, server.url)
  const guildId = '1800000000000000001'
  const { key } = await apiKeys.create({ guildId, plan: 'professional' })
  const read = async (userId: string) => (await app.inject({ url: `/api/v1/servers/${guildId}/members/${userId}`, headers: { 'x-api-key': key } })).json()
  await writer.setXp({ guildId, userId: '1', xp: 0 })
  await writer.setXp({ guildId, userId: '2', xp: 254 })
  await writer.setXp({ guildId, userId: '3', xp: 255 })
  t.match(await read('1'), { level: 0, level_progress: { xp: 0, required: 100 } })
  t.match(await read('2'), { level: 1, level_progress: { xp: 154, required: 155 } })
  t.match(await read('3'), { level: 2, level_progress: { xp: 0, required: 220 } })
  await writer.configureGuild(guildId, { curve: 'linear' })
  t.match(await read('3'), { level: 2, level_progress: { xp: 5, required: 275 } }, 'linear: 255 is 5 past 250')
  await writer.configureGuild(guildId, { curve: 'flat' })
  t.match(await read('3'), { level: 0, level_progress: { xp: 255, required: 1000 } })
})

/** A custom curve of `levels` levels with steps of 1 to `maxStep` XP (the first from 1), strictly increasing. */
function customCurve (levels: number, maxStep: number): CustomCurve {
  const thresholds: number[] = []
  let xp = 0
  for (let l = 0; l < levels; l++) {
    xp += random.int(1, maxStep)
    thresholds.push(xp)
  }
  return { thresholds }
}

/** The contract's level under a custom curve, by walking the list: how many thresholds are at most xp. */
const countedLevel = (curve: CustomCurve, xp: number): number => curve.thresholds.filter((x) => x <= xp).length

/** Each threshold of a custom curve with one XP below and above it, 0, and random XP past the last. */
function customPoints (curve: CustomCurve): number[] {
  const last = curve.thresholds.at(-1) as number
  return [0, ...curve.thresholds.flatMap((x) => [x - 1, x, x + 1]), ...Array.from({ length: 200 }, () => randomXp(Math.min(MAX_XP, 2 * last)))]
}

const CUSTOM_CURVES: CustomCurve[] = [
  { thresholds: [1] },
  { thresholds: [100, 101, 5000] },
  customCurve(1000, 3),
  customCurve(1000, 1_000_000_000),
  { thresholds: [...customCurve(999, 1000).thresholds, MAX_XP] }
]

t.test('a custom curve: the level is how many of its thresholds the XP reaches, up to its last level', async (t) => {
  for (const curve of CUSTOM_CURVES) {
    const n = curve.thresholds.length
    const points = customPoints(curve)
    t.same(points.filter((xp) => levelForXp(curve, xp) !== countedLevel(curve, xp)).slice(0, 10), [], `${n} levels: every threshold ±1 and ${points.length} points`)
    t.equal(xpForLevel(curve, 0), 0, 'level 0 needs 0 XP')
    t.same(curve.thresholds.map((_, i) => xpForLevel(curve, i + 1)), curve.thresholds, 'level l needs the l-th XP of the list')
    t.throws(() => xpForLevel(curve, n + 1), RangeError, 'no level past the last')
    t.equal(levelForXp(curve, MAX_XP), n, 'MAX_XP is the last level')
  }
  const curve: CustomCurve = { thresholds: [100, 250, 1000] }
  t.same([0, 99, 100, 249, 250, 999, 1000, 5000].map((xp) => levelProgress(curve, xp)), [
    { level: 0, xp: 0, required: 100 },
    { level: 0, xp: 99, required: 100 },
    { level: 1, xp: 0, required: 150 },
    { level: 1, xp: 149, required: 150 },
    { level: 2, xp: 0, required: 750 },
    { level: 2, xp: 749, required: 750 },
    { level: 3, xp: 0, required: 0 },
    { level: 3, xp: 4000, required: 0 }
  ], 'progress within each level; the last has none to complete (required 0)')
})

t.test('levelForXp refuses XP that is not a non-negative safe integer', async (t) => {
  for (const bad of [-1, 1.5, NaN, Infinity, Number.MAX_SAFE_INTEGER + 1]) {
    t.throws(() => levelForXp('mee6', bad), RangeError, `${bad}`)
  }
})

t.test('the Lua twin', async (t) => {
  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  const raw = new Redis(server.url)
  t.teardown(() => { raw.disconnect() })

  const include = (name: string): string =>
    readFileSync(new URL(`../src/redis/commands/includes/${name}.lua`, import.meta.url), 'utf8')
  const levelsLua = `${include('numbers')}\n${include('levels')}\n`
  const levelScript = `${levelsLua}
local out = {}
for i = 2, #ARGV do out[#out + 1] = level_for_xp(ARGV[1], tonumber(ARGV[i])) end
return out`
  const thresholdScript = `${levelsLua}
local out = {}
for i = 2, #ARGV do out[#out + 1] = int(xp_for_level(ARGV[1], tonumber(ARGV[i]))) end
return out`

  async function luaLevels (curve: Curve, xps: number[]): Promise<number[]> {
    const out: number[] = []
    for (let i = 0; i < xps.length; i += 10_000) {
      out.push(...await raw.eval(levelScript, 0, curve, ...xps.slice(i, i + 10_000)) as number[])
    }
    return out
  }

  // Every mee6 threshold up to MAX_XP; linear and flat have too many for a quick test, so every
  // one of their first 10,000 and a sample beyond.
  t.test('includes/levels.lua level_for_xp agrees with levelForXp at thresholds ±1 (every one up to level 10,000, all mee6 ones) and at random XP', async (t) => {
    for (const curve of CURVES) {
      const points = [
        ...thresholdPoints(curve, 10_000, 47),
        ...[1_000_000, 123_456_789, 999_999_999, 1_000_000_000].flatMap((l) =>
          curve === 'flat' ? [l * 1000 - 1, l * 1000, l * 1000 + 1].filter((x) => x <= MAX_XP) : []),
        MAX_XP, MAX_XP - 1,
        ...Array.from({ length: 3000 }, () => randomXp(MAX_XP)),
        ...Array.from({ length: 2000 }, () => randomXp(10_000_000))
      ]
      const got = await luaLevels(curve, points)
      const wrong = points
        .map((xp, i) => ({ xp, lua: got[i], ts: levelForXp(curve, xp) }))
        .filter(({ lua, ts }) => lua !== ts)
      t.ok(points.length > 5000, `${curve}: ${points.length} points`)
      t.same(wrong.slice(0, 10), [], `${curve}: Lua and TypeScript agree at every point`)
    }
  })

  t.test('includes/levels.lua under a custom curve (use_custom_curve) agrees with levelForXp at every threshold ±1 and at random XP', async (t) => {
    const script = `${include('numbers')}\n${include('levels')}\n
use_custom_curve(cjson.decode(ARGV[1]))
local out = {}
for i = 2, #ARGV do out[#out + 1] = level_for_xp('custom', tonumber(ARGV[i])) end
local thresholds = {}
for l = 0, #cjson.decode(ARGV[1]) do thresholds[#thresholds + 1] = int(xp_for_level('custom', l)) end
return { out, thresholds }`
    for (const curve of CUSTOM_CURVES) {
      const points = customPoints(curve)
      const [levels, thresholds] = await raw.eval(script, 0, JSON.stringify(curve.thresholds), ...points) as [number[], string[]]
      const wrong = points.map((xp, i) => ({ xp, lua: levels[i], ts: levelForXp(curve, xp) })).filter(({ lua, ts }) => lua !== ts)
      t.same(wrong.slice(0, 10), [], `${curve.thresholds.length} levels: ${points.length} points`)
      t.same(thresholds, ['0', ...curve.thresholds.map(String)], 'xp_for_level gives the list')
    }
  })

  t.test('includes/levels.lua levels_from: the levels after a gain, from the levels before it, are levelForXp of the new XP under every curve', async (t) => {
    const script = `${levelsLua}
local out = {}
for i = 1, #ARGV, 2 do
  local a, b, c = levels_from(tonumber(ARGV[i + 1]), levels_of(tonumber(ARGV[i])))
  out[#out + 1] = a
  out[#out + 1] = b
  out[#out + 1] = c
end
return out`
    // Gains that stay within a level, cross one threshold (from one short of it), and jump many.
    const moves: Array<[number, number]> = []
    for (const curve of CURVES) {
      for (const xp of thresholdPoints(curve, 1_000)) if (xp > 0) moves.push([xp - 1, xp], [xp - 1, xp + 24], [xp, xp + 1])
    }
    for (let i = 0; i < 3000; i++) {
      const from = randomXp(MAX_XP - 1)
      moves.push([from, Math.min(MAX_XP, from + 1 + randomXp(i % 2 === 0 ? 30 : MAX_XP - from))])
    }
    const got: number[] = []
    for (let i = 0; i < moves.length; i += 5_000) {
      got.push(...await raw.eval(script, 0, ...moves.slice(i, i + 5_000).flat()) as number[])
    }
    const wrong = moves
      .map(([from, to], i) => ({ from, to, lua: got.slice(3 * i, 3 * i + 3), ts: CURVES.map((curve) => levelForXp(curve, to)) }))
      .filter(({ lua, ts }) => lua.join() !== ts.join())
    t.ok(moves.length > 10_000, `${moves.length} moves`)
    t.same(wrong.slice(0, 10), [], 'every move lands on the contract levels')
  })

  t.test('includes/levels.lua xp_for_level gives the contract thresholds exactly, up to MAX_XP', async (t) => {
    for (const curve of CURVES) {
      const levels = TABLES[curve].map((_, i) => i).filter((l) => l % 7 === 0 || l < 100 || l > TABLES[curve].length - 100)
      const got: string[] = []
      for (let i = 0; i < levels.length; i += 10_000) {
        got.push(...await raw.eval(thresholdScript, 0, curve, ...levels.slice(i, i + 10_000)) as string[])
      }
      const wrong = levels.filter((l, i) => got[i] !== String(threshold(curve, l)))
      t.same(wrong.slice(0, 10), [], `${curve}: ${levels.length} thresholds`)
    }
  })

  t.test('through the real scripts: after setXp, the stats hash level_sum:<curve> is levelForXp of the XP, for every curve', async (t) => {
    const redis = createRedis({ url: server.url, offlineQueue: true, commandTimeoutMs: 10_000 })
    t.teardown(() => { redis.disconnect() })
    const keys = new KeyBuilder('lv')
    const writer = new LeaderboardWriter(redis, keys)

    const points = [
      0, MAX_XP, MAX_XP - 1,
      ...CURVES.flatMap((curve) => thresholdPoints(curve, 400)),
      ...Array.from({ length: 500 }, () => randomXp(MAX_XP)),
      ...Array.from({ length: 500 }, () => randomXp(100_000_000))
    ]
    // One guild per point: the member's first XP moves the sums from 0; then a second value,
    // another point, moves them from an arbitrary old XP to an arbitrary new one.
    const second = points.map(() => random.pick(points))
    const wrong: string[] = []
    async function check (guildId: string, xp: number, step: string): Promise<void> {
      const [xpTotal, withXp, ...sums] = await redis.hmget(keys.guild(guildId).stats,
        'xp_total', 'members_with_xp', ...CURVES.map((c) => `level_sum:${c}`))
      const got = [xpTotal, withXp, ...sums].map((v) => Number(v ?? 0))
      const want = [xp, xp > 0 ? 1 : 0, ...CURVES.map((c) => levelForXp(c, xp))]
      if (got.join() !== want.join()) wrong.push(`${step} xp ${xp}: stats ${got.join()}, want ${want.join()}`)
    }
    for (let i = 0; i < points.length; i += 500) {
      await Promise.all(points.slice(i, i + 500).map(async (xp, j) => {
        const guildId = String(i + j + 1)
        const previous = await writer.setXp({ guildId, userId: '7', xp })
        if (previous !== 0) wrong.push(`guild ${guildId}: setXp returned ${previous} for a new member`)
        await check(guildId, xp, 'first')
        const next = second[i + j] as number
        const again = await writer.setXp({ guildId, userId: '7', xp: next })
        if (again !== xp) wrong.push(`guild ${guildId}: setXp returned ${again}, want ${xp}`)
        await check(guildId, next, `from ${xp}`)
      }))
    }
    t.ok(points.length > 2000, `${points.length} points`)
    t.same(wrong.slice(0, 10), [], 'every level_sum matches levelForXp')
  })
})
