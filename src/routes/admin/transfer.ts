// Import and export over the write API (scope `transfer`): the file is the request's body, read
// as a stream (CSV, or a bot's leaderboard JSON, row by row), and the export is the response's
// body, written as the members are read (src/transfer/).
//
// Idempotency-Key (pipeline/idempotency.ts) on an import: its body cannot be fingerprinted before
// the handler, as a parsed one is, so the fingerprint is the SHA-256 of the method, the URL and
// the body's bytes, hashed as they stream through the limit's count. A first request claims the
// key before it reads a byte, imports while hashing, and its answer is stored with the
// fingerprint (onSend). A retry finding that answer reads its body through the hash only, applying
// nothing, then replays the answer, or is 422 if the fingerprints differ. A body not read whole
// (over the limit, cut off) has no fingerprint: its claim is freed, and the retry imports again,
// which sets the same values.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Hash } from 'node:crypto'
import { PassThrough, Readable, Transform } from 'node:stream'
import { finished } from 'node:stream/promises'
import { GuildParams } from '../../schemas/common.js'
import { ExportQuery, ImportQuery, responses, WriteRequestHeaders } from '../../schemas/admin.js'
import { type ImportFormat, openImportStream } from '../../transfer/import-sources.js'
import { importMembers } from '../../transfer/import-members.js'
import { exportMembers } from '../../transfer/export-members.js'
import { IdempotencyKeyReusedError, ImportFileError, LeaderboardError } from '../../errors.js'
import { claimOrFind, fingerprintHash, releaseClaim, replay, requestKeyOf } from '../../pipeline/idempotency.js'
import { guildOf } from '../../pipeline/access.js'

const MIB = 1024 * 1024

class PayloadTooLargeError extends LeaderboardError<'payload_too_large'> {
  readonly statusCode = 413
  constructor (limit: number) { super('payload_too_large', `the file is over ${limit / MIB} MiB`) }
}

interface MeteredBody {
  /** The importer's end of the body. */
  reader: Readable
  /** Reads what the importer left of the body (all of it, if it read none) through the count and the hash. */
  readRest: () => Promise<void>
}

/**
 * The body as it streams in: counted (PayloadTooLargeError past `limit` bytes) and fed to `hash`.
 * The importer reads its own end of it, so one that stops early (a malformed CSV) closes only
 * that, and the rest can still be read through the count and the hash.
 */
function metered (body: Readable, limit: number, hash?: Hash): MeteredBody {
  let seen = 0
  const counted = new Transform({
    transform (chunk: Buffer, _encoding, callback) {
      seen += chunk.length
      if (seen > limit) {
        callback(new PayloadTooLargeError(limit))
        return
      }
      hash?.update(chunk)
      callback(null, chunk)
    }
  })
  body.pipe(counted)
  // pipe() passes the bytes, not a failure: a client gone mid-body ends the import, not stalls it.
  body.once('close', () => {
    if (!body.readableEnded) counted.destroy(new ImportFileError('the body was cut off before its end'))
  })
  const reader = counted.pipe(new PassThrough())
  counted.on('error', (err) => { reader.destroy(err) })
  reader.on('error', () => {}) // the importer meets it by reading; one that stopped reading has no use for it
  return {
    reader,
    readRest: async () => {
      counted.unpipe(reader)
      reader.destroy()
      counted.resume()
      await finished(counted)
    }
  }
}

const transferRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { writer, leaderboard, redisClient: redis } = fastify
  // The contract's 256 MiB unless IMPORT_BODY_LIMIT_MB lowers it.
  const bodyLimit = fastify.config.importBodyLimitMb * MIB
  // In this scope only: any body reaches the import route as the raw stream.
  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser('*', (_request, payload, done) => { done(null, payload) })

  async function importBody (guildId: string, body: Readable, query: { format: ImportFormat, strict?: boolean, keep_settings?: boolean }) {
    const source = await openImportStream(body, query.format, 'the body')
    const summary = await importMembers(writer, guildId, source.rows, { strict: query.strict === true, keepSettings: query.keep_settings === true })
    return {
      imported: summary.imported,
      settings: summary.settings === undefined ? null : { xp_curve: summary.settings.curve, xp_multiplier: summary.settings.multiplier },
      skipped: summary.problems.map((p) => ({ ...('line' in p ? { line: p.line } : { page: p.page, index: p.index }), reason: p.message }))
    }
  }

  fastify.post('/servers/:guild_id/import', {
    schema: {
      operationId: 'importMembers',
      tags: ['transfer'],
      summary: "Import a CSV (user_id,username,xp) or the leaderboard JSON of MEE6, Amari, Lurkr, Polaris or Tatsu: each row sets a member's XP and username",
      params: GuildParams,
      querystring: ImportQuery,
      headers: WriteRequestHeaders,
      response: responses.imported
    },
    // Not config.idempotent: the hook fingerprints a parsed body before the handler; this route
    // takes Idempotency-Key itself, as its body streams in (see the top of this file).
    config: { access: { kind: 'token', scope: 'transfer', server: guildOf } }
  }, async (request, reply) => {
    const { guild_id: guildId } = request.params
    if (!(request.body instanceof Readable)) throw new ImportFileError('send the file as the request body')
    const raw = request.body
    try {
      // A length over the limit is refused before a byte is read: a CSV is imported as it streams
      // in, so counting alone would refuse it only after the rows before the limit were written.
      if (Number(request.headers['content-length'] ?? 0) > bodyLimit) throw new PayloadTooLargeError(bodyLimit)
      const key = requestKeyOf(request)
      if (key === undefined) return await importBody(guildId, metered(raw, bodyLimit).reader, request.query)

      // Claimed, or answered before: known before a byte of the body is read.
      const answer = await claimOrFind(redis, key)
      const hash = fingerprintHash(request)
      const body = metered(raw, bodyLimit, hash)
      if (answer !== null) {
        await body.readRest() // through the hash only: nothing is imported
        if (answer.fingerprint !== hash.digest('base64url')) throw new IdempotencyKeyReusedError()
        return await replay(reply, answer)
      }
      const result = await importBody(guildId, body.reader, request.query).then((value) => ({ value }), (error: unknown) => ({ error }))
      // The fingerprint is of the whole body, also when the import stopped early (a refused file).
      const rest = await body.readRest().then(() => null, (error: unknown) => error)
      if (rest === null) {
        request.idempotency = { ...key, fingerprint: hash.digest('base64url') } // for onSend to store the answer
      } else {
        releaseClaim(redis, key)
        if (rest instanceof PayloadTooLargeError) throw rest
      }
      if ('error' in result) throw result.error
      return result.value
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
    config: { access: { kind: 'token', scope: 'transfer', server: guildOf } }
  }, async (request, reply) => {
    const format = request.query.format
    const stream = Readable.from(exportMembers(leaderboard, request.params.guild_id, { format }))
    // The document types the body as text; the reply sends the stream as it is read.
    return await reply.type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8').send(stream as never)
  })
}

export default transferRoutes
