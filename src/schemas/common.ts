// Schemas shared by the routes: path parameters and the error payload.
import { Type } from 'typebox'
import { SNOWFLAKE_PATTERN } from '../validation.js'

const Snowflake = (description: string) => Type.String({ pattern: SNOWFLAKE_PATTERN, description, examples: ['1100000000000000001'] })

export const GuildParams = Type.Object({
  guild_id: Snowflake('Server (guild) id: 1 to 20 digits, no leading zero')
})

export const MemberParams = Type.Object({
  guild_id: Snowflake('Server (guild) id: 1 to 20 digits, no leading zero'),
  user_id: Snowflake('Member (user) id: 1 to 20 digits, no leading zero')
})

export const ErrorResponse = Type.Object({
  statusCode: Type.Integer(),
  error: Type.String({ description: 'HTTP reason phrase' }),
  code: Type.String({ description: 'Machine-readable error code (see README, "Errors")' }),
  message: Type.String()
}, { description: 'Every error, whatever its source' })

/** The error responses every authenticated endpoint can give. */
export const errorResponses = {
  400: ErrorResponse,
  401: ErrorResponse,
  403: ErrorResponse,
  429: ErrorResponse,
  500: ErrorResponse,
  503: ErrorResponse
}
