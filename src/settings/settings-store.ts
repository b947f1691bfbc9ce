// Reading and changing a server's settings in Redis (src/settings/settings.ts says what they
// hold), and a process's cache of them. The cache may be behind: whatever is computed from it
// goes to a write script with the epoch it was computed at, and the script refuses it when the
// epoch moved, so the caller reads the settings again (`SettingsCache.refresh`) and sends again.
import { LRUCache } from 'lru-cache'
import type { RedisClient } from '../redis/client.js'
import type { KeyBuilder } from '../redis/keys.js'
import { defineCommands } from '../redis/scripts.js'
import * as scripts from '../redis/write-scripts.js'
import { assertSnowflake } from '../validation.js'
import { type GuildSettings, parseSettings, settingsChanges, type SettingsInput } from './settings.js'

/** Tries of a change whose epoch moved under it (another change came first): each reads the settings again. */
const CHANGE_TRIES = 5
const EPOCH_MOVED = -1

export class SettingsStore {
  readonly redis: RedisClient
  readonly keys: KeyBuilder

  constructor (redis: RedisClient, keys: KeyBuilder) {
    defineCommands(redis)
    this.redis = redis
    this.keys = keys
  }

  async read (guildId: string): Promise<GuildSettings> {
    assertSnowflake('guild_id', guildId)
    return parseSettings(await this.redis.hgetall(this.keys.guild(guildId).settings))
  }

  /** The settings as they are, and as `input` would make them (validated as a change is; nothing is written). */
  async proposed (guildId: string, input: SettingsInput): Promise<{ current: GuildSettings, proposed: GuildSettings }> {
    assertSnowflake('guild_id', guildId)
    const hash = await this.redis.hgetall(this.keys.guild(guildId).settings)
    const current = parseSettings(hash)
    const { set, clear } = settingsChanges(input, current)
    const merged: Record<string, string> = { ...hash, ...set }
    for (const field of clear) delete merged[field]
    return { current, proposed: parseSettings(merged) }
  }

  /**
   * Applies `input` (validated first: an error names the bad field, and nothing changes) and
   * returns the settings after it. A change that depends on the stored settings (a map merged
   * into the stored one, a curve that needs its list) is applied to the settings it was checked
   * against, or checked again.
   */
  async change (guildId: string, input: SettingsInput): Promise<GuildSettings> {
    const k = this.keys.guild(guildId)
    for (let tries = 1; ; tries++) {
      const current = await this.read(guildId)
      const { set, clear, dependsOnCurrent } = settingsChanges(input, current)
      const pairs = Object.entries(set).flat()
      const expectedEpoch = dependsOnCurrent ? current.epoch : ''
      const [status] = await scripts.configureGuild(this.redis, { ...k, expectedEpoch, fieldCount: pairs.length / 2 }, [...pairs, ...clear])
      if (status !== EPOCH_MOVED) return await this.read(guildId)
      if (tries === CHANGE_TRIES) throw new Error(`the settings of server ${guildId} changed ${tries} times while a change was applied`)
    }
  }
}

/** How many servers' settings a process keeps. */
const CACHED_SERVERS = 10_000

/** A process's settings of the servers it writes to, each as of its epoch. */
export class SettingsCache {
  readonly #store: SettingsStore
  readonly #cached = new LRUCache<string, Promise<GuildSettings>>({ max: CACHED_SERVERS })

  constructor (store: SettingsStore) {
    this.#store = store
  }

  /** The settings as last read (read now if never). */
  async get (guildId: string): Promise<GuildSettings> {
    let settings = this.#cached.get(guildId)
    if (settings === undefined) {
      settings = this.#store.read(guildId)
      this.#cached.set(guildId, settings)
      settings.catch(() => { this.#cached.delete(guildId) })
    }
    return await settings
  }

  /** Keeps settings this process just wrote (and read back): the next write computes from them. */
  set (guildId: string, settings: GuildSettings): void {
    this.#cached.set(guildId, Promise.resolve(settings))
  }

  /** The settings read again: after a script answered that their epoch moved. */
  async refresh (guildId: string): Promise<GuildSettings> {
    this.#cached.delete(guildId)
    return await this.get(guildId)
  }
}
