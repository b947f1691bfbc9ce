// GET /api/v1/me: what a key may read, for a dashboard that needs to know which servers to show.
import { Type } from 'typebox'
import { named } from './common.js'
import { PLANS } from '../plans.js'
import { SNOWFLAKE_PATTERN } from '../snowflake.js'
import { errorResponses, response } from './responses.js'
import { responseHeaders } from './headers.js'

/** '*' for every server, or the list of server ids. */
export const ServerList = Type.Union([
  Type.Literal('*', { description: 'every server of the installation' }),
  Type.Array(Type.String({ pattern: SNOWFLAKE_PATTERN }), { minItems: 1, maxItems: 1000, description: 'server ids' })
])

export const KeyInfo = named('KeyInfo', Type.Object({
  key_id: Type.String({ description: 'The key\'s id (the part of the key between `lbk_` and the secret)' }),
  name: Type.Union([Type.String(), Type.Null()], { description: 'The label given when the key was made' }),
  plan: Type.Enum([...PLANS], { type: 'string' }),
  servers: ServerList,
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'ISO 8601 UTC, or null: never' })
}, { description: 'The key used for this request: its plan and the servers it reads' }))

export const keyInfoResponses = {
  200: response(KeyInfo, 'The key making the request', responseHeaders.counted),
  ...errorResponses
}
