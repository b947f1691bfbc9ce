// GET /servers/{guild_id}/leaderboard, /members/{user_id} and /stats.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { GuildParams, MemberParams } from '../../schemas/common.js'
import { LIMIT_DEFAULT, LeaderboardQuery, leaderboardResponses } from '../../schemas/leaderboard.js'
import { memberResponses } from '../../schemas/member.js'
import { statsResponses } from '../../schemas/stats.js'
import { plainIntegers } from '../../schemas/messages.js'

const security = [{ apiKey: [] }]

const serverRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/servers/:guild_id/leaderboard', {
    schema: {
      tags: ['leaderboard'],
      summary: 'Members ranked by XP, a page at a time',
      security,
      params: GuildParams,
      querystring: LeaderboardQuery,
      response: leaderboardResponses
    },
    preValidation: plainIntegers(['limit', 'page'])
  }, async (request) => {
    // Validation has filled in the defaults; the fallbacks only satisfy the type.
    const { page = 1, limit = LIMIT_DEFAULT } = request.query
    return await fastify.leaderboard.page(request.params.guild_id, page, limit)
  })

  fastify.get('/servers/:guild_id/members/:user_id', {
    schema: {
      tags: ['members'],
      summary: "One member's XP, level, rank and daily streak",
      security,
      params: MemberParams,
      response: memberResponses
    }
  }, async (request) => {
    return await fastify.leaderboard.member(request.params.guild_id, request.params.user_id)
  })

  fastify.get('/servers/:guild_id/stats', {
    schema: {
      tags: ['stats'],
      summary: 'Member count, total XP, average level and curve settings',
      security,
      params: GuildParams,
      response: statsResponses
    }
  }, async (request) => {
    return await fastify.leaderboard.stats(request.params.guild_id)
  })
}

export default serverRoutes
