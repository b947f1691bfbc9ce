import { Type } from 'typebox'
import { named } from './common.js'
import { CURVES } from '../levels/curves.js'

export const GuildStats = named('GuildStats', Type.Object({
  total_members: Type.Integer({ minimum: 0, description: 'Members with XP > 0' }),
  total_xp: Type.Integer({ minimum: 0 }),
  average_level: Type.Integer({ minimum: 0, description: 'Mean level of members with XP > 0, rounded half up' }),
  xp_curve: Type.Enum([...CURVES, 'custom'], { type: 'string', description: 'How XP maps to levels (see docs/api.md, "Levels and curves"): a built-in curve, or `custom`, the server\'s own' }),
  xp_multiplier: Type.Number({ minimum: 0.01, maximum: 100 }),
  name: Type.Union([Type.String(), Type.Null()], { description: "The server's display name (its settings' `name`); null when unset" }),
  icon_url: Type.Union([Type.String(), Type.Null()], { description: "The server's icon, an https URL (its settings' `icon_url`); null when unset" })
}, { description: "The server's aggregates and curve settings" }))
