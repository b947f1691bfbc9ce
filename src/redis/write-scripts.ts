// The write scripts, one typed call each taking one object (as bullmq builds each script's
// arguments in one named function): KEYS by the names in the script's header, ARGV by name, put
// in the header's order here and nowhere else. test/write-scripts.test.ts holds each list against
// its .lua header, so a script and its caller cannot drift apart one position at a time.
import type { RedisClient } from './client.js'

type Arg = string | number

/** Each write script's KEYS (as its header names them, in camelCase) and ARGV, in the header's order. */
export const WRITE_SCRIPTS = {
  awardXp: {
    keys: ['board', 'members', 'stats', 'settings', 'version', 'ops', 'opsPrev', 'week', 'month', 'hidden'],
    argv: ['member', 'award', 'username', 'maxXp', 'opId', 'opsTtlMs', 'from', 'until', 'weekExpireAt', 'monthExpireAt', 'displayName', 'avatarUrl']
  },
  // Then 6 values per award (board member, award, username, its own operation id or '', display
  // name, avatar URL): awardBatch's `awards`.
  awardBatch: {
    keys: ['board', 'members', 'stats', 'settings', 'version', 'ops', 'opsPrev', 'week', 'month', 'hidden'],
    argv: ['maxXp', 'opsTtlMs', 'from', 'until', 'weekExpireAt', 'monthExpireAt', 'callOpId']
  },
  setXp: {
    keys: ['board', 'members', 'stats', 'version', 'ops', 'opsPrev', 'hidden'],
    argv: ['member', 'xp', 'username', 'opId', 'opsTtlMs', 'displayName', 'avatarUrl']
  },
  setUsername: {
    keys: ['board', 'members', 'version', 'ops', 'opsPrev'],
    argv: ['member', 'username', 'opId', 'opsTtlMs', 'displayName', 'avatarUrl']
  },
  removeMember: {
    keys: ['board', 'members', 'stats', 'version', 'ops', 'opsPrev', 'week', 'lastWeek', 'month', 'lastMonth', 'hidden'],
    argv: ['member', 'opId', 'opsTtlMs', 'from', 'until']
  },
  dailyClaim: {
    keys: ['board', 'members', 'version', 'ops', 'opsPrev', 'hidden'],
    argv: ['member', 'atMs', 'maxAheadMs', 'opId', 'opsTtlMs']
  },
  // Its number of keys is given with each call: these, then the seasons' boards (`boards`); then
  // 3 values per item (board member, '0' hide or '1' show, reason): setVisibility's `items`.
  setVisibility: {
    keys: ['board', 'stats', 'version', 'hidden', 'week', 'lastWeek', 'month', 'lastMonth'],
    argv: ['from', 'until']
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
    keys: ['settings', 'version'],
    argv: ['expectedEpoch', 'fieldCount']
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

export async function awardXp (redis: RedisClient, input: ScriptInput<'awardXp'>): Promise<[number, number, number?]> {
  return await redis.awardXp(...scriptArgs('awardXp', input))
}

/** The awards follow the named arguments: 6 values each (see award-batch-10.lua). */
export async function awardBatch (redis: RedisClient, input: ScriptInput<'awardBatch'>, awards: readonly Arg[]): Promise<number[]> {
  return await redis.awardBatch(...scriptArgs('awardBatch', input), ...awards)
}

export async function setXp (redis: RedisClient, input: ScriptInput<'setXp'>): Promise<number> {
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

/** The fields set (field, value pairs, `fieldCount` of them) and cleared follow the named arguments (see configure-guild-2.lua). */
export async function configureGuild (redis: RedisClient, input: ScriptInput<'configureGuild'>, changes: readonly Arg[]): Promise<[number, number]> {
  return await redis.configureGuild(...scriptArgs('configureGuild', input), ...changes)
}
