// Schemas shared by the routes: path parameters, the error payload, and `ref`, by which one
// named schema refers to another.
//
// How a response body gets its name in the OpenAPI document (components.schemas): it is a
// TypeBox object given an `$id` by `named`, listed in `namedSchemas` (src/schemas/index.ts, registered once
// with fastify.addSchema), and a route's `response` refers to it through the helpers of
// responses.ts, by `$ref`. Fastify's serializer (fast-json-stringify) resolves the references
// when it compiles a route, so one schema serializes the body, names it in the document and
// types the handler. A new endpoint: its body schema with an `$id`, added to `namedSchemas`,
// and `readResponses(Body, '…')` in its route.
import { type Static, type TObject, type TSchema, Type } from 'typebox'
import { SNOWFLAKE_PATTERN } from '../snowflake.js'
import { ERROR_CODES } from '../http/error-codes.js'

/** A schema with a name in the document: an object with an `$id`. */
export type NamedSchema = TSchema & { $id: string }

/** `schema`, named `id` in the document (and in `$ref`s). */
export function named<T extends TObject> (id: string, schema: T): T & { $id: string } {
  return Object.assign(schema, { $id: id })
}

/** A reference to a named schema, typed as that schema. */
export function ref<T extends NamedSchema> (schema: T) {
  return Type.Unsafe<Static<T>>({ $ref: `${schema.$id}#` })
}

const Snowflake = (description: string, example: string) => Type.String({ pattern: SNOWFLAKE_PATTERN, description, examples: [example] })

export const GuildParams = Type.Object({
  guild_id: Snowflake('Server (guild) id: 1 to 20 digits, no leading zero', '1100000000000000001')
})

export const MemberParams = Type.Object({
  guild_id: Snowflake('Server (guild) id: 1 to 20 digits, no leading zero', '1100000000000000001'),
  user_id: Snowflake('Member (user) id: 1 to 20 digits, no leading zero', '1100000000000000777')
})

export const ApiError = named('Error', Type.Object({
  statusCode: Type.Integer({ minimum: 400, maximum: 599 }),
  error: Type.String({ description: 'HTTP reason phrase' }),
  code: Type.Enum(ERROR_CODES, { type: 'string', description: 'Machine-readable error code; each has one status' }),
  message: Type.String({ description: 'What went wrong, for people; never internals' })
}, { description: 'Every error, whatever its source' }))

/** A member's profile as reads show it: what the bot recorded, or null. */
export const DisplayName = Type.Union([Type.String(), Type.Null()], {
  description: "The member's display name in the server (its nickname), as the bot recorded it; null when none was"
})
export const AvatarUrl = Type.Union([Type.String({ format: 'uri' }), Type.Null()], { description: "The member's avatar, an https URL, as the bot recorded it; null when none was" })

/** A member's way through its level (its overall XP, under the server's curve). */
export const LevelProgress = Type.Object({
  xp: Type.Integer({ minimum: 0, description: 'XP earned within the current level' }),
  required: Type.Integer({ minimum: 0, description: "XP the current level takes to complete (from level to level + 1); 0 at a custom curve's last level, which has no next" })
})
