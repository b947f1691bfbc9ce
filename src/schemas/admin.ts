// Request and response schemas of the write API (/admin/v1 on ADMIN_PORT), reused by validation,
// serialization and its own OpenAPI document (src/admin/admin-app.ts).
import { Type } from 'typebox'
import { named, ref } from './common.js'
import { MemberRecord } from './member.js'
import { Settings, SettingsPreview } from './settings.js'
import { Season } from './seasons.js'
import { ServerList } from './key-info.js'
import { response } from './responses.js'
import { REQUEST_ID_PATTERN, type ResponseHeaders } from './headers.js'
import { ADMIN_ERROR_CODES } from '../http/error-codes.js'
import { CURVES, MAX_XP } from '../levels/curves.js'
import { PLANS } from '../plans.js'
import { MAX_AWARD, MAX_LABEL_LENGTH, MAX_USERNAME_LENGTH } from '../validation.js'
import { SNOWFLAKE_PATTERN } from '../snowflake.js'
import { MAX_AWARD_ROLES, MAX_BATCH_AWARDS } from '../writer/leaderboard-writer.js'
import { OPERATION_ID_PATTERN } from '../writer/operations.js'
import { HIDE_REASONS, MAX_VISIBILITY_CHANGES } from '../writer/visibility.js'
import { SETTINGS_LIMITS } from '../settings/settings.js'
import { IMPORT_FORMATS } from '../transfer/import-formats.js'

export const IDEMPOTENCY_KEY_PATTERN = '^[A-Za-z0-9._:-]{1,128}$'

const Snowflake = Type.String({ pattern: SNOWFLAKE_PATTERN, description: '1 to 20 digits, no leading zero' })
const Username = Type.String({ minLength: 1, maxLength: MAX_USERNAME_LENGTH, description: `Display name, recorded with the write: 1 to ${MAX_USERNAME_LENGTH} characters (Unicode code points: an emoji is one)` })
const Label = Type.String({ minLength: 1, maxLength: MAX_LABEL_LENGTH, description: `1 to ${MAX_LABEL_LENGTH} characters (Unicode code points)` })
const Iso = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' })
const SetDisplayName = Type.Union([
  Type.String({ minLength: 1, maxLength: SETTINGS_LIMITS.nameLength, description: `1 to ${SETTINGS_LIMITS.nameLength} characters (code points), no control characters` }),
  Type.Null()
], { description: "The member's display name in the server (its nickname), shown on boards beside its username; null clears it, absent keeps it" })
const SetAvatarUrl = Type.Union([
  Type.String({ pattern: '^https://', maxLength: SETTINGS_LIMITS.urlLength, description: `An https URL of at most ${SETTINGS_LIMITS.urlLength} characters` }),
  Type.Null()
], { description: "The member's avatar; null clears it, absent keeps it" })
const Reason = Type.Enum([...HIDE_REASONS], { type: 'string' })

export const AdminError = named('AdminError', Type.Object({
  statusCode: Type.Integer({ minimum: 400, maximum: 599 }),
  error: Type.String({ description: 'HTTP reason phrase' }),
  code: Type.Enum(ADMIN_ERROR_CODES, { type: 'string', description: 'Machine-readable error code; each has one status' }),
  message: Type.String({ description: 'What went wrong, for people; never internals' }),
  next_claim_at: Type.Optional(Type.String({ format: 'date-time', description: '`daily_already_claimed`: when the next claim is accepted' }))
}, { description: 'Every error of the write API' }))

/** Headers of a write request. */
export const WriteRequestHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({
    pattern: IDEMPOTENCY_KEY_PATTERN,
    description: 'Makes a retry safe: the same key with the same body within 10 minutes returns the first response and applies nothing again; with another body it is 422 idempotency_key_reused'
  })),
  'x-request-id': Type.Optional(Type.String({ description: `Your id for this request, echoed back when it matches \`${REQUEST_ID_PATTERN}\`` }))
})

export const headers: ResponseHeaders = {
  'x-request-id': Type.String({ pattern: REQUEST_ID_PATTERN, required: true, description: "The request's id" })
}
export const replayHeaders: ResponseHeaders = {
  ...headers,
  'idempotent-replayed': Type.Literal('true', { description: 'Present when this is the stored answer to an earlier request with the same Idempotency-Key' })
}

export const errorResponse = (description: string) => response(AdminError, description, headers)

