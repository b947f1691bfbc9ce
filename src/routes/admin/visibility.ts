// Who is shown, over the write API (scope `write`): hide a member (it left the server, or opted
// out) or show it again, one at a time or in batches of up to 10,000 (a bot's join and leave
// sync), each through the library's setVisibilityMany (src/writer/visibility.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Static } from 'typebox'
import { GuildParams, MemberParams } from '../../schemas/common.js'
import { responses, type Visibility, VisibilityBatchBody, VisibilityBody, WriteRequestHeaders } from '../../schemas/admin.js'
import { guildOf } from '../../pipeline/access.js'
import type { VisibilityResult } from '../../writer/visibility.js'

/** 10,000 changes are about 600 KB of JSON. */
const BATCH_BODY_LIMIT = 2 * 1024 * 1024

function visibilityBody (r: VisibilityResult): Static<typeof Visibility> {
  return { user_id: r.userId, visible: r.visible, reasons: r.reasons, xp: r.xp }
}

const visibilityRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { writer } = fastify
  const write = { access: { kind: 'token', scope: 'write', server: guildOf, idempotent: true } } as const

  fastify.put('/servers/:guild_id/members/:user_id/visibility', {
    schema: {
      operationId: 'setVisibility',
      tags: ['members'],
      summary: 'Hide a member from every public read (it left, or opted out), keeping its XP, or show it again',
      params: MemberParams,
      headers: WriteRequestHeaders,
      body: VisibilityBody,
      response: responses.visibility
    },
    config: write
  }, async (request) => {
    const { guild_id: guildId, user_id: userId } = request.params
    return visibilityBody(await writer.setVisibility({ guildId, userId, visible: request.body.visible, reason: request.body.reason }))
  })

  fastify.post('/servers/:guild_id/visibility', {
    schema: {
      operationId: 'setVisibilityBatch',
      tags: ['members'],
      summary: 'Hide and show up to 10,000 members in one call (a join and leave sync)',
      params: GuildParams,
      headers: WriteRequestHeaders,
      body: VisibilityBatchBody,
      response: responses.visibilityBatch
    },
    bodyLimit: BATCH_BODY_LIMIT,
    config: write
  }, async (request) => {
    const results = await writer.setVisibilityMany(request.params.guild_id,
      request.body.members.map((m) => ({ userId: m.user_id, visible: m.visible, reason: m.reason })))
    return { results: results.map(visibilityBody) }
  })
}

export default visibilityRoutes
