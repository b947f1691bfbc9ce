// The named schemas: each is added once with fastify.addSchema (plugins/openapi.ts), so routes
// refer to it by `$ref` and the OpenAPI document lists it under its `$id` in components.schemas.
// A schema referred to by another must be here too.
import { ApiError } from './common.js'
import { AroundPage, LeaderboardEntry, LeaderboardPage } from './leaderboard.js'
import { MemberList, MemberRecord } from './member.js'
import { GuildStats } from './stats.js'
import { HealthStatus } from './health.js'
import { KeyInfo } from './key-info.js'
import { RoleRewards } from './role-rewards.js'
import { Season, SeasonList } from './seasons.js'
import { MemberHistory, StatsHistory } from './history.js'

export const namedSchemas = [LeaderboardEntry, LeaderboardPage, AroundPage, MemberRecord, MemberList, GuildStats, RoleRewards, Season, SeasonList,
  MemberHistory, StatsHistory, KeyInfo, ApiError, HealthStatus]
