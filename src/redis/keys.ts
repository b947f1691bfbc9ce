// The one place Redis key names are spelled. docs/architecture.md, "Key schema", documents them.
//
// Every key of one server carries the hash tag `{<guild_id>}`, so a server's data lives in one
// cluster slot and one Lua script may touch all of it. An API key's record and its rate-limit
// window share the tag `{k:<key_id>}` for the same reason.
import { type ClientAddress, isClientAddress } from '../client-address.js'
import { SNOWFLAKE_PATTERN } from '../snowflake.js'

const SNOWFLAKE = new RegExp(SNOWFLAKE_PATTERN)
const PERIOD_LABEL = /^\d{4}-(W\d{2}|\d{2})$/
/** A webhook's id (src/webhooks/webhook-store.ts makes them). */
export const WEBHOOK_ID_PATTERN = '^[0-9a-f]{16}$'
const WEBHOOK_ID = new RegExp(WEBHOOK_ID_PATTERN)
const DAY_LABEL = /^\d{4}-\d{2}-\d{2}$/

export interface GuildKeys {
  /** ZSET: board member (see `boardMember`) -> XP. */
  board: string
  /** HASH: board member -> the member's record, "<daily streak>:<last claim ms>:<username>" (src/redis/records.ts). */
  members: string
  /** HASH: exact aggregates: xp_total, members_with_xp, level_sum:<curve> for every curve. */
  stats: string
  /** HASH: curve, multiplier_hundredths. */
  settings: string
  /** STRING: the server's data version, bumped by every write (ETags and response caches key on it). */
  version: string
  /** HASH: board member -> why the user is hidden ("left", "opted_out", comma-separated; src/redis/commands/includes/visibility.lua). */
  hidden: string
  /** SET: ids of this server's API keys. */
  apiKeys: string
  /**
   * ZSET: board member -> Unix ms (Redis's clock) of the member's last award that added XP, as
   * versions before the hour hashes (`cooldownHour`) kept the cooldowns: read, and written as well,
   * while it exists (an older instance may still keep it), never created (includes/rules.lua).
   */
  cooldowns: string
  /**
   * HASH: who listens to the server's events (includes/events.lua): `type:<event>` -> webhooks
   * that want it, `live` -> Unix ms until which a live stream listens, `limit` (the queue's
   * length), `notify` (the channel that wakes the delivery workers), `seq` (events so far).
   */
  eventSubscriptions: string
  /** STREAM: the server's events, in order: the webhooks' queue and the stats streams' feed. */
  events: string
  /**
   * HASH: the server's seasons (src/seasons/season-state.ts): `current` (id), `current_started_at`,
   * `anchor` (when the schedule last changed), `oldest` (the oldest id kept), `name:<id>`, and
   * `<id>` -> JSON { name, started_at, ended_at } once a season ended.
   */
  seasons: string
  /** ZSET: board member -> XP gained by awards in the current season; renamed to `season(id)` when it ends. */
  seasonCurrent: string
  /**
   * HASH: the server's history (src/history/): `since` (Unix ms of the first write that kept
   * history), `latest_day` (the newest day with a day-start hash), `closed_through` (the last
   * closed day), `closed_from` (the first of the closed days that follow on from each other up to
   * it), `next_index` (the next member history index).
   */
  hist: string
  /** HASH: closed day `YYYY-MM-DD` -> "<total_members>:<total_xp>:<active_members>:<xp_gained>". */
  histStats: string
  /** STRING: the ranks at the end of the last closed day, 3 bytes per history index (0: no rank). */
  histRanksLatest: string
  /** ZSET, while a day closes: the visible board as it stood at the day's end. */
  histSnapshot: string
  /** ZSET, while a day closes: the members the day touched, by history index. */
  histOrder: string
  /** HASH, while a day closes: the change records of the touched members given their history index by the close, a field per ranks call. */
  histFresh: string
  /** STRING with a TTL: the token of the instance closing the server's days. */
  histLease: string
}

