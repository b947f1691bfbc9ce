// Members over the write API (scope `write`): each route maps its request to one
// operation of the writer library (src/writer/), with the library's rules and idempotency, and
// reads its answer with the reader, as the public routes do.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { GuildParams, MemberParams } from '../../schemas/common.js'
import { AwardsBody, DailyBody, MemberBody, responses, WriteRequestHeaders } from '../../schemas/admin.js'
import { memberFound } from '../../reader/leaderboard-reader.js'
import { opIdFor } from '../../pipeline/idempotency.js'
import { DailyAlreadyClaimedError, DailyClaimRefusedError, MemberNotFoundError } from '../../errors.js'
import { redisNow } from '../../redis/client.js'
import { guildOf } from '../../pipeline/access.js'
import type { RoleChanges } from '../../rules/role-rewards.js'

/** A batch of 1,000 awards is about 100 KB of JSON. */
const AWARDS_BODY_LIMIT = 1024 * 1024
const DAY_MS = 24 * 3600 * 1000

const memberRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { writer, leaderboard } = fastify
  const write = { access: { kind: 'token', scope: 'write', server: guildOf, idempotent: true } } as const

  fastify.post('/servers/:guild_id/awards', {
    schema: {
      operationId: 'awardXp',
      tags: ['members'],
      summary: "Award XP to up to 1,000 members, as the server's rules say (multipliers, boosts, cooldown, daily cap), with each one's new level and role rewards",
      params: GuildParams,
      headers: WriteRequestHeaders,
      body: AwardsBody,
      response: responses.awards
    },
    bodyLimit: AWARDS_BODY_LIMIT,
    config: write
  }, async (request) => {
    const results = await writer.awardMany(request.params.guild_id, request.body.awards.map((a) => ({
      userId: a.user_id, xp: a.xp, username: a.username, displayName: a.display_name, avatarUrl: a.avatar_url, opId: a.op_id, roleIds: a.role_ids, channelId: a.channel_id
    })), { opId: opIdFor(request, 0) })
    return {
      results: results.map((r) => ({
        user_id: r.userId,
        xp: r.xp,
        gained: r.gained,
        level: r.level,
        leveled_up: r.leveledUp,
        applied: r.applied,
        ...(r.reason === undefined ? {} : { reason: r.reason }),
        ...(r.roles === undefined ? {} : { roles: r.roles }),
        ...(r.refused === undefined ? {} : { refused: r.refused }),
        ...(r.replayed === undefined ? {} : { replayed: r.replayed })
      }))
    }
  })

  fastify.put('/servers/:guild_id/members/:user_id', {
    schema: {
      operationId: 'setMember',
      tags: ['members'],
      summary: "Set a member's XP (outright, not multiplied) and/or its names (username, display name, avatar)",
      params: MemberParams,
      headers: WriteRequestHeaders,
      body: MemberBody,
      response: responses.member
    },
    config: write
  }, async (request) => {
    const { guild_id: guildId, user_id: userId } = request.params
    const { xp, username, display_name: displayName, avatar_url: avatarUrl } = request.body
    const opId = opIdFor(request, 0)
    let roles: RoleChanges | undefined
    if (xp !== undefined) {
      roles = (await writer.setMemberXp({ guildId, userId, xp, username, displayName, avatarUrl, opId })).roles
    } else if (!await writer.setNames({ guildId, userId, username, displayName, avatarUrl, opId })) {
      throw new MemberNotFoundError(guildId, userId) // a name alone does not make a member
    }
    const member = memberFound(await leaderboard.readAnyMember(guildId, userId), guildId, userId).value
    return roles === undefined ? member : { ...member, roles }
  })

  fastify.delete('/servers/:guild_id/members/:user_id', {
    schema: {
      operationId: 'removeMember',
      tags: ['members'],
      summary: 'Remove a member and all its data',
      params: MemberParams,
      headers: WriteRequestHeaders,
      response: responses.removed
    },
    config: write
  }, async (request, reply) => {
    const { guild_id: guildId, user_id: userId } = request.params
    if (!await writer.removeMember({ guildId, userId, opId: opIdFor(request, 0) })) throw new MemberNotFoundError(guildId, userId)
    return await reply.code(204).send()
  })

  fastify.post('/servers/:guild_id/members/:user_id/daily', {
    schema: {
      operationId: 'claimDaily',
      tags: ['members'],
      summary: "Record a member's daily claim (once per UTC day)",
      params: MemberParams,
      headers: WriteRequestHeaders,
      body: DailyBody,
      response: responses.daily
    },
    config: write
  }, async (request) => {
    const { guild_id: guildId, user_id: userId } = request.params
    try {
      const { streak, claimedAt } = await writer.claimDaily({ guildId, userId, opId: opIdFor(request, 0) })
      const { username } = request.body ?? {}
      if (username !== undefined) await writer.setUsername({ guildId, userId, username, opId: opIdFor(request, 1) })
      const member = memberFound(await leaderboard.readAnyMember(guildId, userId), guildId, userId).value
      return { daily_streak: streak, last_daily_claim: claimedAt.toISOString(), xp: member.xp, gained: 0 }
    } catch (err) {
      if (!(err instanceof DailyClaimRefusedError) || err.reason !== 'already_claimed' || err.at === undefined) throw err
      const next = (Math.floor(err.at.getTime() / DAY_MS) + 1) * DAY_MS
      const seconds = Math.max(1, Math.ceil((next - await redisNow(fastify.redisClient)) / 1000))
      throw new DailyAlreadyClaimedError(`${err.message}; the next claim is accepted from ${new Date(next).toISOString()}`, new Date(next), seconds)
    }
  })
}

export default memberRoutes
