import { Type } from 'typebox'
import { ErrorResponse, errorResponses } from './common.js'

export const MemberRecord = Type.Object({
  user_id: Type.String(),
  username: Type.String({ description: 'Display name; the user_id when none was recorded' }),
  level: Type.Integer({ minimum: 0 }),
  xp: Type.Integer({ minimum: 0 }),
  rank: Type.Integer({ minimum: 1 }),
  daily_streak: Type.Integer({ minimum: 0, description: 'Streak as it stands now: 0 unless the last claim was today or yesterday (UTC)' }),
  last_daily_claim: Type.Union([
    Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' }),
    Type.Null()
  ])
}, { description: "The member's record" })

export const memberResponses = { 200: MemberRecord, 404: ErrorResponse, ...errorResponses }