/** Keys of schema 1 (before 2026-11), read only by the migration to schema 2. */
export interface LegacyGuildKeys {
  /** HASH: user_id -> username. */
  names: string
  /** HASH: user_id -> current daily streak. */
  streaks: string
  /** HASH: user_id -> last daily claim, Unix milliseconds. */
  claims: string
}

/** The layout this code reads and writes; `KeyBuilder.schema` holds the one a Redis has. */
export const SCHEMA_VERSION = 2

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
      members: `${base}:members`,
      stats: `${base}:stats`,
      settings: `${base}:settings`,
      version: `${base}:version`,
      hidden: `${base}:hidden`,
      apiKeys: `${base}:api-keys`,
      cooldowns: `${base}:cooldowns`,
      eventSubscriptions: `${base}:event-subscriptions`,
      events: `${base}:events`,
      seasons: `${base}:seasons`,
      seasonCurrent: `${base}:season:current`,
      hist: `${base}:hist`,
      histStats: `${base}:hist:stats`,
      histRanksLatest: `${base}:hist:ranks:latest`,
      histSnapshot: `${base}:hist:snapshot`,
      histOrder: `${base}:hist:order`,
      histFresh: `${base}:hist:fresh`,
      histLease: `${base}:hist:lease`
    }
  }

  legacyGuild (guildId: string): LegacyGuildKeys {
    const base = `${this.prefix}:{${guildId}}`
    return { names: `${base}:names`, streaks: `${base}:streaks`, claims: `${base}:claims` }
  }

  /** The pattern that finds every server's board with SCAN (the migration walks servers by it). */
  get boardPattern (): string {
    return `${this.prefix}:{*}:board`
  }

  /** The guild id in a board key found by `boardPattern`, or null. */
  guildOfBoard (key: string): string | null {
    const head = `${this.prefix}:{`
    const tail = '}:board'
    const id = key.startsWith(head) && key.endsWith(tail) ? key.slice(head.length, -tail.length) : ''
    return SNOWFLAKE.test(id) ? id : null
  }

  /** The guild id in an events key (`GuildKeys.events`, which the write scripts publish), or null. */
  guildOfEvents (key: string): string | null {
    const head = `${this.prefix}:{`
    const tail = '}:events'
    const id = key.startsWith(head) && key.endsWith(tail) ? key.slice(head.length, -tail.length) : ''
    return SNOWFLAKE.test(id) ? id : null
  }

  /**
   * HASH: a server's webhooks, id -> JSON record: `url`, `events`, `secret`, `created_at`, and
   * `disabled_at`, `disabled_reason` once disabled (includes/webhooks.lua).
   */
  webhooks (guildId: string): string {
    return `${this.prefix}:{${guildId}}:webhooks`
  }

  /**
   * HASH: the webhooks' delivery state, id -> JSON: `cursor` (the stream id of the last event
   * done with), `seq` (its number), `failures` (in a row), `retry_at` (Unix ms, 0: at once).
   */
  webhookState (guildId: string): string {
    return `${this.prefix}:{${guildId}}:webhook-state`
  }

  /** LIST: a webhook's last delivery attempts, newest first (JSON each), at most 100. */
  webhookDeliveries (guildId: string, webhookId: string): string {
    if (!WEBHOOK_ID.test(webhookId)) throw new Error(`not a webhook id: ${JSON.stringify(webhookId)}`)
    return `${this.prefix}:{${guildId}}:webhook-deliveries:${webhookId}`
  }

  /** STRING (with a TTL): the instance that delivers the server's events now (its lease). */
  webhookLease (guildId: string): string {
    return `${this.prefix}:{${guildId}}:webhook-lease`
  }

  /** SET: the servers that have or had a webhook: the delivery workers' sweep walks it. */
  webhookServers (): string {
    return `${this.prefix}:webhook-servers`
  }

  /** The pub/sub channel on which write scripts name a server's events key when they add to it. */
  webhookChannel (): string {
    return `${this.prefix}:webhook-events`
  }

  /** STRING: the schema version of the data under this prefix. */
  get schema (): string {
    return `${this.prefix}:schema`
  }

  /**
   * ZSET: board member -> XP gained by awards in one ISO week (`2026-W47`) or UTC month
   * (`2026-11`), labels from src/periods/periods.ts. Expires after the period that follows it.
   */
  period (guildId: string, label: string): string {
    if (!PERIOD_LABEL.test(label)) throw new Error(`not a period label: ${JSON.stringify(label)}`)
    return `${this.prefix}:{${guildId}}:period:${label}`
  }

  /** ZSET: board member -> XP gained in the ended season `id` (kept `season_retention` seasons). */
  season (guildId: string, id: number): string {
    if (!Number.isSafeInteger(id) || id < 1) throw new Error(`not a season id: ${JSON.stringify(id)}`)
    return `${this.prefix}:{${guildId}}:season:${id}`
  }

  /**
   * ZSET: board member -> XP gained by awards during one day of the server (its time zone,
   * `YYYY-MM-DD`), as earlier versions kept it (with 0 for a member a write touched without a
   * gain); no longer written, but read where it is (the daily cap, the close) until its day is
   * closed: a day's gains are dayGains plus this.
   */
  day (guildId: string, label: string): string {
    return `${this.prefix}:{${guildId}}:day:${dayLabel(label)}`
  }

  /**
   * HASH: board member -> XP gained by awards during one day of the server (its time zone,
   * `YYYY-MM-DD`), members that gained only: the daily cap's count and the day's gains for its history.
   */
  dayGains (guildId: string, label: string): string {
    return `${this.prefix}:{${guildId}}:day-gains:${dayLabel(label)}`
  }

  /**
   * HASH: board member -> its visible XP before its first change during one day (`-`: it was not
   * on the visible board), written once per member and day by every write that changes a score
   * or a visibility: what the day before's close reads for members changed since its end, and
   * the members the day touched, which its own close reads.
   */
  dayStart (guildId: string, label: string): string {
    return `${this.prefix}:{${guildId}}:day-start:${dayLabel(label)}`
  }

  /** STRING: the ranks at the end of a closed day (other than the last), 3 bytes per history index. */
  histRanks (guildId: string, label: string): string {
    return `${this.prefix}:{${guildId}}:hist:ranks:${dayLabel(label)}`
  }

  /**
   * STRING: the members a closed day touched, sorted by history index, 13 bytes each: the index
   * (3), the visible XP at the day's start (5; all ones: not visible) and the XP gained (5).
   */
  histChanges (guildId: string, label: string): string {
    return `${this.prefix}:{${guildId}}:hist:changes:${dayLabel(label)}`
  }

  /**
   * STRING: a day's change records as one closer wrote them whole (a server's first close), with a
   * TTL, until it renames them into place under its lease (`token`, the lease's).
   */
  histChangesStaging (guildId: string, token: string): string {
    return `${this.prefix}:{${guildId}}:hist:changes-staging:${token}`
  }

  /**
   * ZSET: server id -> when its next day ends or season is due (Unix ms): the servers the
   * calendar ticker of every instance looks after (src/calendar-ticker/).
   */
  calendarServers (): string {
    return `${this.prefix}:calendar-servers`
  }

  /**
   * HASH: board member -> Unix ms (Redis's clock) of the member's last award that added XP during
   * hour `hour` (Unix ms / COOLDOWN_HOUR_MS), while a cooldown is set (includes/rules.lua).
   */
  cooldownHour (guildId: string, hour: number): string {
    if (!Number.isSafeInteger(hour) || hour < 0) throw new Error(`not an hour: ${JSON.stringify(hour)}`)
    return `${this.prefix}:{${guildId}}:cooldowns:${hour}`
  }

  /** HASH: operation id -> reply of the writes applied in one time bucket (src/writer/operations.ts), with a TTL. */
  operations (guildId: string, bucket: number): string {
    return `${this.prefix}:{${guildId}}:ops:${bucket}`
  }

  /**
   * STRING: a counter every change that can refuse a key or change its plan moves (revoke,
   * rotate, setPlan): an instance with open streams reads it each second and checks its streams'
   * keys again only when it moved (src/live/live-watcher.ts).
   */
  apiKeyChanges (): string {
    return `${this.prefix}:api-key-changes`
  }

  /** HASH: one API key's record (hash of the key, guild, plan, dates). */
  apiKey (keyId: string): string {
    return `${this.prefix}:{k:${keyId}}:api-key`
  }

  /** SET: ids of the API keys that read every server (a server's own keys are in its `apiKeys`). */
  allServersApiKeys (): string {
    return `${this.prefix}:all-servers:api-keys`
  }

  /** HASH: one write-API token's record (hash of the token, name, servers, scopes, dates). */
  token (tokenId: string): string {
    return `${this.prefix}:{t:${tokenId}}:token`
  }

  /** SET: ids of every write-API token. */
  tokens (): string {
    return `${this.prefix}:tokens`
  }

  /**
   * STRING (JSON, with a TTL): what a write request sent with `Idempotency-Key` answered, under
   * the token that sent it (src/pipeline/idempotency.ts). `key` matches [A-Za-z0-9._:-]{1,128}.
   */
  idempotency (tokenId: string, key: string): string {
    return `${this.prefix}:{t:${tokenId}}:idem:${key}`
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

  /**
   * HASH: a public board's slug -> the server that holds it (src/settings/public-slugs.ts): the
   * registry that keeps a slug to one server of the installation.
   */
  publicSlugs (): string {
    return `${this.prefix}:public-slugs`
  }

  /**
   * HASH: the sliding-window buckets that count one client address's reads of public boards
   * (PUBLIC_LIMIT_PER_MINUTE). Only a normalized address may name it, as for `authFailures`.
   */
  publicReads (address: ClientAddress): string {
    if (!isClientAddress(address)) throw new Error(`not a normalized client address: ${JSON.stringify(address)}`)
    return `${this.prefix}:{a:${address}}:public-reads`
  }

  /** STRING: what readiness probes write (a write, so that OOM or a read-only replica shows). */
  readinessProbe (): string {
    return `${this.prefix}:readiness-probe`
  }
}

