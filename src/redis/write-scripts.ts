// The write scripts, one typed call each taking one object (as bullmq builds each script's
// arguments in one named function): KEYS by the names in the script's header, ARGV by name, put
// in the header's order here and nowhere else. test/write-scripts.test.ts holds each list against
// its .lua header, so a script and its caller cannot drift apart one position at a time.
import type { RedisClient } from './client.js'

type Arg = string | number

/** Each write script's KEYS (as its header names them, in camelCase) and ARGV, in the header's order. */
export const WRITE_SCRIPTS = {
  awardXp: {
    keys: ['board', 'members', 'stats', 'settings', 'version', 'ops', 'opsPrev', 'week', 'month', 'eventSubscriptions', 'events', 'season', 'day', 'dayGains', 'dayStart', 'hist', 'cooldowns', 'hidden', 'cooldownHour', 'cooldownHourPrev', 'cooldownHourOld'],
    argv: ['member', 'gain', 'username', 'maxXp', 'opId', 'opsTtlMs', 'from', 'until', 'weekExpireAt', 'monthExpireAt',
      'epoch', 'seasonEndsAt', 'dayLabel', 'dayExpireAt', 'displayName', 'avatarUrl']
  },
  // Then 6 values per award (board member, gain, username, its own operation id or '', display
  // name, avatar URL): awardBatch's `awards`.
  awardBatch: {
    keys: ['board', 'members', 'stats', 'settings', 'version', 'ops', 'opsPrev', 'week', 'month', 'eventSubscriptions', 'events', 'season', 'day', 'dayGains', 'dayStart', 'hist', 'cooldowns', 'hidden', 'cooldownHour', 'cooldownHourPrev', 'cooldownHourOld'],
    argv: ['maxXp', 'opsTtlMs', 'from', 'until', 'weekExpireAt', 'monthExpireAt', 'callOpId', 'epoch', 'seasonEndsAt', 'dayLabel', 'dayExpireAt']
  },
  setXp: {
    keys: ['board', 'members', 'stats', 'version', 'ops', 'opsPrev', 'settings', 'eventSubscriptions', 'events', 'dayStart', 'hist', 'hidden'],
    argv: ['member', 'xp', 'username', 'opId', 'opsTtlMs', 'from', 'until', 'epoch', 'dayLabel', 'dayExpireAt', 'displayName', 'avatarUrl']
  },
  setUsername: {
    keys: ['board', 'members', 'version', 'ops', 'opsPrev'],
    argv: ['member', 'username', 'opId', 'opsTtlMs', 'displayName', 'avatarUrl']
  },
  removeMember: {
    keys: ['board', 'members', 'stats', 'version', 'ops', 'opsPrev', 'week', 'lastWeek', 'month', 'lastMonth', 'season', 'settings', 'dayStart', 'hist', 'hidden', 'cooldowns', 'cooldownHour', 'cooldownHourPrev'],
    argv: ['member', 'opId', 'opsTtlMs', 'from', 'until', 'epoch', 'dayLabel', 'dayExpireAt']
  },
  dailyClaim: {
    keys: ['board', 'members', 'version', 'ops', 'opsPrev', 'settings', 'dayStart', 'hist', 'hidden'],
    argv: ['member', 'atMs', 'maxAheadMs', 'opId', 'opsTtlMs', 'from', 'until', 'epoch', 'dayLabel', 'dayExpireAt']
  },
  // Then the members, their XP and records, and the profiles (see bulk-set-members-8.lua): bulkSetMembers's `members`.
  bulkSetMembers: {
    keys: ['board', 'members', 'stats', 'version', 'settings', 'dayStart', 'hist', 'hidden'],
    argv: ['whole', 'named', 'dated', 'bare', 'from', 'until', 'epoch', 'dayLabel', 'dayExpireAt', 'profiled']
  },
  endSeason: {
    keys: ['seasons', 'settings', 'version', 'seasonCurrent', 'seasonEnded', 'members', 'hist', 'eventSubscriptions', 'events'],
    argv: ['mode', 'seasonId', 'epoch', 'dueAt', 'nextStart', 'from', 'until', 'name']
  },
  dropSeason: {
    keys: ['seasons', 'settings', 'board'],
    argv: ['seasonId', 'defaultRetention']
  },
  // A day's close (src/history/day-close.ts), a script per step; each chunk holds the lease.
  closeDayBegin: {
    keys: ['lease', 'hist', 'snapshot', 'order', 'ranksDay', 'changesDay', 'fresh'],
    argv: ['token', 'leaseMs', 'label']
  },
  closeDayStarts: {
    keys: ['lease', 'dayStart', 'snapshot'],
    argv: ['token', 'leaseMs', 'cursor', 'count']
  },
  closeDayBoard: {
    keys: ['lease', 'board', 'dayStart', 'snapshot'],
    argv: ['token', 'leaseMs', 'anchor', 'anchorScore', 'count']
  },
  closeDayTrim: {
    keys: ['lease', 'snapshot'],
    argv: ['token', 'leaseMs', 'count']
  },
  closeDayRanks: {
    keys: ['lease', 'hist', 'snapshot', 'members', 'ranksDay', 'board', 'dayStart', 'day', 'dayGains', 'order', 'fresh'],
    argv: ['token', 'leaseMs', 'first', 'count']
  },
  closeDayTouched: {
    keys: ['lease', 'dayStart', 'day', 'dayGains', 'members', 'snapshot', 'order', 'fresh'],
    argv: ['token', 'leaseMs', 'cursor', 'count']
  },
  closeDayChanges: {
    keys: ['lease', 'order', 'day', 'dayGains', 'dayStart', 'changesDay', 'fresh'],
    argv: ['token', 'leaseMs', 'first', 'count']
  },
  closeDayPlace: {
    keys: ['lease', 'staging', 'changesDay'],
    argv: ['token', 'leaseMs']
  },
  closeDayCommit: {
    keys: ['lease', 'hist', 'histStats', 'ranksLatest', 'ranksPrev', 'ranksDay', 'snapshot', 'order', 'day', 'dayGains', 'dayStart', 'version', 'fresh'],
    argv: ['token', 'label', 'expected', 'stats', 'until', 'contiguous', 'keepFrom']
  },
  closeDayForget: {
    keys: ['histStats', 'hist', 'ranks', 'changes'],
    argv: ['label']
  },
  closeDayRelease: {
    keys: ['lease'],
    argv: ['token']
  },
  calendarClaim: {
    keys: ['servers'],
    argv: ['count', 'holdMs']
  },
  // Its number of keys is given with each call: these, then the seasons' boards (`boards`); then
  // 3 values per item (board member, '0' hide or '1' show, reason): setVisibility's `items`.
  setVisibility: {
    keys: ['board', 'stats', 'version', 'hidden', 'week', 'lastWeek', 'month', 'lastMonth', 'settings', 'dayStart', 'hist'],
    argv: ['from', 'until', 'epoch', 'dayLabel', 'dayExpireAt']
  },
  claimSlug: {
    keys: ['slugs'],
    argv: ['slug', 'guildId', 'staleHolder']
  },
  releaseSlug: {
    keys: ['slugs'],
    argv: ['slug', 'guildId']
  },
  // Then the fields set (field, value pairs) and the fields cleared: configureGuild's `changes`.
  configureGuild: {
    keys: ['settings', 'version', 'seasons'],
    argv: ['expectedEpoch', 'fieldCount']
  },
  // The webhooks' scripts (src/webhooks/): their records, the queue's cursors, the lease.
  webhookCreate: {
    keys: ['webhooks', 'webhookState', 'eventSubscriptions', 'events'],
    argv: ['webhookId', 'record', 'queueLimit', 'channel', 'maxWebhooks']
  },
  webhookDelete: {
    keys: ['webhooks', 'webhookState', 'deliveries', 'eventSubscriptions'],
    argv: ['webhookId']
  },
  webhookPing: {
    keys: ['webhooks', 'eventSubscriptions', 'events'],
    argv: ['webhookId']
  },
  // Then the attempts to log, JSON each, oldest first.
  webhookRecord: {
    keys: ['lease', 'webhooks', 'webhookState', 'deliveries', 'eventSubscriptions', 'events'],
    argv: ['holder', 'webhookId', 'readCursor', 'cursor', 'seq', 'failures', 'retryAt', 'disableReason']
  },
  webhookLease: {
    keys: ['lease'],
    argv: ['holder', 'leaseMs', 'action']
  }
} as const

