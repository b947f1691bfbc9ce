// A read endpoint of the public API as one declaration (`ReadDeclaration`), and the routes made
// from it: `GET path` (served through the response cache, src/pipeline/reads.ts) and, when it
// declares a stream, `GET path/stream` (the same body as live updates, src/pipeline/live.ts).
// Both carry the declaration's key access (src/pipeline/access.ts: authentication, the count,
// the server check, the 304), its schemas (validation, serialization, the OpenAPI document), and
// derive the cache key, the ETag's day and the stream's topic from it; scripts/client-types.ts
// makes the typed client's methods from the same declarations. A read declared `public` is also
// served keyless on public boards (registerPublicReads): `/public/v1/:slug/…`, the same body.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type Static, type TObject, type TSchema, Type } from 'typebox'
import type { LeaderboardReader, Versioned } from '../reader/leaderboard-reader.js'
import type { NamedSchema } from '../schemas/common.js'
import { ReadRequestHeaders } from '../schemas/headers.js'
import { errorResponses, publicErrorResponses, publicReadResponses, readResponses } from '../schemas/responses.js'
import { StreamRequestHeaders, streamResponse } from '../schemas/streams.js'
import { SETTINGS_LIMITS } from '../settings/settings.js'
import type { KeyAccess, PublicAccess } from './access.js'
import { cacheKeyOf } from './reads.js'

/** What a read is given: its validated path parameters and query (with their defaults filled in). */
export interface ReadInput<P extends TObject, Q extends TObject> {
  params: Static<P>
  query: Static<Q>
}

/**
 * A check of the raw query that validation cannot make (plain digits, distinct ids), run before
 * validation: it returns the refusal, which is answered once the request is counted.
 */
export type QueryCheck = (request: FastifyRequest) => Error | null

export interface ReadDeclaration<P extends TObject, Q extends TObject, B extends NamedSchema> {
  /** Under the API's prefix: `/servers/:guild_id/leaderboard`. */
  path: string
  operationId: string
  summary: string
  tags: string[]
  params: P
  query?: Q
  /** The 200 body, and what it is. */
  body: B
  description: string
  /** Answers beyond every read's (404 member_not_found, say). */
  errors?: Record<string, TSchema>
  /** The server it reads, from the validated parameters. */
  server: (params: Static<P>) => string
  /** The body depends on the UTC day (a member's daily_streak), for every request or by its validated query. */
  perDay?: boolean | ((query: Static<Q>) => boolean)
  checks?: QueryCheck[]
  read: (reader: LeaderboardReader, input: ReadInput<P, Q>) => Promise<Versioned<Static<B>>>
  /**
   * The same body as live updates at `path/stream`: event `event`; with `serverEvents`, the
   * server's events too, typed (`member.leveled_up`…, src/live/server-events.ts).
   */
  stream?: { operationId: string, summary: string, event: string, serverEvents?: boolean }
  /**
   * The typed client's method for it, and its watch method for the stream, each with its doc
   * comment; `lists` names the query parameters the method takes as a list argument (joined by
   * commas), by the argument's name.
   */
  client: { method: string, doc: string, watch?: { method: string, doc: string }, lists?: Record<string, string> }
  /**
   * Served keyless on public boards too (`/public/v1/:slug` in place of `/servers/:guild_id`):
   * its operation ids there, and what its 404 means besides an unknown board.
   */
  public?: { operationId: string, streamOperationId?: string, notFound?: string }
}

/** Any read declaration, as the routes and the client generator hold them. */

export type AnyReadDeclaration = ReadDeclaration<any, any, NamedSchema>

/** Checks `declaration` against its types (inference of P, Q and B for `server`, `perDay` and `read`). */
export function readDeclaration<P extends TObject, Q extends TObject, B extends NamedSchema> (declaration: ReadDeclaration<P, Q, B>): AnyReadDeclaration {
  return declaration
}

/** Runs the declaration's query checks, keeping the first refusal for admission to answer. */
function queryChecks (checks: QueryCheck[]) {
  return async function checkQuery (request: FastifyRequest): Promise<void> {
    for (const check of checks) {
      const refusal = check(request)
      if (refusal !== null) {
        request.refusal = refusal
        return
      }
    }
  }
}

/**
 * The serializer of a stream route's events, whose `data:` is the plain endpoint's 200 body
 * (`body`), for a reply of that route. The schema is made here, once per route: Fastify keeps a
 * route's compiled serializers by the schema object, so a schema made per request compiled one
 * (fast-json-stringify's code, with an Ajv of its own) at each stream's opening, and every open
 * stream held its own.
 */
function eventSerializer (body: NamedSchema): (reply: FastifyReply) => (value: unknown) => string {
  const schema = { $ref: `${body.$id}#` }
  return (reply) => reply.compileSerializationSchema(schema) as (value: unknown) => string
}

/** A public board's slug in a path. */
const SlugParam = Type.String({ pattern: SETTINGS_LIMITS.slug.source, description: "The public board's slug (the server's settings: public.slug)", examples: ['cozy-cafe'] })

/** The public route's path of a read at `path`: its server named by a slug. */
export function publicPath (path: string): string {
  return path.replace(/^\/servers\/:guild_id/, '/:slug')
}

/** A read's input on a public route: its validated parameters, the slug's server in place of guild_id. */
function publicInput (request: FastifyRequest): ReadInput<TObject, TObject> {
  const params = { ...(request.params as Record<string, unknown>), guild_id: request.publicServer } as Static<TObject>
  return { params, query: (request.query ?? {}) as Static<TObject> }
}