/** The errors every write-API route can answer. */
export const adminErrors = {
  400: errorResponse('`invalid_parameter`: a path, query or body value out of its bounds or of the wrong JSON type (no value is converted: an id sent as a number is refused), or a field or query parameter the route does not know (the message names it; for a batch, the index of the bad item)'),
  401: errorResponse('`missing_token` or `invalid_token` (unknown, rotated or revoked)'),
  403: errorResponse('`forbidden`: the token lacks the server in the path or the scope of the route'),
  '4xx': errorResponse('`request_timeout` (408), `payload_too_large` (413), `unsupported_media_type` (415: a body sent without `content-type: application/json`), `headers_too_large` (431), `not_found` (404)'),
  429: errorResponse('`rate_limited`: too many failed authentications from the client\'s address'),
  500: errorResponse('`internal_error`'),
  503: errorResponse('`service_unavailable`: Redis cannot serve now (retry with the same Idempotency-Key or op_id), or the instance is overloaded or shutting down')
}

export const idempotencyErrors = {
  409: errorResponse('`idempotency_key_in_use`: the first request with this Idempotency-Key is still running; retry after retry-after'),
  422: errorResponse('`idempotency_key_reused`: this Idempotency-Key came with another request body within 10 minutes')
}

const AwardXp = Type.Integer({ minimum: 1, maximum: MAX_AWARD })

export const AwardsBody = Type.Object({
  awards: Type.Array(Type.Object({
    user_id: Snowflake,
    xp: Type.Union([
      { ...AwardXp, description: "The award; the server's multipliers apply" },
      Type.Object({ min: AwardXp, max: AwardXp }, { additionalProperties: false, description: 'A range the service draws the award from, both ends included (MEE6 gives 15 to 25); a resend with the same op_id or Idempotency-Key answers the first draw' })
    ]),
    username: Type.Optional(Username),
    display_name: Type.Optional(SetDisplayName),
    avatar_url: Type.Optional(SetAvatarUrl),
    op_id: Type.Optional(Type.String({ pattern: OPERATION_ID_PATTERN, description: 'Names this award so that it is applied once however often it is sent (the Discord message id, say, as a string)' })),
    role_ids: Type.Optional(Type.Array(Snowflake, { maxItems: MAX_AWARD_ROLES, description: "The member's roles, as strings: those with a multiplier in the settings apply" })),
    channel_id: Type.Optional({ ...Snowflake, description: 'The channel the XP was earned in, as a string: its multiplier in the settings applies' })
  }, { additionalProperties: false }), { minItems: 1, maxItems: MAX_BATCH_AWARDS })
}, { additionalProperties: false })

export const RoleChanges = named('RoleChanges', Type.Object({
  add: Type.Array(Type.String(), { description: 'Role ids to give the member' }),
  remove: Type.Array(Type.String(), { description: 'Role ids to take from the member' })
}, { description: "What the server's role rewards ask of the bot after a level change (present only when the level crossed a reward's threshold)" }))

export const AwardResults = named('AwardResults', Type.Object({
  results: Type.Array(Type.Object({
    user_id: Type.String(),
    xp: Type.Integer({ minimum: 0, description: "The member's XP after the award (as it stands when the award was not applied)" }),
    gained: Type.Integer({ minimum: 0, description: 'XP added: floor(award × server multiplier × role and channel multipliers × boost), up to the daily cap; 0 when not applied' }),
    level: Type.Integer({ minimum: 0 }),
    leveled_up: Type.Boolean({ description: 'The award lifted the member to a higher level' }),
    applied: Type.Boolean({ description: 'false when the rules refused the award: nothing of it was applied (see reason)' }),
    reason: Type.Optional(Type.Enum(['cooldown', 'daily_cap', 'xp_limit'], {
      type: 'string',
      description: `Why the award was not applied: \`cooldown\` (within cooldown_seconds of the member's last award that added XP), \`daily_cap\` (the member reached daily_xp_cap today; with applied true, only the part under the cap was added), \`xp_limit\` (it would pass ${MAX_XP} XP)`
    })),
    roles: Type.Optional(ref(RoleChanges)),
    refused: Type.Optional(Type.Literal('xp_limit', { description: `Set when the award would pass ${MAX_XP} XP (as reason): it was not applied` })),
    replayed: Type.Optional(Type.Literal(true, {
      description: "Set when the award's op_id was applied by an earlier request: this is that request's result, and nothing was applied now (announce a level-up only if that earlier answer never reached you)"
    }))
  }), { description: 'One per award, in order' })
}, { description: 'What each award of the batch did' }))

export const MemberBody = Type.Object({
  xp: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_XP, description: 'Set outright (not multiplied)' })),
  username: Type.Optional(Username),
  display_name: Type.Optional(SetDisplayName),
  avatar_url: Type.Optional(SetAvatarUrl)
}, { additionalProperties: false, minProperties: 1 })