type Scripts = typeof WRITE_SCRIPTS
export type WriteScript = keyof Scripts

/** A script's input: every key a string, every argument a string or a number; other fields are ignored. */
export type ScriptInput<S extends WriteScript> = Record<Scripts[S]['keys'][number], string> & Record<Scripts[S]['argv'][number], Arg>

/** The script's arguments in its header's order: its keys, then its ARGV. */
export function scriptArgs<S extends WriteScript> (script: S, input: ScriptInput<S>): Arg[] {
  const { keys, argv } = WRITE_SCRIPTS[script]
  const fields: readonly string[] = [...keys, ...argv]
  return fields.map((field) => (input as Record<string, Arg>)[field] as Arg)
}

/** An award's reply: status, XP, gain, roles to add and to remove (see award-xp-21.lua; one remembered before roles were given has the first three), or a calendar refusal (two values). */
export type AwardReply = [number, number, number, string?, string?]

export async function awardXp (redis: RedisClient, input: ScriptInput<'awardXp'>): Promise<AwardReply> {
  return await redis.awardXp(...scriptArgs('awardXp', input))
}

/** The awards follow the named arguments: 6 values each (see award-batch-21.lua). */
export async function awardBatch (redis: RedisClient, input: ScriptInput<'awardBatch'>, awards: readonly Arg[]): Promise<Array<number | string>> {
  return await redis.awardBatch(...scriptArgs('awardBatch', input), ...awards)
}

/**
 * 1, the previous XP, roles to add and to remove, the level after (see set-xp-12.lua; a reply
 * remembered before roles were given holds the previous XP alone after the 1); or a calendar refusal.
 */
export type SetXpReply = [number, number, string?, string?, number?]

