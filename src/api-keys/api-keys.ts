// API keys: created with their plaintext shown once, stored only as a SHA-256 hash.
//
// A key reads `lbk_<id>_<secret>`: the recognisable prefix makes a leaked key easy to spot and
// to scan for; the embedded id finds the record without any index of hashes; the secret is
// 192 random bits, so a plain SHA-256 (no slow hash) is enough to make the stored form useless.
import { createHash, randomBytes } from 'node:crypto'
import { type RedisClient, redisNow } from '../redis/client.js'
import { defineCommands } from '../redis/scripts.js'
import type { KeyBuilder } from '../redis/keys.js'
import { ApiKeyInactiveError, ApiKeyNotFoundError, InvalidParameterError } from '../errors.js'
import { assertInteger, assertLabel, assertSnowflake } from '../validation.js'
import { isPlan, type Plan, PLANS } from '../plans.js'
import { ALL_SERVERS, assertServerScope, decodeServerScope, encodeServerScope, scopeIncludes, type ServerScope } from './server-scope.js'

export const API_KEY_PREFIX = 'lbk_'
const KEY_PATTERN = /^lbk_([0-9a-f]{16})_[A-Za-z0-9_-]{32}$/
const ID_PATTERN = /^[0-9a-f]{16}$/
const MAX_EXPIRY_SECONDS = 10 * 366 * 24 * 3600

export interface ApiKeyInfo {
  id: string
  /** The key's one server, or null for a key of several servers or of every server. */
  guildId: string | null
  /** The servers the key reads: a list (one server for most keys), or '*' for every server. */
  servers: ServerScope
  plan: Plan
  name: string | null
  createdAt: Date
  expiresAt: Date | null
  lastUsedAt: Date | null
  revokedAt: Date | null
  /** When the secret was last replaced by rotate(); null if never. */
  rotatedAt: Date | null
}

export interface CreatedApiKey extends ApiKeyInfo {
  /** The plaintext key: shown this once, never stored. */
  key: string
}

export type KeyCheck =
  | { status: 'ok', id: string, guildId: string | null, servers: ServerScope, plan: Plan, expiresAt: number | null, redisNow: number }
  | { status: 'unknown' | 'revoked' | 'expired', redisNow: number | null }

/** A fresh credential `<prefix><id>_<secret>` for record `id`: 192 random bits of secret. */
export function newCredential (prefix: string, id: string): string {
  return `${prefix}${id}_${randomBytes(24).toString('base64url')}`
}

/** A fresh key for record `id`. */
function newKey (id: string): string {
  return newCredential(API_KEY_PREFIX, id)
}

/** A fresh record id: 16 hex digits. */
export function newCredentialId (): string {
  return randomBytes(8).toString('hex')
}

