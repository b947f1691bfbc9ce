// POST /admin/v1/servers/{g}/settings/preview: what a change of settings would do to the server's
// members, changing nothing. The counts are ZCOUNTs of the XP ranges src/rules/preview.ts plans
// (a few per role reward, one per level both curves share up to the board's highest XP), sent in
// pipelines of PREVIEW_CHUNK: the cost follows the settings, not the members (a server of
// 1,000,000 members costs what one of 1,000 does, each ZCOUNT O(log n)). Each count is exact as
// of when it runs; awards applied while a preview's counts are taken may move a member between them.
import { levelCurve, type SettingsInput } from './settings.js'
import type { SettingsStore } from './settings-store.js'
import { rolePlans, sameLevelRanges, type XpRange } from '../rules/preview.js'

/** ZCOUNTs per pipeline. */
const PREVIEW_CHUNK = 1000

export interface SettingsPreview {
  /** Members on the board (with XP or not). */
  members: number
  /** Members whose level the change would move (either way). */
  levelChanges: number
  /** Each role of the current or the new role rewards: how many members would gain it and lose it. */
  roles: Array<{ roleId: string, level: number | null, gained: number, lost: number }>
}

export async function previewSettings (store: SettingsStore, guildId: string, input: SettingsInput): Promise<SettingsPreview> {
  const { current, proposed } = await store.proposed(guildId, input)
  const { redis, keys } = store
  const board = keys.guild(guildId).board
  const [, top] = await redis.zrevrange(board, 0, 0, 'WITHSCORES')
  const maxXp = Math.max(0, Number(top ?? 0))
  const [before, after] = [levelCurve(current), levelCurve(proposed)]
  const same = sameLevelRanges(before, after, maxXp)
  const plans = rolePlans(current, proposed, before, after)
  const ranges: Array<XpRange | null> = [{ min: 0, max: Infinity }, ...same, ...plans.flatMap((p) => [p.before, p.after, p.both])]
  const counts = await countRanges(store, board, ranges)
  const members = counts[0] as number
  const unchanged = counts.slice(1, 1 + same.length).reduce((a, b) => a + b, 0)
  return {
    members,
    levelChanges: members - unchanged,
    roles: plans.map((p, i) => {
      const [was, will, both] = counts.slice(1 + same.length + 3 * i, 4 + same.length + 3 * i) as [number, number, number]
      return { roleId: p.roleId, level: p.level, gained: will - both, lost: was - both }
    })
  }
}

/** The members whose XP is in each range (0 for null), in order. */
async function countRanges (store: SettingsStore, board: string, ranges: Array<XpRange | null>): Promise<number[]> {
  const counts: number[] = []
  for (let from = 0; from < ranges.length; from += PREVIEW_CHUNK) {
    const pipeline = store.redis.pipeline()
    const chunk = ranges.slice(from, from + PREVIEW_CHUNK)
    for (const range of chunk) {
      if (range !== null) pipeline.zcount(board, range.min, range.max === Infinity ? '+inf' : range.max)
    }
    const replies = await pipeline.exec() ?? []
    let next = 0
    for (const range of chunk) {
      if (range === null) {
        counts.push(0)
        continue
      }
      const [err, count] = replies[next++] ?? [new Error('no reply'), 0]
      if (err !== null) throw err
      counts.push(Number(count))
    }
  }
  return counts
}
