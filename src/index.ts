// The package's main entry: the writer side a bot imports, and the pieces to read with. The
// server (buildApp, its configuration) is `guild-leaderboard/server` (./server-entry.ts).
export { createRedis, redisNow, type RedisClient, type RedisConnectionOptions } from './redis/client.js'
export { KeyBuilder, boardMember, userIdFromBoardMember, type GuildKeys } from './redis/keys.js'
export {
  LeaderboardWriter, MAX_CLAIM_AHEAD_MS, MAX_AWARD_ROLES, MAX_BATCH_AWARDS,
  type AwardReason, type AwardResult, type AwardRules, type AwardXp, type BatchAward, type BatchAwardResult, type BulkMember, type DailyClaim,
  type GuildSettingsInput, type MemberRef, type SetXpResult
} from './writer/leaderboard-writer.js'
export type { RoleChanges } from './rules/role-rewards.js'
export type { GuildSettings } from './settings/settings.js'
export type { SettingsPreview } from './settings/settings-preview.js'
export {
  LeaderboardReader, type Around, type GuildStats, type LeaderboardEntry, type LeaderboardPage, type MemberList, type MemberRecord
} from './reader/leaderboard-reader.js'
export { RedisClock } from './redis/clock.js'
export { PERIODS, isoWeek, utcMonth, type Period, type PeriodSpan } from './periods/periods.js'
export { ApiKeyStore, API_KEY_PREFIX, hashApiKey, type ApiKeyInfo, type CreatedApiKey } from './api-keys/api-keys.js'
export { PLANS, DEFAULT_PLAN_LIMITS, type Plan } from './plans.js'
export { CURVES, DEFAULT_CURVE, MAX_XP, levelForXp, levelProgress, xpForLevel, xpToNextLevel, type Curve, type CustomCurve, type LevelCurve } from './levels/curves.js'
export { MAX_AWARD } from './validation.js'
export * from './errors.js'
export {
  importMembers, describePosition, IMPORT_CHUNK, MAX_LISTED_PROBLEMS,
  type ImportedSettings, type ImportOptions, type ImportProblem, type ImportProgress, type ImportSummary, type RowPosition, type SourceRow
} from './transfer/import-members.js'
export {
  importFile, importStream, openImportFile, openImportStream, csvSource, importFormatOf, formatFromName,
  IMPORT_FORMATS, JSON_IMPORT_FORMATS, CSV_REQUIRED_COLUMNS, CSV_SETTINGS_COLUMNS,
  type ImportFileOptions, type ImportFormat, type JsonImportFormat, type RowSource
} from './transfer/import-sources.js'
export { jsonSource, type JsonSourceOptions } from './transfer/json-pages.js'
export {
  exportMembers, MemberExport, EXPORT_COLUMNS, EXPORT_FORMATS, EXPORT_CHUNK,
  type ExportedMember, type ExportFormat, type ExportOptions
} from './transfer/export-members.js'
export * from './client/index.js'
// The client's verifier too, built on the standardwebhooks package (shadows the client's, same signature).
export { verifyWebhook } from './webhooks/verify.js'
export { WebhookStore, MAX_WEBHOOKS_PER_SERVER, type DeliveryAttempt, type WebhookInfo } from './webhooks/webhook-store.js'
export { EVENT_TYPES, type EventType, type ServerEvent, type SubscribableEventType } from './webhooks/events.js'
