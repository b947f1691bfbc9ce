// The client alone, as the package's `guild-leaderboard/client` entry: no runtime import beyond
// these files, so a dashboard's bundle carries none of the server.
export { LeaderboardClient, type ApiResult, type CallOptions, type LeaderboardClientOptions, type RetryInfo, type TransportOptions } from './leaderboard-client.js'
export { PublicBoardClient, type PublicBoardClientOptions } from './public-board-client.js'
export { LeaderboardApiError, type ApiErrorCode, type RateLimit } from './api-error.js'
export type {
  AroundPage, AroundPage as Around, ErrorBody, ErrorCode, GuildStats, KeyInfo, LeaderboardEntry, LeaderboardPage, MemberList, MemberRecord, Period, RoleRewards
} from './types.js'
export type { LiveUpdate, WatchOptions } from './live-stream.js'
export { verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions, type WebhookHeaders } from './webhook-verifier.js'
export type { MemberLeveledUpEvent, MemberRankEnteredTopEvent, PingEvent, SeasonEndedEvent, WebhookEvent } from './webhook-events.js'