/**
 * Adds the public routes of the `declarations` declared `public` to `fastify` (the public boards'
 * scope, beside the API's, with the same reads and live plugins): the same reads, schemas,
 * cache and ETags, admitted by address and slug (src/pipeline/public-admission.ts).
 */
export function registerPublicReads (fastify: FastifyInstance, declarations: readonly AnyReadDeclaration[]): void {
  for (const d of declarations) {
    if (d.public === undefined) continue
    const { guild_id: _guild, ...rest } = d.params.properties as Record<string, TSchema>
    const params = Type.Object({ slug: SlugParam, ...rest })
    const access: PublicAccess = { kind: 'public', slug: (p: { slug: string }) => p.slug, perDay: d.perDay }
    const preValidation = d.checks === undefined ? undefined : queryChecks(d.checks)
    const url = publicPath(d.path)
    const errors = publicErrorResponses(d.public.notFound)
    fastify.route({
      method: 'GET',
      url,
      schema: {
        operationId: d.public.operationId,
        tags: ['public'],
        summary: `${d.summary}, on a public board (no key)`,
        security: [],
        params,
        ...(d.query === undefined ? {} : { querystring: d.query }),
        headers: ReadRequestHeaders,
        response: { ...publicReadResponses(d.body, d.description), ...errors }
      },
      ...(preValidation === undefined ? {} : { preValidation }),
      config: { access },
      compress: false,
      handler: async (request, reply) => await fastify.serveRead(request, reply, async () => await d.read(fastify.leaderboard, publicInput(request)))
    })
    if (d.stream === undefined || d.public.streamOperationId === undefined) continue
    const { event } = d.stream
    const serializerOf = eventSerializer(d.body)
    fastify.route({
      method: 'GET',
      url: `${url}/stream`,
      schema: {
        operationId: d.public.streamOperationId,
        tags: ['public'],
        summary: `${d.stream.summary}, on a public board (no key)`,
        security: [],
        params,
        ...(d.query === undefined ? {} : { querystring: d.query }),
        headers: StreamRequestHeaders,
        response: { 200: streamResponse(event, d.body), ...errors }
      },
      ...(preValidation === undefined ? {} : { preValidation }),
      config: { access: { ...access, stream: true } },
      compress: false,
      handler: async (request, reply) => {
        const input = publicInput(request)
        return await fastify.live.open(request, reply, {
          // The plain endpoint's cache key, with the slug's server (a slug may move to another).
          id: cacheKeyOf((request.routeOptions.url ?? '').slice(0, -'/stream'.length), input.params, input.query),
          guildId: request.publicServer as string,
          event,
          perDay: typeof d.perDay === 'function' ? d.perDay(request.query) : d.perDay === true,
          read: async () => await d.read(fastify.leaderboard, input),
          serialize: serializerOf(reply)
        })
      }
    })
  }
}

/** Adds the routes of `declarations` to `fastify` (the API's scope, with the reads and live plugins). */
export function registerReads (fastify: FastifyInstance, declarations: readonly AnyReadDeclaration[]): void {
  for (const d of declarations) {
    const access: KeyAccess = { kind: 'key', server: d.server, perDay: d.perDay }
    const input = (request: FastifyRequest): ReadInput<TObject, TObject> => ({ params: request.params as Static<TObject>, query: (request.query ?? {}) as Static<TObject> })
    const preValidation = d.checks === undefined ? undefined : queryChecks(d.checks)

    fastify.route({
      method: 'GET',
      url: d.path,
      // A URL served before is answered before validation, with what validation made of it (src/pipeline/reads.ts).
      preValidation: [fastify.answerKnownUrl, ...(preValidation === undefined ? [] : [preValidation])],
      schema: {
        operationId: d.operationId,
        tags: d.tags,
        summary: d.summary,
        params: d.params,
        ...(d.query === undefined ? {} : { querystring: d.query }),
        headers: ReadRequestHeaders,
        response: { ...readResponses(d.body, d.description), ...d.errors, ...errorResponses }
      },
      config: { access },
      compress: false, // serveRead sends compressed bodies from its cache
      handler: async (request, reply) => await fastify.serveRead(request, reply, async () => await d.read(fastify.leaderboard, input(request)))
    })

    if (d.stream === undefined) continue
    const { event, serverEvents = false } = d.stream
    const serializerOf = eventSerializer(d.body)
    fastify.route({
      method: 'GET',
      url: `${d.path}/stream`,
      schema: {
        operationId: d.stream.operationId,
        tags: ['live'],
        summary: d.stream.summary,
        params: d.params,
        ...(d.query === undefined ? {} : { querystring: d.query }),
        headers: StreamRequestHeaders,
        response: { 200: streamResponse(event, d.body), ...d.errors, ...errorResponses }
      },
      ...(preValidation === undefined ? {} : { preValidation }),
      config: { access: { ...access, stream: true } },
      compress: false,
      handler: async (request, reply) => await fastify.live.open(request, reply, {
        // The plain endpoint's cache key: one topic per body, whatever the spelling of its URL.
        id: cacheKeyOf((request.routeOptions.url ?? '').slice(0, -'/stream'.length), request.params, request.query),
        guildId: d.server(request.params),
        event,
        perDay: typeof d.perDay === 'function' ? d.perDay(request.query) : d.perDay === true,
        read: async () => await d.read(fastify.leaderboard, input(request)),
        serialize: serializerOf(reply),
        events: serverEvents
      })
    })
  }
}
