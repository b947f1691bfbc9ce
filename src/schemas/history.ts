import { Type } from 'typebox'
import { named } from './common.js'
import { SETTINGS_LIMITS } from '../settings/settings.js'

export const HISTORY_DAYS_MAX = SETTINGS_LIMITS.historyDays.max
export const HISTORY_DAYS_DEFAULT = SETTINGS_LIMITS.historyDays.default

export const HistoryQuery = Type.Object({
  days: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: HISTORY_DAYS_MAX,
    default: HISTORY_DAYS_DEFAULT,
    description: 'The last N days that ended (in the server\'s time zone); only the days the server keeps (history_days) are there'
  }))
})

const DATE = Type.String({ format: 'date', description: 'The day, YYYY-MM-DD, in the server\'s time zone' })

export const MemberHistory = named('MemberHistory', Type.Object({
  data: Type.Array(Type.Object({
    date: DATE,
    xp: Type.Integer({ minimum: 0, description: 'XP at the day\'s end (0 when the member was not ranked then)' }),
    xp_gained: Type.Integer({ minimum: 0, description: 'XP gained by awards during the day' }),
    rank: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'Rank at the day\'s end; null when not ranked then' })
  }), { description: 'One entry per closed day, oldest first' })
}, { description: "A member's history, day by day" }))

export const StatsHistory = named('StatsHistory', Type.Object({
  data: Type.Array(Type.Object({
    date: DATE,
    total_members: Type.Integer({ minimum: 0, description: 'Members with XP at the day\'s end' }),
    total_xp: Type.Integer({ minimum: 0, description: 'Their XP summed, at the day\'s end' }),
    active_members: Type.Integer({ minimum: 0, description: 'Members that gained XP during the day' }),
    xp_gained: Type.Integer({ minimum: 0, description: 'XP gained by awards during the day' })
  }), { description: 'One entry per closed day, oldest first' })
}, { description: "A server's stats, day by day" }))
