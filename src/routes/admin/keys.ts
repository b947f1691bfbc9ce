// API keys over the write API (scope `keys`), for a dashboard's "API keys" section: each route
// is one operation of the key store (src/api-keys/). A token manages the keys whose servers it
// covers, all of them: a key of several servers, or of every server, needs a token that has them.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { GuildParams } from '../../schemas/common.js'
import { KeyChangeBody, KeyParams, NewKeyBody, responses, WriteRequestHeaders } from '../../schemas/admin.js'
import type { ApiKeyInfo } from '../../api-keys/api-keys.js'
import { ALL_SERVERS, type ServerScope } from '../../api-keys/server-scope.js'
import { ApiKeyNotFoundError, NotPermittedError } from '../../errors.js'
import { guildOf } from '../../pipeline/access.js'

function covers (request: FastifyRequest, servers: ServerScope): boolean {
  const mine = request.token?.servers
  if (mine === undefined) return false
  if (mine === ALL_SERVERS) return true
  return servers !== ALL_SERVERS && servers.every((id) => mine.has(id))
}

function record (info: ApiKeyInfo) {
  const iso = (date: Date | null): string | null => date?.toISOString() ?? null
  return {
    id: info.id,
    name: info.name,
    plan: info.plan,
    servers: info.servers === ALL_SERVERS ? ALL_SERVERS : [...info.servers],
    created_at: info.createdAt.toISOString(),
    expires_at: iso(info.expiresAt),
    revoked_at: iso(info.revokedAt)
  }
}

const keyRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { apiKeys } = fastify
  // A server's keys, by the server in the path; a key by its id, whose servers the route checks (managed).
  const serverKeys = { access: { kind: 'token', scope: 'keys', server: guildOf, idempotent: true } } as const
  const keyById = { access: { kind: 'token', scope: 'keys', server: null, idempotent: true } } as const

  /** The key `id` when the request's token covers every server it reads; 404 or 403 otherwise. */
  async function managed (request: FastifyRequest, id: string): Promise<ApiKeyInfo> {
    const info = await apiKeys.get(id)
    if (info === null) throw new ApiKeyNotFoundError(id)
    if (!covers(request, info.servers)) throw new NotPermittedError(`this token does not cover every server of API key ${id}`)
    return info
  }

  fastify.get('/servers/:guild_id/keys', {
    schema: {
      operationId: 'listKeys',
      tags: ['keys'],
      summary: 'The API keys that read a server, newest first (never a secret)',
      params: GuildParams,
      response: responses.keyList
    },
    config: { access: { kind: 'token', scope: 'keys', server: guildOf } }
  }, async (request) => ({ data: (await apiKeys.list(request.params.guild_id)).map(record) }))

  fastify.post('/servers/:guild_id/keys', {
    schema: {
      operationId: 'createKey',
      tags: ['keys'],
      summary: 'Create an API key for the server (or, with `servers`, for a list of servers or every server); the key is shown once',
      params: GuildParams,
      headers: WriteRequestHeaders,
      body: NewKeyBody,
      response: responses.keyCreated
    },
    config: serverKeys
  }, async (request, reply) => {
    const { plan, name, expires_at: expiresAt, servers = [request.params.guild_id] } = request.body
    if (!covers(request, servers)) throw new NotPermittedError('this token does not cover every server of the key')
    const created = await apiKeys.create({ servers, plan, name, expiresAt: expiresAt === undefined ? undefined : new Date(expiresAt) })
    return await reply.code(201).send({ ...record(created), key: created.key })
  })

  fastify.patch('/keys/:id', {
    schema: {
      operationId: 'changeKey',
      tags: ['keys'],
      summary: "Change a key's plan, name, expiry or servers (applied everywhere within 5 s; a new list needs a token that has every server of the old and the new)",
      params: KeyParams,
      headers: WriteRequestHeaders,
      body: KeyChangeBody,
      response: responses.keyChanged
    },
    config: keyById
  }, async (request) => {
    await managed(request, request.params.id)
    const { plan, name, expires_at: expiresAt, servers } = request.body
    if (servers !== undefined && !covers(request, servers)) throw new NotPermittedError('this token does not cover every server of the new list')
    return record(await apiKeys.update(request.params.id, {
      plan, name, servers, expiresAt: expiresAt === undefined || expiresAt === null ? expiresAt : new Date(expiresAt)
    }))
  })

  fastify.post('/keys/:id/rotate', {
    schema: {
      operationId: 'rotateKey',
      tags: ['keys'],
      summary: 'A new secret under the same id; the old key is refused everywhere within 5 s',
      params: KeyParams,
      headers: WriteRequestHeaders,
      response: responses.keyRotated
    },
    config: keyById
  }, async (request) => {
    await managed(request, request.params.id)
    const rotated = await apiKeys.rotate(request.params.id)
    return { ...record(rotated), key: rotated.key }
  })

  fastify.delete('/keys/:id', {
    schema: {
      operationId: 'revokeKey',
      tags: ['keys'],
      summary: 'Revoke a key; it is refused everywhere within 5 s',
      params: KeyParams,
      headers: WriteRequestHeaders,
      response: responses.keyRevoked
    },
    config: keyById
  }, async (request, reply) => {
    await managed(request, request.params.id)
    await apiKeys.revoke(request.params.id)
    return await reply.code(204).send()
  })
}

export default keyRoutes
