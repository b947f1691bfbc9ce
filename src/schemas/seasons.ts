import { Type } from 'typebox'
import { named, ref } from './common.js'
import { LIMIT_DEFAULT, LIMIT_MAX, PAGE_MAX } from './leaderboard.js'

export const Season = named('Season', Type.Object({
  id: Type.Integer({ minimum: 1, description: 'Seasons are numbered from 1 per server' }),
  name: Type.String({ description: 'The name given when the season before it was ended by hand, else "Season N"' }),
  started_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'ISO 8601 UTC; null for a first season that began before the server\'s first write with seasons'
  }),
  ended_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'ISO 8601 UTC; null for the current season' })
}, { description: 'A season of the server' }))

export const SeasonsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMIT_MAX, default: LIMIT_DEFAULT, description: 'Seasons per page' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: 1, description: 'Page number, newest season first' }))
})

export const SeasonList = named('SeasonList', Type.Object({
  data: Type.Array(ref(Season), { description: 'Newest first: the current season, then the ended ones the server keeps (season_retention)' }),
  total: Type.Integer({ minimum: 1, description: 'Number of seasons listed: the current one and the ended ones kept' }),
  page: Type.Integer({ minimum: 1, description: 'The requested page (past the end: data is empty)' })
}, { description: "A page of the server's seasons" }))

export const EndSeasonBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The new season\'s name (1 to 100 characters); "Season N" by default' }))
}, { additionalProperties: false })
