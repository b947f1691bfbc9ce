// The read endpoints of the public API, each one declaration (src/pipeline/read-routes.ts):
// its path and parameters, the server it reads, whether its body turns with the UTC day, the read
// that makes it, its live-update stream and its typed client methods. Everything else (the key
// check, the count, the server scope, the cache, the ETag, the 304, the stream's topic, the
// OpenAPI entry, the client) is derived from these.
import { GuildParams, MemberParams } from '../../schemas/common.js'
import { AroundPage, AroundQuery, LeaderboardPage, LeaderboardQuery, LIMIT_DEFAULT, RADIUS_DEFAULT } from '../../schemas/leaderboard.js'
import { IDS_MAX, MemberList, MemberQuery, MemberRecord, MembersQuery } from '../../schemas/member.js'
import { GuildStats } from '../../schemas/stats.js'
import { RoleRewards } from '../../schemas/role-rewards.js'
import { SeasonList, SeasonsQuery } from '../../schemas/seasons.js'
import { HISTORY_DAYS_DEFAULT, HistoryQuery, MemberHistory, StatsHistory } from '../../schemas/history.js'
import { memberNotFound, memberOrSeasonNotFound, seasonNotFound } from '../../schemas/responses.js'
import { distinctIds, notTogether, plainIntegers } from '../../schemas/messages.js'
import { memberFound, type SeasonRef } from '../../reader/leaderboard-reader.js'
import { readDeclaration } from '../../pipeline/read-routes.js'

/** The board a validated `season` names (absent: all time). */
function seasonOf (query: { season?: string }): SeasonRef {
  return query.season === undefined || query.season === 'current' ? query.season : Number(query.season)
}

