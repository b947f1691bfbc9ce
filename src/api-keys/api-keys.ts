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
import { assertInteger, assertSnowflake } from '../validation.js'
import { isPlan, type Plan, PLANS } from './plans.js'

export const API_KEY_PREFIX = 'lbk_'
const KEY_PATTERN = /^lbk_([0-9a-f]{16})_[A-Za-z0-9_-]{32}$/
const ID_PATTERN = /^[0-9a-f]{16}$/
const MAX_EXPIRY_SECONDS = 10 * 366 * 24 * 3600

export interface ApiKeyInfo {
  id: string
  guildId: string
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
  | { status: 'ok', id: string, guildId: string, plan: Plan, expiresAt: number | null, redisNow: number }
  | { status: 'unknown' | 'revoked' | 'expired', redisNow: number | null }

/** A fresh key for record `id`: 192 random bits of secret. */
function newKey (id: string): string {
  return `${API_KEY_PREFIX}${id}_${randomBytes(24).toString('base64url')}`
}

export function hashApiKey (key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** The id inside a well-formed key, or null for anything that cannot be one of ours. */
export function apiKeyId (key: string): string | null {
  return KEY_PATTERN.exec(key)?.[1] ?? null
}

export class ApiKeyStore {
  readonly redis: RedisClient
  readonly keys: KeyBuilder

  constructor (redis: RedisClient, keys: KeyBuilder) {
    this.redis = redis
    this.keys = keys
    defineCommands(redis)
  }

  async create (input: { guildId: string, plan: Plan | string, name?: string, expiresInSeconds?: number }): Promise<CreatedApiKey> {
    const guildId = assertSnowflake('guild_id', input.guildId)
    if (!isPlan(input.plan)) throw new InvalidParameterError(`plan must be one of ${PLANS.join(', ')}`)
    const name = input.name === undefined ? null : input.name.trim()
    if (name !== null && (name.length === 0 || name.length > 100)) {
      throw new InvalidParameterError('name must be 1 to 100 characters')
    }
    const expiresIn = input.expiresInSeconds === undefined
      ? null
      : assertInteger('expires-in', input.expiresInSeconds, 1, MAX_EXPIRY_SECONDS)

    const id = randomBytes(8).toString('hex')
    const key = newKey(id)
    const createdAt = await redisNow(this.redis)
    const expiresAt = expiresIn === null ? null : createdAt + expiresIn * 1000
    const record: Record<string, string> = {
      hash: hashApiKey(key), guild_id: guildId, plan: input.plan, created_at: String(createdAt)
    }
    if (name !== null) record.name = name
    if (expiresAt !== null) record.expires_at = String(expiresAt)

    // The record and the server's index live in different slots: write the record first, so
    // a key is never listed without one.
    await this.redis.hset(this.keys.apiKey(id), record)
    await this.redis.sadd(this.keys.guild(guildId).apiKeys, id)
    return {
      id,
      key,
      guildId,
      plan: input.plan,
      name,
      createdAt: new Date(createdAt),
      expiresAt: expiresAt === null ? null : new Date(expiresAt),
      lastUsedAt: null,
      revokedAt: null,
      rotatedAt: null
    }
  }

  /** A server's keys, newest first; revoked ones included. Never the key itself. */
  async list (guildId: string): Promise<ApiKeyInfo[]> {
    assertSnowflake('guild_id', guildId)
    const ids = await this.redis.smembers(this.keys.guild(guildId).apiKeys)
    const records = await Promise.all(ids.map(async (id) => await this.#info(id)))
    return records
      .filter((info): info is ApiKeyInfo => info !== null)
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
    if (!isPlan(plan)) throw new InvalidParameterError(`plan must be one of ${PLANS.join(', ')}`)
    const info = await this.#live(id, 'change the plan of')
    await this.redis.hset(this.keys.apiKey(id), 'plan', plan)
    await this.#changed()
    return { ...info, plan }
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
    const [status, now, guildId, plan, expiresAt] = await this.redis.apiKeyLookup(this.keys.apiKey(id), hashApiKey(key))
    const redisNow = Number(now)
    if (status !== 'ok') return { status: status as 'unknown' | 'revoked' | 'expired', redisNow }
    if (!isPlan(plan) || typeof guildId !== 'string') return { status: 'unknown', redisNow }
    return { status, id, guildId, plan, expiresAt: expiresAt === null ? null : Number(expiresAt), redisNow }
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
    if (r.hash === undefined || r.guild_id === undefined || !isPlan(r.plan)) return null
    const date = (ms: string | undefined): Date | null => ms === undefined ? null : new Date(Number(ms))
    return {
      id,
      guildId: r.guild_id,
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
