// GET /servers/{guild_id}/leaderboard/stream, /members/{user_id}/stream and /stats/stream: the
// plain endpoints' bodies as live updates (src/pipeline/live.ts). Same parameters, validation,
// authentication, quota and errors as the plain endpoints; each names what it shows (a topic
// id from its validated parameters) and how to read and serialize it.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { GuildParams, MemberParams } from '../../schemas/common.js'
import { LIMIT_DEFAULT, LeaderboardPage, LeaderboardQuery } from '../../schemas/leaderboard.js'
import { MemberRecord } from '../../schemas/member.js'
import { GuildStats } from '../../schemas/stats.js'
import { leaderboardStreamResponses, memberStreamResponses, statsStreamResponses, StreamRequestHeaders } from '../../schemas/streams.js'
import { plainIntegers } from '../../schemas/messages.js'
import { memberFound } from '../../reader/leaderboard-reader.js'

// The plain endpoints' 200 bodies, by reference: the same serializer, so the same bytes.
const PAGE_BODY = { $ref: `${LeaderboardPage.$id}#` }
const MEMBER_BODY = { $ref: `${MemberRecord.$id}#` }
const STATS_BODY = { $ref: `${GuildStats.$id}#` }

function serializerOf (reply: FastifyReply, schema: { $ref: string }): (value: unknown) => string {
  return reply.compileSerializationSchema(schema) as (value: unknown) => string
}

const streamRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { leaderboard, live } = fastify

  fastify.get('/servers/:guild_id/leaderboard/stream', {
    schema: {
      operationId: 'streamLeaderboard',
      tags: ['live'],
      summary: 'A page of the leaderboard, sent again whenever it changes (server-sent events)',
      params: GuildParams,
      querystring: LeaderboardQuery,
      headers: StreamRequestHeaders,
      response: leaderboardStreamResponses
    },
    preValidation: plainIntegers(['limit', 'page']),
    config: { stream: true },
    compress: false
  }, async (request, reply) => {
    const { guild_id: guildId } = request.params
    const { page = 1, limit = LIMIT_DEFAULT, period = 'all' } = request.query
    return await live.open(request, reply, {
      id: `leaderboard ${guildId} ${period} ${page} ${limit}`,
      guildId,
      event: 'leaderboard',
      perDay: period !== 'all',
      read: async () => await leaderboard.readPage(guildId, page, limit, period),
      serialize: serializerOf(reply, PAGE_BODY)
    })
  })

  fastify.get('/servers/:guild_id/members/:user_id/stream', {
    schema: {
      operationId: 'streamMember',
      tags: ['live'],
      summary: "One member's record, sent again whenever it changes (server-sent events)",
      params: MemberParams,
      headers: StreamRequestHeaders,
      response: memberStreamResponses
    },
    config: { stream: true },
    compress: false
  }, async (request, reply) => {
    const { guild_id: guildId, user_id: userId } = request.params
    return await live.open(request, reply, {
      id: `member ${guildId} ${userId}`,
      guildId,
      event: 'member',
      perDay: true, // daily_streak
      read: async () => memberFound(await leaderboard.readMember(guildId, userId), guildId, userId),
      serialize: serializerOf(reply, MEMBER_BODY)
    })
  })

  fastify.get('/servers/:guild_id/stats/stream', {
    schema: {
      operationId: 'streamStats',
      tags: ['live'],
      summary: "The server's aggregates and settings, sent again whenever they change (server-sent events)",
      params: GuildParams,
      headers: StreamRequestHeaders,
      response: statsStreamResponses
    },
    config: { stream: true },
    compress: false
  }, async (request, reply) => {
    const { guild_id: guildId } = request.params
    return await live.open(request, reply, {
      id: `stats ${guildId}`,
      guildId,
      event: 'stats',
      perDay: false,
      read: async () => await leaderboard.readStats(guildId),
      serialize: serializerOf(reply, STATS_BODY)
    })
  })
}

export default streamRoutes