export function hashApiKey (key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** The id inside a well-formed key, or null for anything that cannot be one of ours. */
export function apiKeyId (key: string): string | null {
  return KEY_PATTERN.exec(key)?.[1] ?? null
}

export interface NewApiKey {
  /** The key's one server; or give `servers`. */
  guildId?: string
  /** A list of up to 1,000 servers, or '*' for every server. */
  servers?: ServerScope
  plan: Plan | string
  name?: string
  expiresInSeconds?: number
  expiresAt?: Date
}

export interface ApiKeyChange {
  plan?: Plan | string
  /** The servers it reads from now on: a list of up to 1,000, or '*' for every server. */
  servers?: ServerScope
  /** A new label; null removes it. */
  name?: string | null
  /** A new expiry; null: never expires. */
  expiresAt?: Date | null
}

/** A one-server key's server: such a key keeps the record it always had (`guild_id`); a wider one lists its `servers`. */
function oneServer (servers: ServerScope): string | null {
  return servers !== ALL_SERVERS && servers.length === 1 ? servers[0] as string : null
}

function checkExpiry (value: unknown, now: number): number {
  const ms = value instanceof Date ? value.getTime() : NaN
  if (!Number.isSafeInteger(ms) || ms <= now || ms > now + MAX_EXPIRY_SECONDS * 1000) {
    throw new InvalidParameterError('expires_at must be a date in the future, within 10 years')
  }
  return ms
}

export class ApiKeyStore {
  readonly redis: RedisClient
  readonly keys: KeyBuilder

  constructor (redis: RedisClient, keys: KeyBuilder) {
    this.redis = redis
    this.keys = keys
    defineCommands(redis)
  }

  async create (input: NewApiKey): Promise<CreatedApiKey> {
    if (input.guildId !== undefined && input.servers !== undefined) throw new InvalidParameterError('give a server or a list of servers, not both')
    const servers = input.guildId === undefined ? assertServerScope(input.servers) : [assertSnowflake('guild_id', input.guildId)]
    if (!isPlan(input.plan)) throw new InvalidParameterError(`plan must be one of ${PLANS.join(', ')}`)
    const name = input.name === undefined ? null : assertLabel(input.name)
    const expiresIn = input.expiresInSeconds === undefined
      ? null
      : assertInteger('expires-in', input.expiresInSeconds, 1, MAX_EXPIRY_SECONDS)

    const id = newCredentialId()
    const key = newKey(id)
    const createdAt = await redisNow(this.redis)
    const expiresAt = input.expiresAt !== undefined
      ? checkExpiry(input.expiresAt, createdAt)
      : expiresIn === null ? null : createdAt + expiresIn * 1000
    const record: Record<string, string> = { hash: hashApiKey(key), plan: input.plan, created_at: String(createdAt) }
    const one = oneServer(servers)
    if (one !== null) record.guild_id = one
    else record.servers = encodeServerScope(servers)
    if (name !== null) record.name = name
    if (expiresAt !== null) record.expires_at = String(expiresAt)

    // The record and the servers' indexes live in different slots: write the record first, so
    // a key is never listed without one.
    await this.redis.hset(this.keys.apiKey(id), record)
    await this.#index(id, servers)
    return {
      id,
      key,
      guildId: one,
      servers,
      plan: input.plan,
      name,
      createdAt: new Date(createdAt),
      expiresAt: expiresAt === null ? null : new Date(expiresAt),
      lastUsedAt: null,
      revokedAt: null,
      rotatedAt: null
    }
  }

  /** Takes key `id` off the lists of the servers it read (`before`) and reads no more (`after`). */
  async #unindex (id: string, before: ServerScope, after: ServerScope): Promise<void> {
    if (before === ALL_SERVERS) {
      if (after !== ALL_SERVERS) await this.redis.srem(this.keys.allServersApiKeys(), id)
      return
    }
    const kept = after === ALL_SERVERS ? new Set<string>() : new Set(after)
    await Promise.all(before.filter((guildId) => !kept.has(guildId))
      .map(async (guildId) => await this.redis.srem(this.keys.guild(guildId).apiKeys, id)))
  }

  /** Takes stale entries off a server's list of keys and off the list of keys of every server. */
  async #unlist (guildId: string, fromOwn: string[], fromEvery: string[]): Promise<void> {
    if (fromOwn.length > 0) await this.redis.srem(this.keys.guild(guildId).apiKeys, ...fromOwn)
    if (fromEvery.length > 0) await this.redis.srem(this.keys.allServersApiKeys(), ...fromEvery)
  }

  /** Lists key `id` under each of its servers (or among the keys of every server). */
  async #index (id: string, servers: ServerScope): Promise<void> {
    if (servers === ALL_SERVERS) {
      await this.redis.sadd(this.keys.allServersApiKeys(), id)
      return
    }
    // One command per server: in a cluster, each server's index lives in its own slot.
    await Promise.all(servers.map(async (guildId) => await this.redis.sadd(this.keys.guild(guildId).apiKeys, id)))
  }

  /**
   * The keys that read a server (its own, the lists naming it, those of every server), newest
   * first; revoked ones included. Never the key itself.
   */
  async list (guildId: string): Promise<ApiKeyInfo[]> {
    assertSnowflake('guild_id', guildId)
    const [own, every] = await Promise.all([
      this.redis.smembers(this.keys.guild(guildId).apiKeys), this.redis.smembers(this.keys.allServersApiKeys())
    ])
    const infos = await Promise.all([...new Set([...own, ...every])].map(async (id) => await this.#info(id)))
    const records = new Map(infos.filter((info) => info !== null).map((info) => [info.id, info]))
    // The record decides: a change of servers cut off between its writes (update) can leave an
    // entry on a list the key no longer belongs to. It is not shown, and is taken off here.
    const strays = (ids: string[], belongs: (servers: ServerScope) => boolean): string[] =>
      ids.filter((id) => { const info = records.get(id); return info !== undefined && !belongs(info.servers) })
    await this.#unlist(guildId,
      strays(own, (servers) => servers !== ALL_SERVERS && servers.includes(guildId)),
      strays(every, (servers) => servers === ALL_SERVERS))
    return [...records.values()]
      .filter((info) => scopeIncludes(info.servers, [guildId]))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
  }

  async get (id: string): Promise<ApiKeyInfo | null> {
    return ID_PATTERN.test(id) ? await this.#info(id) : null
  }

  /** Revokes a key by id; every instance refuses it within seconds. Idempotent. */
  async revoke (id: string): Promise<ApiKeyInfo> {
    const info = await this.get(id)
    if (info === null) throw new ApiKeyNotFoundError(id)
    if (info.revokedAt !== null) return info
    const now = await redisNow(this.redis)
    await this.redis.hset(this.keys.apiKey(id), 'revoked_at', String(now))
    await this.#changed()
    return { ...info, revokedAt: new Date(now) }
  }

  /**
   * Replaces a live key's secret: the old key is refused on every instance within the lookup
   * cache's time (as a revocation is), the new one is returned this once and stored as a hash.
   * The id stays, and with it the server, plan, name, expiry, the rate-limit count and the
   * key's history in logs; so a rotation can neither reset a quota nor orphan a record.
   */
  async rotate (id: string): Promise<CreatedApiKey> {
    const info = await this.#live(id, 'rotate')
    const key = newKey(id)
    const now = await redisNow(this.redis)
    // One HSET: a revocation racing it still wins (revoked_at is left alone).
    await this.redis.hset(this.keys.apiKey(id), { hash: hashApiKey(key), rotated_at: String(now) })
    await this.#changed()
    return { ...info, key, rotatedAt: new Date(now) }
  }

  /** Moves a live key to another plan; each instance applies the new limit within the lookup cache's time. */
  async setPlan (id: string, plan: Plan | string): Promise<ApiKeyInfo> {
    return await this.update(id, { plan })
  }

  /**
   * Changes a live key's plan, name, expiry or servers (each when given); every instance applies
   * the change within the lookup cache's time, a server taken away included. Everything is
   * checked before anything is written.
   */
  async update (id: string, change: ApiKeyChange): Promise<ApiKeyInfo> {
    if (change.plan !== undefined && !isPlan(change.plan)) throw new InvalidParameterError(`plan must be one of ${PLANS.join(', ')}`)
    const name = change.name === undefined || change.name === null ? change.name : assertLabel(change.name)
    const servers = change.servers === undefined ? undefined : assertServerScope(change.servers)
    const info = await this.#live(id, 'change')
    const expiresAt = change.expiresAt === undefined || change.expiresAt === null
      ? change.expiresAt
      : new Date(checkExpiry(change.expiresAt, await redisNow(this.redis)))
    const set: Record<string, string> = {}
    const unset: string[] = []
    if (change.plan !== undefined) set.plan = change.plan
    if (name !== undefined) { if (name === null) unset.push('name'); else set.name = name }
    if (expiresAt !== undefined) { if (expiresAt === null) unset.push('expires_at'); else set.expires_at = String(expiresAt.getTime()) }
    if (servers !== undefined) {
      const one = oneServer(servers)
      if (one !== null) { set.guild_id = one; unset.push('servers') } else { set.servers = encodeServerScope(servers); unset.push('guild_id') }
      // Listed under its new servers before it reads them, so it is never unlisted where it reads.
      await this.#index(id, servers)
    }
    const record = this.keys.apiKey(id)
    // One transaction (one slot): a reader sees the whole change or none of it.
    const tx = this.redis.multi()
    if (Object.keys(set).length > 0) tx.hset(record, set)
    if (unset.length > 0) tx.hdel(record, ...unset)
    await tx.exec()
    if (servers !== undefined) await this.#unindex(id, info.servers, servers)
    await this.#changed()
    return {
      ...info,
      plan: (change.plan as Plan | undefined) ?? info.plan,
      name: name === undefined ? info.name : name,
      expiresAt: expiresAt === undefined ? info.expiresAt : expiresAt,
      ...(servers === undefined ? {} : { servers, guildId: oneServer(servers) })
    }
  }

  /**
   * Tells open live-update streams that a key was revoked, rotated or changed plan: every change
   * of that kind calls it after its write (streams check their keys again, see keys.apiKeyChanges).
   */
  async #changed (): Promise<void> {
    await this.redis.incr(this.keys.apiKeyChanges())
  }

  /** Checks a presented key (and stamps its last use when valid), by Redis's clock. */
  async check (key: string): Promise<KeyCheck> {
    const id = apiKeyId(key)
    if (id === null) return { status: 'unknown', redisNow: null }
    const [status, now, guildId, plan, expiresAt, serverList] = await this.redis.apiKeyLookup(this.keys.apiKey(id), hashApiKey(key))
    const redisNow = Number(now)
    if (status !== 'ok') return { status: status as 'unknown' | 'revoked' | 'expired', redisNow }
    const servers = decodeServerScope(guildId, serverList)
    if (!isPlan(plan) || servers === null) return { status: 'unknown', redisNow }
    return {
      status, id, guildId: typeof guildId === 'string' ? guildId : null, servers, plan, expiresAt: expiresAt === null ? null : Number(expiresAt), redisNow
    }
  }

  /** A key that rotate() or setPlan() may change: it exists, is not revoked and has not expired. */
  async #live (id: string, action: string): Promise<ApiKeyInfo> {
    const info = await this.get(id)
    if (info === null) throw new ApiKeyNotFoundError(id)
    if (info.revokedAt !== null) throw new ApiKeyInactiveError(`cannot ${action} API key ${id}: it was revoked`)
    if (info.expiresAt !== null && info.expiresAt.getTime() <= await redisNow(this.redis)) {
      throw new ApiKeyInactiveError(`cannot ${action} API key ${id}: it has expired`)
    }
    return info
  }

  async #info (id: string): Promise<ApiKeyInfo | null> {
    const r = await this.redis.hgetall(this.keys.apiKey(id))
    const servers = decodeServerScope(r.guild_id, r.servers)
    if (r.hash === undefined || servers === null || !isPlan(r.plan)) return null
    const date = (ms: string | undefined): Date | null => ms === undefined ? null : new Date(Number(ms))
    return {
      id,
      guildId: r.guild_id ?? null,
      servers,
      plan: r.plan,
      name: r.name ?? null,
      createdAt: new Date(Number(r.created_at)),
      expiresAt: date(r.expires_at),
      lastUsedAt: date(r.last_used_at),
      revokedAt: date(r.revoked_at),
      rotatedAt: date(r.rotated_at)
    }
  }
}
