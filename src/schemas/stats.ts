import { Type } from 'typebox'
import { CURVES } from '../levels/curves.js'
import { errorResponses } from './common.js'

export const GuildStats = Type.Object({
  total_members: Type.Integer({ minimum: 0, description: 'Members with XP > 0' }),
  total_xp: Type.Integer({ minimum: 0 }),
  average_level: Type.Integer({ minimum: 0, description: 'Mean level of members with XP > 0, rounded half up' }),
  xp_curve: Type.Enum([...CURVES]),
  xp_multiplier: Type.Number({ minimum: 0.01, maximum: 100 })
}, { description: "The server's aggregates and curve settings" })

export const statsResponses = { 200: GuildStats, ...errorResponses }
