// Members and servers from the shell: award, daily, guild set, and member show, set-xp, rename, remove
// (and hide, unhide, visibility: src/cli/visibility-commands.ts).
import { type Command, Option } from 'commander'
import { InvalidParameterError, MemberNotFoundError } from '../errors.js'
import { CURVES, type Curve, MAX_XP } from '../levels/curves.js'
import { LeaderboardReader } from '../reader/leaderboard-reader.js'
import { MAX_AWARD } from '../validation.js'
import type { RoleChanges } from '../rules/role-rewards.js'
import { LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { withRedis } from './connection.js'
import { addGuildShow } from './guild-show.js'
import { addVisibilityCommands } from './visibility-commands.js'
import { fields, print, printJson } from './output.js'
import * as parse from './parsers.js'

const guildOption = (): Option => new Option('--guild <id>', 'server (guild) id').argParser(parse.guildId).makeOptionMandatory()
const userOption = (): Option => new Option('--user <id>', 'member (user) id').argParser(parse.userId).makeOptionMandatory()

/** The role rewards a change of level asks for, as one line. */
function roleLine (roles: RoleChanges): string {
  const list = (ids: string[]): string => ids.length === 0 ? 'none' : ids.join(', ')
  return `role rewards: add ${list(roles.add)}; remove ${list(roles.remove)}`
}

export function addMemberCommands (program: Command): void {
  program.command('award')
    .description("award XP to a member as the server's rules say (multipliers, boosts, cooldown, daily cap), creating the member if needed")
    .addOption(guildOption())
    .addOption(userOption())
    .addOption(new Option('--xp <n>', `XP to award, 1 to ${MAX_AWARD}, or a range MIN-MAX to draw from`).argParser(parse.awardXp(MAX_AWARD)).makeOptionMandatory())
    .option('--username <name>', 'record this display name too')
    .addOption(new Option('--roles <ids>', "the member's role ids, comma-separated (for their multipliers)").argParser(parse.roleIds))
    .addOption(new Option('--channel <id>', 'the channel the XP was earned in (for its multiplier)').argParser(parse.channelId))
    .option('--json', 'print one line of JSON')
    .action(async (opts: { guild: string, user: string, xp: number | { min: number, max: number }, username?: string, roles?: string[], channel?: string, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const writer = new LeaderboardWriter(redis, keys)
        const result = await writer.awardXp({ guildId: opts.guild, userId: opts.user, xp: opts.xp, username: opts.username, roleIds: opts.roles, channelId: opts.channel })
        const { gained, xp, level, applied, reason, roles } = result
        if (opts.json === true) {
          printJson({
            guild_id: opts.guild,
            user_id: opts.user,
            awarded: opts.xp,
            gained,
            xp,
            level,
            leveled_up: result.leveledUp,
            applied,
            ...(reason === undefined ? {} : { reason }),
            ...(roles === undefined ? {} : { roles })
          })
          return
        }
        if (!applied) {
          print(`not applied (${reason === 'cooldown' ? 'within the cooldown of its last award' : 'the daily cap is reached'}): ${opts.user} in ${opts.guild} has ${xp} XP (level ${level})`)
        } else {
          const asked = typeof opts.xp === 'number' && gained === opts.xp ? '' : ` (${typeof opts.xp === 'number' ? opts.xp : `${opts.xp.min}-${opts.xp.max}`} with the server's rules${reason === 'daily_cap' ? ', up to the daily cap' : ''})`
          print(`awarded ${gained} XP to ${opts.user} in ${opts.guild}${asked}: now ${xp} XP (level ${level})`)
        }
        if (roles !== undefined) print(roleLine(roles))
      })
    })

  program.command('daily')
    .description('record a daily claim; refused (exit 1, nothing changed) if the member already claimed that UTC day')
    .addOption(guildOption())
    .addOption(userOption())
    .addOption(new Option('--at <iso-8601>', 'date the claim (default now, by Redis\'s clock); no offset means UTC').argParser(parse.isoDate))
    .option('--json', 'print one line of JSON')
    .action(async (opts: { guild: string, user: string, at?: Date, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const writer = new LeaderboardWriter(redis, keys)
        const { streak, claimedAt } = await writer.claimDaily({ guildId: opts.guild, userId: opts.user, at: opts.at })
        if (opts.json === true) {
          printJson({ guild_id: opts.guild, user_id: opts.user, streak, claimed_at: claimedAt.toISOString() })
          return
        }
        print(`daily claim recorded for ${opts.user} in ${opts.guild} at ${claimedAt.toISOString()}: streak ${streak}`)
      })
    })

  const guild = program.command('guild').description("a server's settings")
  addGuildShow(guild)
  guild.command('set')
    .description("set a server's XP curve and/or multiplier; levels and stats follow at once")
    .addOption(guildOption())
    .addOption(new Option('--curve <name>', 'XP curve').choices(CURVES))
    .addOption(new Option('--multiplier <x>', 'XP multiplier, 0.01 to 100, at most two decimals').argParser(parse.multiplier))
    .action(async (opts: { guild: string, curve?: Curve, multiplier?: string }) => {
      if (opts.curve === undefined && opts.multiplier === undefined) {
        throw new InvalidParameterError('give --curve, --multiplier or both')
      }
      await withRedis(async ({ redis, keys }) => {
        await new LeaderboardWriter(redis, keys).configureGuild(opts.guild, { curve: opts.curve, multiplier: opts.multiplier })
        const changes = [
          opts.curve === undefined ? '' : `curve ${opts.curve}`,
          opts.multiplier === undefined ? '' : `multiplier ${opts.multiplier}`
        ].filter((s) => s !== '')
        print(`server ${opts.guild}: set ${changes.join(', ')}`)
      })
    })

  const member = program.command('member').description('members of a server')
  member.command('show')
    .description("a member's record as the API serves it (rank, level, XP, daily streak); exit 1 if not a member")
    .addOption(guildOption())
    .addOption(userOption())
    .option('--json', 'print the API\'s member record as one line of JSON')
    .action(async (opts: { guild: string, user: string, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const record = await new LeaderboardReader(redis, keys).member(opts.guild, opts.user)
        if (opts.json === true) printJson(record)
        else print(fields(record))
      })
    })

  member.command('set-xp')
    .description("set a member's XP outright (not multiplied; an administrative correction), creating the member if needed")
    .addOption(guildOption())
    .addOption(userOption())
    .addOption(new Option('--xp <n>', `the member's new XP, 0 to ${MAX_XP}`).argParser(parse.integer('xp', 0, MAX_XP)).makeOptionMandatory())
    .addOption(new Option('--username <name>', 'record this display name too').argParser(parse.username))
    .option('--json', 'print one line of JSON')
    .action(async (opts: { guild: string, user: string, xp: number, username?: string, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const { previousXp: previous, level, roles } = await new LeaderboardWriter(redis, keys).setMemberXp({ guildId: opts.guild, userId: opts.user, xp: opts.xp, username: opts.username })
        if (opts.json === true) {
          printJson({ guild_id: opts.guild, user_id: opts.user, xp: opts.xp, previous_xp: previous, level, ...(roles === undefined ? {} : { roles }) })
          return
        }
        print(`set ${opts.user} in ${opts.guild} to ${opts.xp} XP (level ${level}); it had ${previous} XP`)
        if (roles !== undefined) print(roleLine(roles))
      })
    })

  member.command('rename')
    .description("record a member's new display name; exit 1 if it is not a member")
    .addOption(guildOption())
    .addOption(userOption())
    .addOption(new Option('--username <name>', 'the new display name, 1 to 100 characters').argParser(parse.username).makeOptionMandatory())
    .option('--json', 'print one line of JSON')
    .action(async (opts: { guild: string, user: string, username: string, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const renamed = await new LeaderboardWriter(redis, keys).setUsername({ guildId: opts.guild, userId: opts.user, username: opts.username })
        if (!renamed) throw new MemberNotFoundError(opts.guild, opts.user)
        if (opts.json === true) printJson({ guild_id: opts.guild, user_id: opts.user, username: opts.username })
        else print(`renamed ${opts.user} in ${opts.guild} to ${opts.username}`)
      })
    })

  member.command('remove')
    .description('remove a member and all its data (XP, name, streak); exit 1 if it was not a member')
    .addOption(guildOption())
    .addOption(userOption())
    .action(async (opts: { guild: string, user: string }) => {
      await withRedis(async ({ redis, keys }) => {
        const removed = await new LeaderboardWriter(redis, keys).removeMember({ guildId: opts.guild, userId: opts.user })
        if (!removed) throw new MemberNotFoundError(opts.guild, opts.user)
        print(`removed ${opts.user} from ${opts.guild}`)
      })
    })

  addVisibilityCommands(member)
}
