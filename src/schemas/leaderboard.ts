import { Type } from 'typebox'
import { named, ref } from './common.js'
import { errorResponses, readResponses } from './responses.js'

export const LIMIT_DEFAULT = 10
export const LIMIT_MAX = 100
export const PAGE_MAX = 1_000_000_000

export const LeaderboardQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMIT_MAX, default: LIMIT_DEFAULT, description: 'Entries per page' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: 1, description: 'Page number: ranks `(page-1)*limit+1` to `page*limit`' }))
})

export const LeaderboardEntry = named('LeaderboardEntry', Type.Object({
  rank: Type.Integer({ minimum: 1, description: '1-based position by XP descending, ties by user_id ascending as numbers' }),
  user_id: Type.String({ examples: ['1100000000000012345'] }),
  username: Type.String({ description: 'Display name; the user_id when none was recorded' }),
  level: Type.Integer({ minimum: 0 }),
  xp: Type.Integer({ minimum: 0 })
}, { description: 'A ranked member' }))

export const LeaderboardPage = named('LeaderboardPage', Type.Object({
  data: Type.Array(ref(LeaderboardEntry)),
  total: Type.Integer({ minimum: 0, description: 'Number of ranked members' }),
  page: Type.Integer({ minimum: 1, description: 'The requested page (past the end: data is empty)' })
}, { description: 'One page of the leaderboard' }))

export const leaderboardResponses = {
  ...readResponses(LeaderboardPage, 'One page of the leaderboard'),
  ...errorResponses
}