/** The member record as the write API answers it: hidden members too. */
export const AdminMemberRecord = named('AdminMemberRecord', Type.Object({
  ...MemberRecord.properties,
  rank: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'Its rank; null while the member is hidden' }),
  visible: Type.Boolean({ description: 'Shown on public reads (false: hidden, see PUT …/visibility)' }),
  roles: Type.Optional(ref(RoleChanges))
}, { description: "A member's record, hidden or not, after the change, with the role rewards the change of level crossed (either way)" }))

const VisibilityChange = {
  visible: Type.Boolean({ description: 'false: hide the member for `reason`; true: show it again when `reason` (absent: any reason) no longer holds' }),
  reason: Type.Optional(Type.Enum([...HIDE_REASONS], { type: 'string', description: 'Why: `left` the server, or `opted_out` of being shown. Needed to hide; a member is hidden while any reason holds' }))
}

export const VisibilityBody = Type.Object(VisibilityChange, { additionalProperties: false })

export const VisibilityBatchBody = Type.Object({
  members: Type.Array(Type.Object({ user_id: Snowflake, ...VisibilityChange }, { additionalProperties: false }), {
    minItems: 1, maxItems: MAX_VISIBILITY_CHANGES, description: 'Applied in order: a user given twice ends as its changes in turn leave it'
  })
}, { additionalProperties: false })

export const Visibility = named('Visibility', Type.Object({
  user_id: Type.String(),
  visible: Type.Boolean({ description: 'Shown on every public read' }),
  reasons: Type.Array(Reason, { description: 'Why it is hidden (empty when shown)' }),
  xp: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Its XP, shown or not; null for a user that is not a member (its first write keeps this visibility)' })
}, { description: "A user's visibility" }))

export const VisibilityResults = named('VisibilityResults', Type.Object({
  results: Type.Array(ref(Visibility), { description: 'One per user, in the order first given' })
}, { description: "Each user's visibility after the batch" }))

export const DailyBody = Type.Object({ username: Type.Optional(Username) }, { additionalProperties: false })

export const DailyResult = named('DailyResult', Type.Object({
  daily_streak: Type.Integer({ minimum: 1 }),
  last_daily_claim: Iso,
  xp: Type.Integer({ minimum: 0, description: "The member's XP (a claim adds none: award XP for it with /awards)" }),
  gained: Type.Integer({ minimum: 0 })
}, { description: 'The claim recorded' }))

export const ApiKeyRecord = named('ApiKeyRecord', Type.Object({
  id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  plan: Type.Enum([...PLANS], { type: 'string' }),
  servers: ServerList,
  created_at: Iso,
  expires_at: Type.Union([Iso, Type.Null()]),
  revoked_at: Type.Union([Iso, Type.Null()])
}, { description: 'An API key, never its secret' }))

export const CreatedApiKey = named('CreatedApiKey', Type.Object({
  ...ApiKeyRecord.properties,
  key: Type.String({ description: 'The key (`lbk_…`): shown this once, only its hash is stored' })
}, { description: 'A new or rotated key, with its plaintext' }))

export const ApiKeyList = named('ApiKeyList', Type.Object({
  data: Type.Array(ref(ApiKeyRecord), { description: 'Newest first, revoked keys included' })
}, { description: 'The keys that read a server (its own, and those of several or every server)' }))

export const KeyParams = Type.Object({ id: Type.String({ pattern: '^[0-9a-f]{16}$', description: 'The key id' }) })

export const NewKeyBody = Type.Object({
  plan: Type.Enum([...PLANS], { type: 'string' }),
  name: Type.Optional(Label),
  expires_at: Type.Optional(Iso),
  servers: Type.Optional(ServerList)
}, { additionalProperties: false })

export const KeyChangeBody = Type.Object({
  plan: Type.Optional(Type.Enum([...PLANS], { type: 'string' })),
  name: Type.Optional(Type.Union([Label, Type.Null()])),
  expires_at: Type.Optional(Type.Union([Iso, Type.Null()])),
  servers: Type.Optional(ServerList)
}, { additionalProperties: false, minProperties: 1 })

export const ImportQuery = Type.Object({
  format: Type.Enum([...IMPORT_FORMATS], { type: 'string', description: 'csv, or the leaderboard JSON of the bot named' }),
  strict: Type.Optional(Type.Boolean({ description: 'Refuse the whole file (422 import_refused, nothing written) on any bad row' })),
  keep_settings: Type.Optional(Type.Boolean({ description: "Keep the server's curve and multiplier even if the file (an export) carries others" }))
})

