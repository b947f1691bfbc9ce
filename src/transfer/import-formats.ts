// The formats import reads, and, for the JSON of each leveling bot, where its rows are and which
// of a row's fields are the member's id, XP and name. Where each shape comes from, and what is
// uncertain about it, is in docs/cli.md ("Import and export").
import { SNOWFLAKE_PATTERN } from '../snowflake.js'

/** The leveling bots whose leaderboard JSON import reads. */
export const JSON_IMPORT_FORMATS = ['mee6', 'amari', 'lurkr', 'polaris', 'tatsu'] as const
export type JsonImportFormat = typeof JSON_IMPORT_FORMATS[number]
export const IMPORT_FORMATS = [...JSON_IMPORT_FORMATS, 'csv'] as const
export type ImportFormat = typeof IMPORT_FORMATS[number]

export function isJsonFormat (format: ImportFormat): format is JsonImportFormat {
  return format !== 'csv'
}

/** A row's fields as read: text, numbers (an id field's as its digits), true, false, null, or an object of those (`nested`). */
export type RowFields = Record<string, unknown>

/** The member a row gives, not yet checked (importMembers checks it). */
export interface RowMember {
  userId: unknown
  /** Undefined: the row has no name where the bot always gives one (a bad row); '' : none given. */
  username: unknown
  xp: unknown
  /** The name the bot shows, when it gives one besides the username. */
  displayName?: string
  /** An https URL of the member's avatar, when the bot gives one (or its Discord hash). */
  avatarUrl?: string
}

/** Where a bot's page keeps its rows: an array of rows, or an object of rows by user id. */
export interface RowList { key: string, byId?: true }

export interface JsonFormat {
  /** The bot's name in messages. */
  bot: string
  /** What one row is, in messages ("not a player object"). */
  row: string
  /** The keys of a page that can hold its rows; the first the page has counts. */
  lists: readonly RowList[]
  /** The fields of a row that are read; the others are skipped unread. */
  fields: ReadonlySet<string>
  /** Fields whose numbers are ids: kept as their digits, since most ids are past 2^53. */
  ids: ReadonlySet<string>
  /** Fields that are objects whose own fields are read (one level). */
  nested: ReadonlySet<string>
  /** The member, from the fields read (and the row's key, in an object of rows by id). */
  member: (row: RowFields, key?: string) => RowMember
}

export const JSON_FORMATS: Record<JsonImportFormat, JsonFormat> = {
  // MEE6's leaderboard API, /api/plugins/levels/leaderboard/{guild}?page=N: {"players": [{"id", "username", "xp", "avatar", ...}]}.
  mee6: {
    bot: 'MEE6',
    row: 'player',
    lists: [{ key: 'players' }],
    fields: new Set(['id', 'username', 'xp', 'avatar']),
    ids: new Set(['id']),
    nested: new Set(),
    member: (r) => ({ userId: r.id, username: r.username, xp: r.xp, avatarUrl: avatarUrl(r.id, r.avatar) })
  },
  // Amari's API, /api/v1/guild/leaderboard/{guild}?page=N&limit=M (or /guild/raw/leaderboard/{guild}):
  // {"data": [{"id", "username", "exp", "level", "weeklyExp"}], "count", "total_count"}. Amari's own
  // documentation shows the array as "members", and a newer client types the id as "userId".
  amari: {
    bot: 'Amari',
    row: 'member',
    lists: [{ key: 'data' }, { key: 'members' }],
    fields: new Set(['id', 'userId', 'username', 'exp']),
    ids: new Set(['id', 'userId']),
    nested: new Set(),
    member: (r) => ({ userId: r.id ?? r.userId, username: r.username, xp: r.exp })
  },
  // Lurkr's API v2, /levels/{guild}?page=N: {"levels": [{"userId", "xp", "level", "user": {"username",
  // "globalName", "avatar", ...}, ...}]}; its earlier export file: {"levels": [{"userId", "xp", "tag", "avatar"}]}.
  // A member who chose privacy may come without a user: no name is given then.
  lurkr: {
    bot: 'Lurkr',
    row: 'member',
    lists: [{ key: 'levels' }],
    fields: new Set(['userId', 'xp', 'user', 'tag', 'avatar']),
    ids: new Set(['userId']),
    nested: new Set(['user']),
    member: (r) => {
      const user = isFields(r.user) ? r.user : {}
      return {
        userId: r.userId,
        username: user.username ?? r.tag ?? '',
        xp: r.xp,
        displayName: text(user.globalName),
        avatarUrl: avatarUrl(r.userId, user.avatar ?? r.avatar)
      }
    }
  },
  // Polaris's API, gdcolon.com/polaris/api/leaderboard/{guild}?page=N: {"leaderboard": [{"id", "xp",
  // "username", "displayName", "nickname", "avatar", "color", "missing"?}], "pageInfo", "settings"};
  // and its dashboard's JSON download, read as {"users": {"<id>": {"xp", ...}}}.
  polaris: {
    bot: 'Polaris',
    row: 'member',
    lists: [{ key: 'leaderboard' }, { key: 'users', byId: true }],
    fields: new Set(['id', 'xp', 'username', 'displayName', 'nickname', 'avatar']),
    ids: new Set(['id']),
    nested: new Set(),
    member: (r, key) => {
      const userId = key ?? r.id
      return {
        userId,
        username: r.username ?? '',
        xp: r.xp,
        displayName: text(r.nickname) ?? text(r.displayName),
        avatarUrl: avatarUrl(userId, r.avatar)
      }
    }
  },
  // Tatsu's API, api.tatsu.gg/v1/guilds/{guild}/rankings/all?offset=N: {"guild_id", "rankings": [{"user_id",
  // "rank", "score"}]}, the score being the member's server XP. It gives no names.
  tatsu: {
    bot: 'Tatsu',
    row: 'ranking',
    lists: [{ key: 'rankings' }],
    fields: new Set(['user_id', 'score']),
    ids: new Set(['user_id']),
    nested: new Set(),
    member: (r) => ({ userId: r.user_id, username: '', xp: r.score })
  }
}

export function isFields (value: unknown): value is RowFields {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function text (value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

const SNOWFLAKE = new RegExp(SNOWFLAKE_PATTERN)
const AVATAR_HASH = /^(a_)?[0-9a-f]{32}$/

/**
 * An avatar as an https URL: one the bot gives as such, or a Discord avatar hash on Discord's CDN
 * (an animated one, `a_…`, as a GIF).
 */
function avatarUrl (userId: unknown, avatar: unknown): string | undefined {
  if (typeof avatar !== 'string') return undefined
  if (avatar.startsWith('https://')) return avatar
  const id = typeof userId === 'number' ? String(userId) : userId
  if (typeof id !== 'string' || !SNOWFLAKE.test(id) || !AVATAR_HASH.test(avatar)) return undefined
  return `https://cdn.discordapp.com/avatars/${id}/${avatar}.${avatar.startsWith('a_') ? 'gif' : 'png'}`
}
