// Import and export over the write API (scope `transfer`): the file is the request's body, read
// as a stream (CSV row by row; MEE6 JSON, which must be parsed whole, held up to the same bound),
// and the export is the response's body, written as the members are read (src/transfer/).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Readable, Transform } from 'node:stream'
import { GuildParams } from '../../schemas/common.js'
import { ExportQuery, ImportQuery, responses } from '../../schemas/admin.js'
import { openImportStream } from '../../transfer/import-sources.js'
import { importMembers } from '../../transfer/import-members.js'
import { exportMembers } from '../../transfer/export-members.js'
import { ImportFileError, LeaderboardError } from '../../errors.js'

const MIB = 1024 * 1024

class PayloadTooLargeError extends LeaderboardError<'payload_too_large'> {
  readonly statusCode = 413
  constructor (limit: number) { super('payload_too_large', `the file is over ${limit / MIB} MiB`) }
}

/** The body, failing with 413 past `limit` bytes. */
function bounded (body: Readable, limit: number): Readable {
  let seen = 0
  return body.pipe(new Transform({
    transform (chunk: Buffer, _encoding, callback) {
      seen += chunk.length
      callback(seen > limit ? new PayloadTooLargeError(limit) : null, chunk)
    }
  }))
}

const transferRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { writer, leaderboard } = fastify
  // The contract's 256 MiB unless IMPORT_BODY_LIMIT_MB lowers it.
  const bodyLimit = fastify.config.importBodyLimitMb * MIB
  // In this scope only: any body reaches the import route as the raw stream.
  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser('*', (_request, payload, done) => { done(null, payload) })

  fastify.post('/servers/:guild_id/import', {
    schema: {
      operationId: 'importMembers',
      tags: ['transfer'],
      summary: "Import a CSV (user_id,username,xp) or MEE6 leaderboard JSON file: each row sets a member's XP and username",
      params: GuildParams,
      querystring: ImportQuery,
      response: responses.imported
    },
    config: { scope: 'transfer' }
  }, async (request, reply) => {
    const { guild_id: guildId } = request.params
    if (!(request.body instanceof Readable)) throw new ImportFileError('send the file as the request body')
    const raw = request.body
    try {
      // A length over the limit is refused before a byte is read: a CSV is imported as it streams
      // in, so counting alone would refuse it only after the rows before the limit were written.
      if (Number(request.headers['content-length'] ?? 0) > bodyLimit) throw new PayloadTooLargeError(bodyLimit)
      const source = await openImportStream(bounded(raw, bodyLimit), request.query.format, 'the body')
      const summary = await importMembers(writer, guildId, source.rows, { strict: request.query.strict === true, keepSettings: request.query.keep_settings === true })
      return {
        imported: summary.imported,
        settings: summary.settings === undefined ? null : { xp_curve: summary.settings.curve, xp_multiplier: summary.settings.multiplier },
        skipped: summary.problems.map((p) => ({ ...('line' in p ? { line: p.line } : { index: p.index }), reason: p.message }))
      }
    } catch (err) {
      // An answer before the body was read to its end: the connection closes after it, or the
      // client's next request on it would wait behind the unread bytes (and time out).
      if (!raw.readableEnded) reply.header('connection', 'close')
      throw err
    }
  })

  fastify.get('/servers/:guild_id/export', {
    schema: {
      operationId: 'exportMembers',
      tags: ['transfer'],
      summary: 'Every member in rank order, as CSV or JSON lines, streamed',
      params: GuildParams,
      querystring: ExportQuery,
      response: responses.exported
    },
    config: { scope: 'transfer' }
  }, async (request, reply) => {
    const format = request.query.format
    const stream = Readable.from(exportMembers(leaderboard, request.params.guild_id, { format }))
    // The document types the body as text; the reply sends the stream as it is read.
    return await reply.type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8').send(stream as never)
  })
}

export default transferRoutes
