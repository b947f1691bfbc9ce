import { Type } from 'typebox'
import { errorResponses } from './common.js'

export const LIMIT_DEFAULT = 10
export const LIMIT_MAX = 100
export const PAGE_MAX = 1_000_000_000

export const LeaderboardQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMIT_MAX, default: LIMIT_DEFAULT, description: 'Entries per page' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: 1, description: 'Page number: ranks (page-1)*limit+1 .. page*limit' }))
})

export const LeaderboardEntry = Type.Object({
  rank: Type.Integer({ minimum: 1, description: '1-based position by XP descending, ties by user_id ascending' }),
  user_id: Type.String(),
  username: Type.String({ description: 'Display name; the user_id when none was recorded' }),
  level: Type.Integer({ minimum: 0 }),
  xp: Type.Integer({ minimum: 0 })
})

export const LeaderboardResponse = Type.Object({
  data: Type.Array(LeaderboardEntry),
  total: Type.Integer({ minimum: 0, description: 'Number of ranked members' }),
  page: Type.Integer({ minimum: 1 })
}, { description: 'One page of the leaderboard' })

export const leaderboardResponses = { 200: LeaderboardResponse, ...errorResponses }
