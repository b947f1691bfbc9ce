import { Type } from 'typebox'
import { named } from './common.js'
import { errorResponses, memberNotFound, readResponses } from './responses.js'

export const MemberRecord = named('MemberRecord', Type.Object({
  user_id: Type.String({ examples: ['1100000000000000777'] }),
  username: Type.String({ description: 'Display name; the user_id when none was recorded' }),
  level: Type.Integer({ minimum: 0 }),
  xp: Type.Integer({ minimum: 0 }),
  rank: Type.Integer({ minimum: 1 }),
  daily_streak: Type.Integer({ minimum: 0, description: 'Streak as it stands now: 0 unless the last claim was today or yesterday (UTC)' }),
  last_daily_claim: Type.Union([
    Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' }),
    Type.Null()
  ], { description: 'When the member last claimed its daily reward; null if never' })
}, { description: "A member's record" }))

export const memberResponses = {
  ...readResponses(MemberRecord, "The member's record"),
  ...memberNotFound,
  ...errorResponses
}
