// GET /servers/{guild_id}/leaderboard, /members/{user_id} and /stats. Each route declares what
// its body depends on (its validated parameters, and in `etagPerDay` whether the UTC day) and
// the read that makes it; src/pipeline/reads.ts derives the cache key and the ETag from that.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { GuildParams, MemberParams } from '../../schemas/common.js'
import { ReadRequestHeaders } from '../../schemas/headers.js'
import { LIMIT_DEFAULT, LeaderboardQuery, leaderboardResponses } from '../../schemas/leaderboard.js'
import { memberResponses } from '../../schemas/member.js'
import { statsResponses } from '../../schemas/stats.js'
import { plainIntegers } from '../../schemas/messages.js'
import { memberFound } from '../../reader/leaderboard-reader.js'

const serverRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { leaderboard } = fastify

  fastify.get('/servers/:guild_id/leaderboard', {
    schema: {
      operationId: 'getLeaderboard',
      tags: ['leaderboard'],
      summary: 'Members ranked by XP (all time, or gained in a week or month), a page at a time',
      params: GuildParams,
      querystring: LeaderboardQuery,
      headers: ReadRequestHeaders,
      response: leaderboardResponses
    },
    preValidation: plainIntegers(['limit', 'page']),
    // A period board's body depends on the week or month, which turn at a UTC midnight.
    config: { etagPerDay: (request) => ![undefined, 'all'].includes((request.query as { period?: string }).period) },
    compress: false // serveRead sends compressed bodies from its cache
  }, async (request, reply) => {
    const { guild_id: guildId } = request.params
    // Validation has filled in the defaults; the fallbacks only satisfy the type.
    const { page = 1, limit = LIMIT_DEFAULT, period = 'all' } = request.query
    return await fastify.serveRead(request, reply,
      async () => await leaderboard.readPage(guildId, page, limit, period))
  })

  fastify.get('/servers/:guild_id/members/:user_id', {
    schema: {
      operationId: 'getMember',
      tags: ['members'],
      summary: "One member's XP, level and progress, rank, daily streak, and XP this week and month",
      params: MemberParams,
      headers: ReadRequestHeaders,
      response: memberResponses
    },
    config: { etagPerDay: true },
    compress: false
  }, async (request, reply) => {
    const { guild_id: guildId, user_id: userId } = request.params
    return await fastify.serveRead(request, reply, async () =>
      memberFound(await leaderboard.readMember(guildId, userId), guildId, userId))
  })

  fastify.get('/servers/:guild_id/stats', {
    schema: {
      operationId: 'getStats',
      tags: ['stats'],
      summary: 'Member count, total XP, average level and curve settings',
      params: GuildParams,
      headers: ReadRequestHeaders,
      response: statsResponses
    },
    compress: false
  }, async (request, reply) => {
    const { guild_id: guildId } = request.params
    return await fastify.serveRead(request, reply, async () => await leaderboard.readStats(guildId))
  })
}

export default serverRoutes
