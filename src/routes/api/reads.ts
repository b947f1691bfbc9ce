// The read endpoints of the public API, each one declaration (src/pipeline/read-routes.ts):
// its path and parameters, the server it reads, whether its body turns with the UTC day, the read
// that makes it, its live-update stream and its typed client methods. Everything else (the key
// check, the count, the server scope, the cache, the ETag, the 304, the stream's topic, the
// OpenAPI entry, the client) is derived from these.
import { GuildParams, MemberParams } from '../../schemas/common.js'
import { AroundPage, AroundQuery, LeaderboardPage, LeaderboardQuery, LIMIT_DEFAULT, RADIUS_DEFAULT } from '../../schemas/leaderboard.js'
import { IDS_MAX, MemberList, MemberRecord, MembersQuery } from '../../schemas/member.js'
import { GuildStats } from '../../schemas/stats.js'
import { memberNotFound } from '../../schemas/responses.js'
import { distinctIds, plainIntegers } from '../../schemas/messages.js'
import { memberFound } from '../../reader/leaderboard-reader.js'
import { readDeclaration } from '../../pipeline/read-routes.js'

export const reads = [
  readDeclaration({
    path: '/servers/:guild_id/leaderboard',
    operationId: 'getLeaderboard',
    tags: ['leaderboard'],
    summary: 'Members ranked by XP (all time, or gained in a week or month), a page at a time',
    params: GuildParams,
    query: LeaderboardQuery,
    body: LeaderboardPage,
    description: 'One page of the leaderboard',
    server: (params) => params.guild_id,
    // A period board's body depends on the week or month, which turn at a UTC midnight.
    perDay: (query) => query.period !== undefined && query.period !== 'all',
    checks: [plainIntegers(['limit', 'page'])],
    // Validation has filled in the defaults; the fallbacks only satisfy the type.
    read: async (reader, { params, query }) =>
      await reader.readPage(params.guild_id, query.page ?? 1, query.limit ?? LIMIT_DEFAULT, query.period ?? 'all'),
    stream: { operationId: 'streamLeaderboard', summary: 'A page of the leaderboard, sent again whenever it changes (server-sent events)', event: 'leaderboard' },
    public: { operationId: 'getPublicLeaderboard', streamOperationId: 'streamPublicLeaderboard' },
    client: {
      method: 'leaderboard',
      doc: 'A page of the board: all time, or XP gained in a `period`.',
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
    body: MemberRecord,
    description: "The member's record",
    errors: memberNotFound,
    server: (params) => params.guild_id,
    perDay: true, // daily_streak
    read: async (reader, { params }) => memberFound(await reader.readMember(params.guild_id, params.user_id), params.guild_id, params.user_id),
    stream: { operationId: 'streamMember', summary: "One member's record, sent again whenever it changes (server-sent events)", event: 'member' },
    public: { operationId: 'getPublicMember', streamOperationId: 'streamPublicMember', notFound: '`member_not_found`: the user is not a member (or is hidden)' },
    client: {
      method: 'member',
      doc: 'One member\'s record; a non-member throws `member_not_found`.',
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
    errors: memberNotFound,
    server: (params) => params.guild_id,
    checks: [plainIntegers(['radius'])],
    read: async (reader, { params, query }) =>
      memberFound(await reader.readAround(params.guild_id, params.user_id, query.radius ?? RADIUS_DEFAULT), params.guild_id, params.user_id),
    client: { method: 'around', doc: "The ranks within `radius` (5) of a member's." }
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
    server: (params) => params.guild_id,
    perDay: true, // the records' daily_streak
    checks: [distinctIds('ids', IDS_MAX)],
    read: async (reader, { params, query }) => await reader.readMembers(params.guild_id, query.ids.split(',')),
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
    stream: { operationId: 'streamStats', summary: "The server's aggregates and settings, sent again whenever they change (server-sent events)", event: 'stats' },
    public: { operationId: 'getPublicStats', streamOperationId: 'streamPublicStats' },
    client: {
      method: 'stats',
      doc: "The server's aggregates and settings.",
      watch: { method: 'watchStats', doc: "The server's aggregates and settings as they change." }
    }
  })
]
