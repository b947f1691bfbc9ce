// Bearer tokens of the write API (src/admin/): made, listed, rotated and revoked with the CLI,
// shown once, stored only as a SHA-256 hash, as API keys are (src/api-keys/api-keys.ts).
//
// A token reads `lba_<id>_<secret>` and carries the servers it may write (a list, or every
// server) and its scopes: `write` (members, settings), `keys` (API keys), `transfer` (import
// and export).
import { hashApiKey, newCredential, newCredentialId } from '../api-keys/api-keys.js'
import { ALL_SERVERS, assertServerScope, decodeServerScope, encodeServerScope, type ServerScope } from '../api-keys/server-scope.js'
import { ApiKeyInactiveError, InvalidParameterError, LeaderboardError } from '../errors.js'
import { type RedisClient, redisNow } from '../redis/client.js'
import type { KeyBuilder } from '../redis/keys.js'
import { assertLabel } from '../validation.js'

export const TOKEN_PREFIX = 'lba_'
const TOKEN_PATTERN = /^lba_([0-9a-f]{16})_[A-Za-z0-9_-]{32}$/
const ID_PATTERN = /^[0-9a-f]{16}$/

export const SCOPES = ['write', 'keys', 'transfer'] as const
export type Scope = typeof SCOPES[number]

export interface TokenInfo {
  id: string
  name: string
  servers: ServerScope
  scopes: Scope[]
  createdAt: Date
  rotatedAt: Date | null
  revokedAt: Date | null
}

export interface CreatedToken extends TokenInfo {
  /** The plaintext token: shown this once, never stored. */
  token: string
}

/** A valid token, as a request sees it. */
export interface TokenCheck { id: string, servers: ServerScope, scopes: Scope[] }

export class TokenNotFoundError extends LeaderboardError {
  constructor (id: string) { super('token_not_found', `no token with id ${id}`) }
}

/** The id inside a well-formed token, or null. */
export function tokenId (token: string): string | null {
  return TOKEN_PATTERN.exec(token)?.[1] ?? null
}

export function assertScopes (value: unknown): Scope[] {
  const list = Array.isArray(value) ? value : []
  if (list.length === 0 || !list.every((s) => (SCOPES as readonly unknown[]).includes(s))) {
    throw new InvalidParameterError(`scopes must be one or more of ${SCOPES.join(', ')}`)
  }
  return SCOPES.filter((s) => list.includes(s))
}

export class TokenStore {
  readonly redis: RedisClient
  readonly keys: KeyBuilder

  constructor (redis: RedisClient, keys: KeyBuilder) {
    this.redis = redis
    this.keys = keys
  }

  async create (input: { name: string, servers?: ServerScope, scopes?: readonly string[] }): Promise<CreatedToken> {
    const name = assertLabel(input.name)
    const servers = input.servers === undefined ? ALL_SERVERS : assertServerScope(input.servers)
    const scopes = assertScopes(input.scopes ?? ['write'])
    const id = newCredentialId()
    const token = newCredential(TOKEN_PREFIX, id)
    const createdAt = await redisNow(this.redis)
    await this.redis.hset(this.keys.token(id), {
      hash: hashApiKey(token), name, servers: encodeServerScope(servers), scopes: scopes.join(','), created_at: String(createdAt)
    })
    await this.redis.sadd(this.keys.tokens(), id)
    return { id, token, name, servers, scopes, createdAt: new Date(createdAt), rotatedAt: null, revokedAt: null }
  }

  /** Every token, newest first, revoked ones included; never a token or its hash. */
  async list (): Promise<TokenInfo[]> {
    const ids = await this.redis.smembers(this.keys.tokens())
    const infos = await Promise.all(ids.map(async (id) => await this.get(id)))
    return infos.filter((info): info is TokenInfo => info !== null).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
  }

  async get (id: string): Promise<TokenInfo | null> {
    if (!ID_PATTERN.test(id)) return null
    const r = await this.redis.hgetall(this.keys.token(id))
    const servers = decodeServerScope(undefined, r.servers)
    if (r.hash === undefined || r.name === undefined || servers === null) return null
    const date = (ms: string | undefined): Date | null => ms === undefined ? null : new Date(Number(ms))
    return {
      id,
      name: r.name,
      servers,
      scopes: SCOPES.filter((s) => (r.scopes ?? '').split(',').includes(s)),
      createdAt: new Date(Number(r.created_at)),
      rotatedAt: date(r.rotated_at),
      revokedAt: date(r.revoked_at)
    }
  }

  /** A new secret under the same id: the old token is refused within seconds, the new one shown once. */
  async rotate (id: string): Promise<CreatedToken> {
    const info = await this.get(id)
    if (info === null) throw new TokenNotFoundError(id)
    if (info.revokedAt !== null) throw new ApiKeyInactiveError(`cannot rotate token ${id}: it was revoked`)
    const token = newCredential(TOKEN_PREFIX, id)
    const now = await redisNow(this.redis)
    await this.redis.hset(this.keys.token(id), { hash: hashApiKey(token), rotated_at: String(now) })
    return { ...info, token, rotatedAt: new Date(now) }
  }

  /** Revokes a token; every instance refuses it within seconds. Idempotent. */
  async revoke (id: string): Promise<TokenInfo> {
    const info = await this.get(id)
    if (info === null) throw new TokenNotFoundError(id)
    if (info.revokedAt !== null) return info
    const now = await redisNow(this.redis)
    await this.redis.hset(this.keys.token(id), 'revoked_at', String(now))
    return { ...info, revokedAt: new Date(now) }
  }

  /** The token's servers and scopes when it is valid (known, its secret matching, not revoked); else null. */
  async check (token: string): Promise<TokenCheck | null> {
    const id = tokenId(token)
    if (id === null) return null
    const [hash, servers, scopes, revokedAt] = await this.redis.hmget(this.keys.token(id), 'hash', 'servers', 'scopes', 'revoked_at')
    const scope = decodeServerScope(undefined, servers)
    if (hash !== hashApiKey(token) || revokedAt !== null || scope === null) return null
    return { id, servers: scope, scopes: SCOPES.filter((s) => (scopes ?? '').split(',').includes(s)) }
  }
}
