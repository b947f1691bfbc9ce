// The one place Redis key names are spelled. The README's "Key schema" section documents them.
//
// Every key of one server carries the hash tag `{<guild_id>}`, so a server's data lives in one
// cluster slot and one Lua script may touch all of it. An API key's record and its rate-limit
// window share the tag `{k:<key_id>}` for the same reason.
import { type ClientAddress, isClientAddress } from '../http/client-address.js'

export interface GuildKeys {
  /** ZSET: board member (see `boardMember`) -> XP. */
  board: string
  /** HASH: user_id -> username. */
  names: string
  /** HASH: user_id -> current daily streak. */
  streaks: string
  /** HASH: user_id -> last daily claim, Unix milliseconds. */
  claims: string
  /** HASH: exact aggregates (see `StatField`). */
  stats: string
  /** HASH: curve, multiplier_hundredths. */
  settings: string
  /** SET: ids of this server's API keys. */
  apiKeys: string
}

export class KeyBuilder {
  readonly prefix: string

  constructor (prefix = 'lb') {
    if (!/^[A-Za-z0-9:._-]{1,64}$/.test(prefix)) {
      // Braces would move the hash tag; anything else exotic only invites quoting bugs.
      throw new Error(`REDIS_PREFIX must be 1-64 characters of A-Z a-z 0-9 : . _ - (got ${JSON.stringify(prefix)})`)
    }
    this.prefix = prefix
  }

  guild (guildId: string): GuildKeys {
    const base = `${this.prefix}:{${guildId}}`
    return {
      board: `${base}:board`,
      names: `${base}:names`,
      streaks: `${base}:streaks`,
      claims: `${base}:claims`,
      stats: `${base}:stats`,
      settings: `${base}:settings`,
      apiKeys: `${base}:api-keys`
    }
  }

  /** HASH: one API key's record (hash of the key, guild, plan, dates). */
  apiKey (keyId: string): string {
    return `${this.prefix}:{k:${keyId}}:api-key`
  }

  /** HASH: the sliding-window buckets that rate-limit one API key. */
  keyRateLimit (keyId: string): string {
    return `${this.prefix}:{k:${keyId}}:rate`
  }

  /**
   * HASH: the sliding-window buckets that count one client address's failed authentications.
   * Only a normalized address (see client-address.ts) may name it: never text from a header.
   */
  authFailures (address: ClientAddress): string {
    if (!isClientAddress(address)) throw new Error(`not a normalized client address: ${JSON.stringify(address)}`)
    return `${this.prefix}:{a:${address}}:auth-failures`
  }

  /** STRING: what readiness probes write (a write, so that OOM or a read-only replica shows). */
  readinessProbe (): string {
    return `${this.prefix}:readiness-probe`
  }
}

const ID_WIDTH = 20

/**
 * The sorted-set member for a user. Pages are read with a reverse range, which orders equal
 * scores by member descending; the contract wants ties by user_id ascending as numbers. So the
 * member is the user_id zero-padded to 20 digits and then nine's-complemented digit by digit
 * (`"99"` -> `"99999999999999999900"`): descending order of the complement is ascending order
 * of the id. `src/redis/commands/includes/ids.lua` holds the inverse for scripts.
 */
export function boardMember (userId: string): string {
  return complement(userId.padStart(ID_WIDTH, '0'))
}

export function userIdFromBoardMember (member: string): string {
  return complement(member).replace(/^0+(?=\d)/, '')
}

function complement (digits: string): string {
  let out = ''
  for (let i = 0; i < digits.length; i++) out += String(57 - digits.charCodeAt(i))
  return out
}