export const reads = [
  readDeclaration({
    path: '/servers/:guild_id/leaderboard',
    operationId: 'getLeaderboard',
    tags: ['leaderboard'],
    summary: 'Members ranked by XP (all time, gained in a week or month, or in a season), a page at a time',
    params: GuildParams,
    query: LeaderboardQuery,
    body: LeaderboardPage,
    description: 'One page of the leaderboard',
    errors: seasonNotFound,
    server: (params) => params.guild_id,
    // A period board's body depends on the week or month, which turn at a UTC midnight.
    perDay: (query) => query.period !== undefined && query.period !== 'all',
    checks: [plainIntegers(['limit', 'page']), notTogether('season', 'period', "a season's board already holds the XP gained in it")],
    // Validation has filled in the defaults; the fallbacks only satisfy the type.
    read: async (reader, { params, query }) =>
      await reader.readPage(params.guild_id, query.page ?? 1, query.limit ?? LIMIT_DEFAULT, query.period ?? 'all', seasonOf(query)),
    stream: { operationId: 'streamLeaderboard', summary: 'A page of the leaderboard, sent again whenever it changes (server-sent events)', event: 'leaderboard' },
    public: { operationId: 'getPublicLeaderboard', streamOperationId: 'streamPublicLeaderboard' },
    client: {
      method: 'leaderboard',
      doc: 'A page of the board: all time, XP gained in a `period`, or in a `season`.',
      watch: {
        method: 'watchLeaderboard',
        doc: 'A page of the board as it changes: the current page at once, then each change (at most one a\n' +
          'second), until `options.signal` aborts. `for await (const { data } of client.watchLeaderboard(g)) …`'
      }
    }
  }),
  readDeclaration({
    path: '/servers/:guild_id/members/:user_id',
    operationId: 'getMember',
    tags: ['members'],
    summary: "One member's XP, level and progress, rank, daily streak, and XP this week and month",
    params: MemberParams,
    query: MemberQuery,
    body: MemberRecord,
    description: "The member's record",
    errors: memberOrSeasonNotFound,
    server: (params) => params.guild_id,
    perDay: true, // daily_streak
    read: async (reader, { params, query }) =>
      memberFound(await reader.readMember(params.guild_id, params.user_id, seasonOf(query)), params.guild_id, params.user_id),
    stream: { operationId: 'streamMember', summary: "One member's record, sent again whenever it changes (server-sent events)", event: 'member' },
    public: { operationId: 'getPublicMember', streamOperationId: 'streamPublicMember', notFound: '`member_not_found`: the user is not a member (or is hidden)' },
    client: {
      method: 'member',
      doc: 'One member\'s record (its XP and rank in a `season`, if given); a non-member throws `member_not_found`.',
      watch: { method: 'watchMember', doc: "One member's record as it changes; a non-member (or one removed meanwhile) throws `member_not_found`." }
    }
  }),
  readDeclaration({
    path: '/servers/:guild_id/members/:user_id/around',
    operationId: 'getLeaderboardAroundMember',
    tags: ['leaderboard'],
    summary: 'The members ranked just above and below one member',
    params: MemberParams,
    query: AroundQuery,
    body: AroundPage,
    description: 'The leaderboard around the member',
    errors: memberOrSeasonNotFound,
    server: (params) => params.guild_id,
    checks: [plainIntegers(['radius'])],
    read: async (reader, { params, query }) =>
      memberFound(await reader.readAround(params.guild_id, params.user_id, query.radius ?? RADIUS_DEFAULT, seasonOf(query)), params.guild_id, params.user_id),
    client: { method: 'around', doc: "The ranks within `radius` (5) of a member's, all time or in a `season`." }
  }),
  readDeclaration({
    path: '/servers/:guild_id/members',
    operationId: 'getMembers',
    tags: ['members'],
    summary: `Up to ${IDS_MAX} members' records at once`,
    params: GuildParams,
    query: MembersQuery,
    body: MemberList,
    description: 'The records of the requested members',
    errors: seasonNotFound,
    server: (params) => params.guild_id,
    perDay: true, // the records' daily_streak
    checks: [distinctIds('ids', IDS_MAX)],
    read: async (reader, { params, query }) => await reader.readMembers(params.guild_id, query.ids.split(','), seasonOf(query)),
    client: { method: 'members', doc: 'Up to 100 members\' records in one request; ids that are not members come back in `missing`.', lists: { ids: 'userIds' } }
  }),
  readDeclaration({
    path: '/servers/:guild_id/stats',
    operationId: 'getStats',
    tags: ['stats'],
    summary: 'Member count, total XP, average level and curve settings',
    params: GuildParams,
    body: GuildStats,
    description: "The server's aggregates and settings",
    server: (params) => params.guild_id,
    read: async (reader, { params }) => await reader.readStats(params.guild_id),
    stream: {
      operationId: 'streamStats',
      summary: "The server's aggregates and settings, sent again whenever they change, and the server's events as they happen (server-sent events)",
      event: 'stats',
      serverEvents: true // member.leveled_up, member.rank_entered_top, season.ended
    },
    public: { operationId: 'getPublicStats', streamOperationId: 'streamPublicStats' },
    client: {
      method: 'stats',
      doc: "The server's aggregates and settings.",
      watch: { method: 'watchStats', doc: "The server's aggregates and settings as they change." }
    }
  }),
  readDeclaration({
    path: '/servers/:guild_id/role-rewards',
    operationId: 'getRoleRewards',
    tags: ['stats'],
    summary: 'The roles the server gives at each level (stacked or replaced), with the XP each level takes',
    params: GuildParams,
    body: RoleRewards,
    description: "The server's role rewards",
    server: (params) => params.guild_id,
    read: async (reader, { params }) => await reader.readRoleRewards(params.guild_id),
    client: { method: 'roleRewards', doc: 'The roles the server gives at each level, and the XP each level takes.' }
  }),
  readDeclaration({
    path: '/servers/:guild_id/seasons',
    operationId: 'getSeasons',
    tags: ['seasons'],
    summary: "The server's seasons, newest first: the current one and the ended ones it keeps",
    params: GuildParams,
    query: SeasonsQuery,
    body: SeasonList,
    description: "A page of the server's seasons",
    server: (params) => params.guild_id,
    checks: [plainIntegers(['limit', 'page'])],
    read: async (reader, { params, query }) => await reader.readSeasons(params.guild_id, query.page ?? 1, query.limit ?? LIMIT_DEFAULT),
    client: { method: 'seasons', doc: "The server's seasons, newest first (the current one, then the ended ones it keeps)." }
  }),
  readDeclaration({
    path: '/servers/:guild_id/members/:user_id/history',
    operationId: 'getMemberHistory',
    tags: ['history'],
    summary: "One member's XP, XP gained and rank at the end of each of the last days",
    params: MemberParams,
    query: HistoryQuery,
    body: MemberHistory,
    description: "The member's history",
    errors: memberNotFound,
    server: (params) => params.guild_id,
    checks: [plainIntegers(['days'])],
    read: async (reader, { params, query }) =>
      memberFound(await reader.readMemberHistory(params.guild_id, params.user_id, query.days ?? HISTORY_DAYS_DEFAULT), params.guild_id, params.user_id),
    client: { method: 'memberHistory', doc: "A member's XP, XP gained and rank at the end of each of the last `days` (30) days." }
  }),
  readDeclaration({
    path: '/servers/:guild_id/stats/history',
    operationId: 'getStatsHistory',
    tags: ['history'],
    summary: "The server's members, XP, active members and XP gained, day by day",
    params: GuildParams,
    query: HistoryQuery,
    body: StatsHistory,
    description: "The server's history",
    server: (params) => params.guild_id,
    checks: [plainIntegers(['days'])],
    read: async (reader, { params, query }) => await reader.readStatsHistory(params.guild_id, query.days ?? HISTORY_DAYS_DEFAULT),
    client: { method: 'statsHistory', doc: "The server's members with XP, total XP, active members and XP gained at the end of each of the last `days` (30) days." }
  })
]
