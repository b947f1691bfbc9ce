import { Type } from 'typebox'
import { AvatarUrl, DisplayName, LevelProgress, named, ref } from './common.js'
import { PERIODS } from '../periods/periods.js'

export const LIMIT_DEFAULT = 10
export const LIMIT_MAX = 100
export const PAGE_MAX = 1_000_000_000

export const RADIUS_DEFAULT = 5
export const RADIUS_MAX = 50

/** A season to rank by: `current`, or a season's id (seasons are numbered from 1). */
export const SEASON_PATTERN = '^(current|[1-9][0-9]{0,8})$'

export const SeasonParameter = Type.Optional(Type.String({
  pattern: SEASON_PATTERN,
  description: 'Rank by XP gained in a season of the server: `current`, or an ended season\'s id (one the server still keeps, ' +
    'see season_retention). Not with `period`',
  examples: ['current', '3']
}))

/** A rank at the end of the last closed day minus the rank now, for the all-time board. */
export const RankChange = Type.Union([Type.Integer(), Type.Null()], {
  description: 'The rank at the end of the last closed day (in the server\'s time zone) minus the rank now: positive, moved up. ' +
    'null for a member who had no rank then, and on a period\'s or a season\'s board'
})

export const LeaderboardQuery = Type.Object({
  period: Type.Optional(Type.Enum([...PERIODS], {
    default: 'all',
    description: 'Rank by XP gained in this period: all time (default), the current or the previous ISO week (from Monday 00:00 UTC), the current or the previous UTC calendar month'
  })),
  season: SeasonParameter,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMIT_MAX, default: LIMIT_DEFAULT, description: 'Entries per page' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: 1, description: 'Page number: ranks `(page-1)*limit+1` to `page*limit`' }))
})

export const LeaderboardEntry = named('LeaderboardEntry', Type.Object({
  rank: Type.Integer({ minimum: 1, description: '1-based position by XP descending, ties by user_id ascending as numbers' }),
  user_id: Type.String({ examples: ['1100000000000012345'] }),
  username: Type.String({ description: 'Username; the user_id when none was recorded' }),
  display_name: DisplayName,
  avatar_url: AvatarUrl,
  level: Type.Integer({ minimum: 0 }),
  xp: Type.Integer({ minimum: 0, description: 'XP; on a period\'s or a season\'s board, the XP gained in it' }),
  level_progress: LevelProgress,
  rank_change: RankChange
}, { description: 'A ranked member' }))

export const LeaderboardPage = named('LeaderboardPage', Type.Object({
  data: Type.Array(ref(LeaderboardEntry)),
  total: Type.Integer({ minimum: 0, description: 'Number of ranked members; on a period\'s or a season\'s board, members with XP gained in it' }),
  page: Type.Integer({ minimum: 1, description: 'The requested page (past the end: data is empty)' })
}, { description: 'One page of the leaderboard' }))

export const AroundQuery = Type.Object({
  radius: Type.Optional(Type.Integer({ minimum: 0, maximum: RADIUS_MAX, default: RADIUS_DEFAULT, description: 'Ranks on each side of the member' })),
  season: SeasonParameter
})

export const AroundPage = named('AroundPage', Type.Object({
  data: Type.Array(ref(LeaderboardEntry), { description: 'Ranks max(1, rank - radius) .. min(total, rank + radius)' }),
  total: Type.Integer({ minimum: 1, description: 'Number of ranked members' }),
  rank: Type.Integer({ minimum: 1, description: "The member's rank" })
}, { description: 'The leaderboard around one member' }))
