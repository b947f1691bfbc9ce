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
import { type GuildSettings, parseSettings, SETTINGS_FIELDS, settingsChanges, type SettingsInput } from './settings.js'
import { PublicSlugs } from './public-slugs.js'
import { SlugTakenError } from '../errors.js'
import { CURRENT_SEASON_FIELDS, type CurrentSeason, parseCurrentSeason } from '../seasons/season-state.js'

/**
 * The settings a write computes with, and the current season: one epoch covers both (a season's
 * end moves it), so a script given the epoch knows both are still what the caller computed with.
 */
export interface GuildWriteSettings extends GuildSettings {
  currentSeason: CurrentSeason
}

/** Tries of a change whose epoch moved under it (another change came first): each reads the settings again. */
const CHANGE_TRIES = 5
const EPOCH_MOVED = -1

export class SettingsStore {
  readonly redis: RedisClient
  readonly keys: KeyBuilder
  /** The registry that keeps a public board's slug to one server. */
  readonly slugs: PublicSlugs

  constructor (redis: RedisClient, keys: KeyBuilder) {
    defineCommands(redis)
    this.redis = redis
    this.keys = keys
    this.slugs = new PublicSlugs(redis, keys)
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

  /** The settings and the current season, read together (one transaction: both at one epoch). */
  async readForWrite (guildId: string): Promise<GuildWriteSettings> {
    assertSnowflake('guild_id', guildId)
    const k = this.keys.guild(guildId)
    const replies = await this.redis.multi().hgetall(k.settings).hmget(k.seasons, ...CURRENT_SEASON_FIELDS).exec()
    const [[settingsError, hash] = [null, {}], [seasonError, season] = [null, []]] = replies ?? []
    if (settingsError !== null || seasonError !== null) throw settingsError ?? seasonError
    return { ...parseSettings(hash as Record<string, string>), currentSeason: parseCurrentSeason(season as Array<string | null>) }
  }

  /**
   * Applies `input` (validated first: an error names the bad field, and nothing changes) and
   * returns the settings after it. A change that depends on the stored settings (a map merged
   * into the stored one, a curve that needs its list) is applied to the settings it was checked
   * against, or checked again. A public slug another server holds is refused (SlugTakenError).
   */
  async change (guildId: string, input: SettingsInput): Promise<GuildSettings> {
    const k = this.keys.guild(guildId)
    for (let tries = 1; ; tries++) {
      const current = await this.read(guildId)
      const { set, clear, dependsOnCurrent } = settingsChanges(input, current)
      const pairs = Object.entries(set).flat()
      const expectedEpoch = dependsOnCurrent ? current.epoch : ''
      const slug = set[SETTINGS_FIELDS.publicSlug]
      const claimed = slug !== undefined && slug !== current.public.slug && await this.slugs.claim(guildId, slug)
      const giveBack = async (): Promise<void> => { if (claimed) await this.slugs.release(guildId, slug) }
      let status: number
      try {
        [status] = await scripts.configureGuild(this.redis, { ...k, expectedEpoch, fieldCount: pairs.length / 2 }, [...pairs, ...clear])
      } catch (err) {
        await giveBack().catch(() => {}) // an unknown outcome: a claim left behind is stale, and taken over
        throw err
      }
      if (status !== EPOCH_MOVED) return await this.#settleSlugs(guildId, current, claimed ? slug : undefined)
      await giveBack()
      if (tries === CHANGE_TRIES) throw new Error(`the settings of server ${guildId} changed ${tries} times while a change was applied`)
    }
  }

  /**
   * After a change was written: the slug it claimed must still be this server's (another server
   * may have taken the claim over as stale before the settings named it: then the change's slug
   * is put back and the slug is refused), and a slug the settings no longer name is given back.
   */
  async #settleSlugs (guildId: string, before: GuildSettings, claimed: string | undefined): Promise<GuildSettings> {
    if (claimed !== undefined && await this.slugs.holder(claimed) !== guildId) {
      const k = this.keys.guild(guildId)
      const previous = before.public.slug
      await scripts.configureGuild(this.redis, { ...k, expectedEpoch: '', fieldCount: previous === null ? 0 : 1 },
        previous === null ? [SETTINGS_FIELDS.publicSlug] : [SETTINGS_FIELDS.publicSlug, previous])
      throw new SlugTakenError(claimed)
    }
    const after = await this.read(guildId)
    if (before.public.slug !== null && after.public.slug !== before.public.slug) await this.slugs.release(guildId, before.public.slug)
    return after
  }
}

/** How many servers' settings a process keeps. */
const CACHED_SERVERS = 10_000

/** A process's settings (and current season) of the servers it writes to, each as of its epoch. */
export class SettingsCache {
  readonly #store: SettingsStore
  /** Each server's reading: in progress, then its value. */
  readonly #cached = new LRUCache<string, { read: Promise<GuildWriteSettings>, value?: GuildWriteSettings }>({ max: CACHED_SERVERS })

  constructor (store: SettingsStore) {
    this.#store = store
  }

  /** The settings as last read (read now if never). */
  async get (guildId: string): Promise<GuildWriteSettings> {
    let entry = this.#cached.get(guildId)
    if (entry === undefined) {
      const read = this.#store.readForWrite(guildId)
      const reading: { read: Promise<GuildWriteSettings>, value?: GuildWriteSettings } = { read }
      entry = reading
      this.#cached.set(guildId, reading)
      read.then((value) => { reading.value = value }, () => { if (this.#cached.get(guildId) === reading) this.#cached.delete(guildId) })
    }
    return await entry.read
  }

  /**
   * The settings as last read, or undefined while they are being read (or never were): a write
   * that has them sends its script at once, in the order it was called.
   */
  peek (guildId: string): GuildWriteSettings | undefined {
    return this.#cached.get(guildId)?.value
  }

  /**
   * The settings read again: after a script answered that the epoch of `stale` moved. When they
   * were read again since `stale` (the other writes refused with it), that reading is the answer.
   */
  async refresh (guildId: string, stale?: GuildWriteSettings): Promise<GuildWriteSettings> {
    const cached = this.#cached.get(guildId)
    if (cached !== undefined && stale !== undefined) {
      const current = await cached.read.catch(() => undefined)
      if (current !== undefined && current !== stale && current.epoch !== stale.epoch) return current
    }
    this.#cached.delete(guildId)
    return await this.get(guildId)
  }
}
