// A server's seasons over the write API (scope `write`): ending the current season by hand,
// whatever the schedule, through the library (src/seasons/season-ends.ts: once, however often
// it is asked).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { GuildParams } from '../../schemas/common.js'
import { responses, WriteRequestHeaders } from '../../schemas/admin.js'
import { EndSeasonBody } from '../../schemas/seasons.js'
import { guildOf } from '../../pipeline/access.js'

const iso = (date: Date | null): string | null => date === null ? null : date.toISOString()

const seasonRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { writer } = fastify

  fastify.post('/servers/:guild_id/seasons/end', {
    schema: {
      operationId: 'endSeason',
      tags: ['seasons'],
      summary: 'End the current season now, whatever the schedule, and start the next (named as given)',
      params: GuildParams,
      headers: WriteRequestHeaders,
      body: EndSeasonBody,
      response: responses.seasonEnded
    },
    config: { access: { kind: 'token', scope: 'write', server: guildOf, idempotent: true } }
  }, async (request) => {
    const season = await writer.endSeason(request.params.guild_id, { name: request.body?.name })
    return { id: season.id, name: season.name, started_at: iso(season.startedAt), ended_at: iso(season.endedAt) }
  })
}

export default seasonRoutes
