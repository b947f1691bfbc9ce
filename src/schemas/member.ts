import { Type } from 'typebox'
import { AvatarUrl, DisplayName, LevelProgress, named, ref } from './common.js'
import { RankChange, SeasonParameter } from './leaderboard.js'

export const MemberRecord = named('MemberRecord', Type.Object({
  user_id: Type.String({ examples: ['1100000000000000777'] }),
  username: Type.String({ description: 'Username; the user_id when none was recorded' }),
  display_name: DisplayName,
  avatar_url: AvatarUrl,
  level: Type.Integer({ minimum: 0, description: 'The level of the member\'s all-time XP' }),
  xp: Type.Integer({ minimum: 0, description: 'XP; with `season`, the XP gained in that season' }),
  rank: Type.Integer({ minimum: 1, description: 'The rank on the board read: all time, or with `season` in that season' }),
  rank_change: RankChange,
  daily_streak: Type.Integer({ minimum: 0, description: 'Streak as it stands now: 0 unless the last claim was today or yesterday (UTC)' }),
  last_daily_claim: Type.Union([
    Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' }),
    Type.Null()
  ], { description: 'When the member last claimed its daily reward; null if never' }),
  weekly_xp: Type.Integer({ minimum: 0, description: 'XP gained by awards in the current ISO week (from Monday 00:00 UTC)' }),
  monthly_xp: Type.Integer({ minimum: 0, description: 'XP gained by awards in the current UTC calendar month' }),
  level_progress: LevelProgress
}, { description: "A member's record" }))

export const IDS_MAX = 100

export const MemberQuery = Type.Object({ season: SeasonParameter })

export const MembersQuery = Type.Object({
  ids: Type.String({
    pattern: `^[1-9][0-9]{0,19}(?:,[1-9][0-9]{0,19}){0,${IDS_MAX - 1}}$`,
    description: `1 to ${IDS_MAX} distinct user ids, separated by commas`,
    examples: ['1100000000000000777,1100000000000000778']
  }),
  season: SeasonParameter
})

export const MemberList = named('MemberList', Type.Object({
  data: Type.Array(ref(MemberRecord), { description: 'The records of the requested ids that are members, in the requested order' }),
  missing: Type.Array(Type.String(), { description: 'The requested ids that are not members, in the requested order' })
}, { description: 'Several members at once' }))