export async function setXp (redis: RedisClient, input: ScriptInput<'setXp'>): Promise<SetXpReply> {
  return await redis.setXp(...scriptArgs('setXp', input))
}

export async function setUsername (redis: RedisClient, input: ScriptInput<'setUsername'>): Promise<number> {
  return await redis.setUsername(...scriptArgs('setUsername', input))
}

export async function removeMember (redis: RedisClient, input: ScriptInput<'removeMember'>): Promise<[number, number?]> {
  return await redis.removeMember(...scriptArgs('removeMember', input))
}

export async function dailyClaim (redis: RedisClient, input: ScriptInput<'dailyClaim'>): Promise<[number, number, number?]> {
  return await redis.dailyClaim(...scriptArgs('dailyClaim', input))
}

export async function claimSlug (redis: RedisClient, input: ScriptInput<'claimSlug'>): Promise<[number, string?]> {
  return await redis.claimSlug(...scriptArgs('claimSlug', input))
}

export async function releaseSlug (redis: RedisClient, input: ScriptInput<'releaseSlug'>): Promise<number> {
  return await redis.releaseSlug(...scriptArgs('releaseSlug', input))
}

/**
 * A script whose number of keys each call gives (set-visibility-n.lua): its named keys, then
 * `boards` (more keys), then its named ARGV, then `items` (3 values each).
 */
export async function setVisibility (redis: RedisClient, input: ScriptInput<'setVisibility'>, boards: readonly string[], items: readonly Arg[]): Promise<Array<number | string | null>> {
  const { keys } = WRITE_SCRIPTS.setVisibility
  const named = scriptArgs('setVisibility', input)
  return await redis.setVisibility(keys.length + boards.length, ...named.slice(0, keys.length), ...boards, ...named.slice(keys.length), ...items)
}

export async function endSeason (redis: RedisClient, input: ScriptInput<'endSeason'>): Promise<[number, number, number?, number?]> {
  return await redis.endSeason(...scriptArgs('endSeason', input))
}

export async function dropSeason (redis: RedisClient, input: ScriptInput<'dropSeason'>): Promise<number> {
  return await redis.dropSeason(...scriptArgs('dropSeason', input))
}

/** The steps of a day's close: each answers { status, ... } (see its .lua header). */
export type CloseStep = 'closeDayStarts' | 'closeDayBoard' | 'closeDayTrim' | 'closeDayRanks' | 'closeDayTouched' | 'closeDayChanges' | 'closeDayPlace' | 'closeDayCommit'

export async function closeDayStep<S extends CloseStep> (redis: RedisClient, step: S, input: ScriptInput<S>): Promise<Array<string | number>> {
  return await (redis[step] as (...args: Arg[]) => Promise<Array<string | number>>)(...scriptArgs(step, input))
}

export async function closeDayBegin (redis: RedisClient, input: ScriptInput<'closeDayBegin'>): Promise<number> {
  return await redis.closeDayBegin(...scriptArgs('closeDayBegin', input))
}

export async function closeDayForget (redis: RedisClient, input: ScriptInput<'closeDayForget'>): Promise<number> {
  return await redis.closeDayForget(...scriptArgs('closeDayForget', input))
}

export async function closeDayRelease (redis: RedisClient, input: ScriptInput<'closeDayRelease'>): Promise<number> {
  return await redis.closeDayRelease(...scriptArgs('closeDayRelease', input))
}

/** Redis's time, then the servers claimed. */
export async function calendarClaim (redis: RedisClient, input: ScriptInput<'calendarClaim'>): Promise<[number, ...string[]]> {
  return await redis.calendarClaim(...scriptArgs('calendarClaim', input))
}

/** The fields set (field, value pairs, `fieldCount` of them) and cleared follow the named arguments (see configure-guild-3.lua). */
export async function configureGuild (redis: RedisClient, input: ScriptInput<'configureGuild'>, changes: readonly Arg[]): Promise<[number, number]> {
  return await redis.configureGuild(...scriptArgs('configureGuild', input), ...changes)
}

export async function webhookCreate (redis: RedisClient, input: ScriptInput<'webhookCreate'>): Promise<number> {
  return await redis.webhookCreate(...scriptArgs('webhookCreate', input))
}

export async function webhookDelete (redis: RedisClient, input: ScriptInput<'webhookDelete'>): Promise<number> {
  return await redis.webhookDelete(...scriptArgs('webhookDelete', input))
}

export async function webhookPing (redis: RedisClient, input: ScriptInput<'webhookPing'>): Promise<[number, (string | number)?]> {
  return await redis.webhookPing(...scriptArgs('webhookPing', input))
}

/** The attempts to log follow the named arguments, JSON each, oldest first. */
export async function webhookRecord (redis: RedisClient, input: ScriptInput<'webhookRecord'>, attempts: readonly string[]): Promise<number> {
  return await redis.webhookRecord(...scriptArgs('webhookRecord', input), ...attempts)
}

export async function webhookLease (redis: RedisClient, input: ScriptInput<'webhookLease'>): Promise<[number, number]> {
  return await redis.webhookLease(...scriptArgs('webhookLease', input))
}
