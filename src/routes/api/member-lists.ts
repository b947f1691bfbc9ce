// GET /servers/{guild_id}/members?ids=… and /members/{user_id}/around: reads of several members
// in one request (counted once). Served like the others, through src/pipeline/reads.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { GuildParams, MemberParams } from '../../schemas/common.js'
import { ReadRequestHeaders } from '../../schemas/headers.js'
import { AroundQuery, aroundResponses, RADIUS_DEFAULT } from '../../schemas/leaderboard.js'
import { IDS_MAX, MembersQuery, membersResponses } from '../../schemas/member.js'
import { distinctIds, plainIntegers } from '../../schemas/messages.js'
import { memberFound } from '../../reader/leaderboard-reader.js'

const memberListRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { leaderboard } = fastify

  fastify.get('/servers/:guild_id/members/:user_id/around', {
    schema: {
      operationId: 'getLeaderboardAroundMember',
      tags: ['leaderboard'],
      summary: 'The members ranked just above and below one member',
      params: MemberParams,
      querystring: AroundQuery,
      headers: ReadRequestHeaders,
      response: aroundResponses
    },
    preValidation: plainIntegers(['radius']),
    compress: false // serveRead sends compressed bodies from its cache
  }, async (request, reply) => {
    const { guild_id: guildId, user_id: userId } = request.params
    const { radius = RADIUS_DEFAULT } = request.query
    return await fastify.serveRead(request, reply, async () =>
      memberFound(await leaderboard.readAround(guildId, userId, radius), guildId, userId))
  })

  fastify.get('/servers/:guild_id/members', {
    schema: {
      operationId: 'getMembers',
      tags: ['members'],
      summary: `Up to ${IDS_MAX} members' records at once`,
      params: GuildParams,
      querystring: MembersQuery,
      headers: ReadRequestHeaders,
      response: membersResponses
    },
    preValidation: distinctIds('ids', IDS_MAX),
    config: { etagPerDay: true }, // the records' daily_streak
    compress: false
  }, async (request, reply) => {
    const { guild_id: guildId } = request.params
    const { ids } = request.query
    return await fastify.serveRead(request, reply,
      async () => await leaderboard.readMembers(guildId, ids.split(',')))
  })
}

export default memberListRoutes
