// Pages of each leveling bot's leaderboard JSON as the bot gives them (the shapes docs/cli.md
// cites, every field a page and a row carry, not only those import reads), for tests to build
// files from: well-formed rows, rows with what a test asks for in place of a field, and ids
// written as bare JSON numbers, as a bot or a script in another language may write them.
import type { JsonImportFormat } from '../../src/transfer/import-formats.js'

/** A member as a test wants it written: `id` may be `NUM:` and digits, written as a bare number (see toJson). */
export interface Member { id: string, xp: number | string, name?: string, pad?: string }

/** Where each bot keeps its rows, and the name of its XP and id fields (for rows a test breaks on purpose). */
export const SHAPES: Record<JsonImportFormat, { list: string, xp: string, id: string }> = {
  mee6: { list: 'players', xp: 'xp', id: 'id' },
  amari: { list: 'data', xp: 'exp', id: 'id' },
  lurkr: { list: 'levels', xp: 'xp', id: 'userId' },
  polaris: { list: 'leaderboard', xp: 'xp', id: 'id' },
  tatsu: { list: 'rankings', xp: 'score', id: 'user_id' }
}

const HASH = '0123456789abcdef0123456789abcdef'

/** One row of the bot's list, with every field the bot gives. `pad`, when given, is a field import does not read. */
export function rowOf (format: JsonImportFormat, m: Member, rank = 1): Record<string, unknown> {
  const extra = m.pad === undefined ? {} : { note: m.pad }
  const name = m.name ?? `member ${m.id.replace('NUM:', '')}`
  switch (format) {
    case 'mee6':
      return { avatar: HASH, detailed_xp: [12, 155, m.xp], discriminator: '0', guild_id: '1100000000000000001', id: m.id, is_monetize_subscriber: false, level: 3, message_count: 40, monetize_xp_boost: 0, username: name, xp: m.xp, ...extra }
    case 'amari':
      return { id: m.id, username: name, exp: m.xp, level: 3, weeklyExp: 17, ...extra }
    case 'lurkr':
      return { level: 3, messageCount: 40, nextLevelXp: 450, progress: 20, rank, user: { accentColour: null, avatar: HASH, discriminator: '0', globalName: `${name} (shown)`, username: name }, userId: m.id, xp: m.xp, ...extra }
    case 'polaris':
      return { id: m.id, xp: m.xp, rank, username: name, displayName: `${name} (shown)`, nickname: null, avatar: `https://cdn.discordapp.com/avatars/1/${HASH}.png`, color: '#3498db', ...extra }
    case 'tatsu':
      return { rank, score: m.xp, user_id: m.id, ...extra }
  }
}

/** One page of the bot's answer around `rows` (its own fields besides them included). */
export function pageOf (format: JsonImportFormat, rows: unknown[], page = 0): Record<string, unknown> {
  switch (format) {
    case 'mee6':
      return { admin: false, banner_url: null, guild: { id: '1100000000000000001', name: 'A server', icon: null, premium: false }, page, player: null, players: rows, role_rewards: [], user_guild_settings: null, xp_per_message: [5, 15], xp_rate: 1 }
    case 'amari':
      return { data: rows, count: rows.length, total_count: 1000 }
    case 'lurkr':
      return { guild: { icon: null, id: '1100000000000000001', memberCount: 1000, name: 'A server' }, isManager: false, levels: rows, multipliers: [], roleRewards: [], vanity: null, xpGainInterval: 60, xpPerMessageMax: 40, xpPerMessageMin: 15 }
    case 'polaris':
      return { guild: { id: '1100000000000000001', name: 'A server', icon: null }, leaderboard: rows, pageInfo: { page: page + 1, pageCount: 10 }, settings: { curve: { 1: 100, 2: 50, 3: 5 } }, rewards: [] }
    case 'tatsu':
      return { guild_id: '1100000000000000001', rankings: rows }
  }
}

/** JSON text in which every string `"NUM:<digits>"` is the bare number `<digits>`, digit for digit (JSON.stringify would round it). */
export function toJson (value: unknown): string {
  return JSON.stringify(value).replace(/"NUM:(-?\d+)"/g, '$1')
}
