// Role rewards: which of a server's reward roles a member at a level holds, and what a move from
// one level to another asks the bot to change. The write scripts compute the same in Lua for each
// result and event (src/redis/commands/includes/rules.lua); test/rules.test.ts holds the two together.
import type { RoleReward, RoleRewardsMode } from '../settings/settings.js'

/** The roles a bot should add to a member and take away from it. */
export interface RoleChanges {
  add: string[]
  remove: string[]
}

/**
 * The reward roles of a member at `level`: with `stack`, every reward of its level or below; with
 * `replace`, only those of the highest reward level it reached. `rewards` is sorted by level (as
 * the settings keep it), and so is the answer.
 */
export function rolesAtLevel (rewards: readonly RoleReward[], mode: RoleRewardsMode, level: number): string[] {
  const reached = rewards.filter((r) => r.level <= level)
  if (mode === 'stack' || reached.length === 0) return reached.map((r) => r.roleId)
  const top = (reached.at(-1) as RoleReward).level
  return reached.filter((r) => r.level === top).map((r) => r.roleId)
}

/**
 * What moving from `from` to `to` (either way, any number of levels) asks of the bot, for a
 * member holding the rewards of `from`: the roles of `to` it lacks, and those it holds that `to`
 * has not; null when nothing changes.
 */
export function roleChanges (rewards: readonly RoleReward[], mode: RoleRewardsMode, from: number, to: number): RoleChanges | null {
  if (from === to || rewards.length === 0) return null
  const before = rolesAtLevel(rewards, mode, from)
  const after = rolesAtLevel(rewards, mode, to)
  const add = after.filter((r) => !before.includes(r))
  const remove = before.filter((r) => !after.includes(r))
  return add.length === 0 && remove.length === 0 ? null : { add, remove }
}