function dayLabel (label: string): string {
  if (!DAY_LABEL.test(label)) throw new Error(`not a day label: ${JSON.stringify(label)}`)
  return label
}

const ID_WIDTH = 20

/**
 * The sorted-set member for a user. Pages are read with a reverse range, which orders equal
 * scores by member descending; the contract wants ties by user_id ascending as numbers. So the
 * member is the user_id zero-padded to 20 digits and then nine's-complemented digit by digit
 * (`"99"` -> `"99999999999999999900"`): descending order of the complement is ascending order
 * of the id. Scripts never decode it: readers turn it back into the id here, outside Redis.
 */
export function boardMember (userId: string): string {
  return complement(userId.padStart(ID_WIDTH, '0'), 0)
}

export function userIdFromBoardMember (member: string): string {
  let first = 0 // skip the complemented padding ('9' stands for '0'), keeping at least one digit
  while (first < member.length - 1 && member.charCodeAt(first) === 57) first++
  return complement(member, first)
}

const NINES = ['9', '8', '7', '6', '5', '4', '3', '2', '1', '0']
/** A board member or user id is complemented in here and read out as one string (the seed and import write millions). */
const scratch = Buffer.alloc(ID_WIDTH)

function complement (digits: string, from: number): string {
  const length = digits.length - from
  let i = 0
  for (; i < length && i < ID_WIDTH; i++) {
    const code = digits.charCodeAt(from + i)
    if (code < 48 || code > 57) break
    scratch[i] = 105 - code // '0' + '9' - digit
  }
  if (i === length) return scratch.toString('latin1', 0, length)
  let out = ''
  for (let j = from; j < digits.length; j++) out += NINES[digits.charCodeAt(j) - 48] ?? ''
  return out
}