export const ImportResult = named('ImportResult', Type.Object({
  imported: Type.Integer({ minimum: 0 }),
  skipped: Type.Array(Type.Object({
    line: Type.Optional(Type.Integer({ description: 'CSV: the line of the bad row' })),
    page: Type.Optional(Type.Integer({ description: "A bot's JSON of several pages: the bad row's page (0-based; the first of pages one after another has none)" })),
    index: Type.Optional(Type.Integer({ description: "A bot's JSON: the bad row's index in its page's list (0-based)" })),
    reason: Type.String()
  })),
  settings: Type.Union([Type.Object({
    xp_curve: Type.Union([Type.Enum([...CURVES], { type: 'string' }), Type.Null()], { description: "null: the file's server had a custom curve, which a file cannot carry (the server's curve was kept)" }),
    xp_multiplier: Type.Number()
  }), Type.Null()], {
    description: "The curve and multiplier set from the file (an export's columns), or null"
  })
}, { description: 'What the import did' }))

export const ExportQuery = Type.Object({ format: Type.Enum(['csv', 'jsonl'], { type: 'string', default: 'csv' }) })

export const adminNamedSchemas = [RoleChanges, AdminMemberRecord, Visibility, VisibilityResults, AwardResults, DailyResult, Settings, SettingsPreview, Season, ApiKeyRecord,
  CreatedApiKey, ApiKeyList, ImportResult, AdminError]

export const responses = {
  awards: { 200: response(AwardResults, 'Each award\'s result, in order', replayHeaders), ...idempotencyErrors, ...adminErrors },
  member: { 200: response(AdminMemberRecord, "The member's record after the change", replayHeaders), ...idempotencyErrors, ...adminErrors },
  visibility: { 200: response(Visibility, "The user's visibility after the change", replayHeaders), ...idempotencyErrors, ...adminErrors },
  visibilityBatch: { 200: response(VisibilityResults, "Each user's visibility after the batch", replayHeaders), ...idempotencyErrors, ...adminErrors },
  removed: {
    204: Type.Unsafe<undefined>({ type: 'null', description: 'Removed', headers: replayHeaders }),
    404: errorResponse('`member_not_found`'),
    ...idempotencyErrors,
    ...adminErrors
  },
  daily: {
    200: response(DailyResult, 'The claim', replayHeaders),
    409: errorResponse('`daily_already_claimed` (with `next_claim_at` and retry-after), or `idempotency_key_in_use`'),
    422: idempotencyErrors[422],
    ...adminErrors
  },
  settings: { 200: response(Settings, "The server's settings", replayHeaders), ...idempotencyErrors, ...adminErrors },
  settingsPreview: { 200: response(SettingsPreview, 'What the settings would change; nothing was changed', headers), ...adminErrors },
  seasonEnded: { 200: response(Season, 'The new season (the one ended is kept, read-only)', replayHeaders), ...idempotencyErrors, ...adminErrors },
  keyList: { 200: response(ApiKeyList, 'The keys', headers), ...adminErrors },
  keyCreated: { 201: response(CreatedApiKey, 'The new key, shown this once', replayHeaders), ...idempotencyErrors, ...adminErrors },
  keyRotated: {
    200: response(CreatedApiKey, 'The key with its new secret, shown this once', replayHeaders),
    404: errorResponse('`api_key_not_found`'),
    ...idempotencyErrors,
    ...adminErrors
  },
  keyChanged: {
    200: response(ApiKeyRecord, 'The key after the change', replayHeaders),
    404: errorResponse('`api_key_not_found`'),
    ...idempotencyErrors,
    ...adminErrors
  },
  keyRevoked: {
    204: Type.Unsafe<undefined>({ type: 'null', description: 'Revoked (refused everywhere within 5 s)', headers: replayHeaders }),
    404: errorResponse('`api_key_not_found`'),
    ...adminErrors
  },
  exported: {
    200: {
      description: 'Every member in rank order, streamed: CSV with a header, or one JSON object per line',
      headers,
      content: {
        'text/csv': { schema: Type.String() },
        'application/x-ndjson': { schema: Type.String() }
      }
    },
    ...adminErrors
  },
  imported: {
    200: response(ImportResult, 'Imported; bad rows skipped and listed', replayHeaders),
    ...adminErrors,
    400: errorResponse('`invalid_import_file`: the body cannot be read as a whole (not JSON, no CSV header naming the columns); or `invalid_parameter`: a path, query or header value out of its bounds'),
    409: idempotencyErrors[409],
    413: errorResponse('`payload_too_large`: the body is over the import limit (256 MiB, or IMPORT_BODY_LIMIT_MB); nothing written when its Content-Length said so'),
    422: errorResponse('`import_refused`: with strict=true, the file had bad rows; nothing was written. Or `idempotency_key_reused`: this Idempotency-Key came with another request body within 10 minutes')
  }
}
