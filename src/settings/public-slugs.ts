// Public boards' slugs: the installation's registry (`lb:public-slugs`, slug -> server) that keeps
// a slug to one server, and the resolution of a slug to the server whose public board it is.
//
// A server's settings (`public_enabled`, `public_slug`) are the truth; the registry reserves. The
// two live in different cluster slots, so no one script holds both: a change claims the slug in
// the registry first, then writes the settings, then checks that the registry still names it
// (SettingsStore.change). A slug whose holder's settings do not name it is stale (a change that
// never finished, a server that moved away) and may be taken over; a server that lost its claim
// that way between its claim and its check undoes its settings and is told the slug is taken. A
// slug resolves only to a server whose settings are public under it, so no stale entry shows a board.
import type { RedisClient } from '../redis/client.js'
import type { KeyBuilder } from '../redis/keys.js'
import { defineCommands } from '../redis/scripts.js'
import * as scripts from '../redis/write-scripts.js'
import { SlugTakenError } from '../errors.js'
import { SETTINGS_FIELDS, SETTINGS_LIMITS } from './settings.js'

/** Takeovers of a stale slug tried before a claim gives up (each found another stale holder). */
const CLAIM_TRIES = 3

export class PublicSlugs {
  readonly redis: RedisClient
  readonly keys: KeyBuilder

  constructor (redis: RedisClient, keys: KeyBuilder) {
    defineCommands(redis)
    this.redis = redis
    this.keys = keys
  }

  /** The server that holds `slug` in the registry, or null. */
  async holder (slug: string): Promise<string | null> {
    return await this.redis.hget(this.keys.publicSlugs(), slug)
  }

  /** The server whose public board `slug` is (its settings public under it), or null: unknown, stale, or not public. */
  async resolve (slug: string): Promise<string | null> {
    if (!SETTINGS_LIMITS.slug.test(slug)) return null
    const guildId = await this.holder(slug)
    if (guildId === null) return null
    const [enabled, named] = await this.redis.hmget(this.keys.guild(guildId).settings, SETTINGS_FIELDS.publicEnabled, SETTINGS_FIELDS.publicSlug)
    return enabled === '1' && named === slug ? guildId : null
  }

  /** Whether `guildId`'s settings name `slug`. */
  async #names (guildId: string, slug: string): Promise<boolean> {
    return await this.redis.hget(this.keys.guild(guildId).settings, SETTINGS_FIELDS.publicSlug) === slug
  }

  /**
   * Claims `slug` for `guildId`, before its settings name it; SlugTakenError when another server's
   * settings name it. Returns whether the claim is new (the caller gives it back if it fails).
   */
  async claim (guildId: string, slug: string): Promise<boolean> {
    let stale = ''
    for (let tries = 1; ; tries++) {
      const holder = await this.holder(slug)
      if (holder === guildId) return false
      const [claimed, other] = await scripts.claimSlug(this.redis, { slugs: this.keys.publicSlugs(), slug, guildId, staleHolder: stale })
      if (claimed === 1) return true
      if (other === undefined || await this.#names(other, slug) || tries === CLAIM_TRIES) throw new SlugTakenError(slug)
      stale = other
    }
  }

  /** Gives `slug` back, if `guildId` holds it. */
  async release (guildId: string, slug: string): Promise<void> {
    await scripts.releaseSlug(this.redis, { slugs: this.keys.publicSlugs(), slug, guildId })
  }
}
