// `guild show`: what a server's owner asks first, in one call: its settings, its members and XP,
// and its API keys (never a key itself).
import { type Command, Option } from 'commander'
import { ApiKeyStore } from '../api-keys/api-keys.js'
import { LeaderboardReader } from '../reader/leaderboard-reader.js'
import { redisNow } from '../redis/client.js'
import { statusOf } from './key-commands.js'
import { withRedis } from './connection.js'
import { count, fields, print, printJson, shortDate, table } from './output.js'
import * as parse from './parsers.js'

export function addGuildShow (guild: Command): void {
  guild.command('show')
    .description("a server's curve, multiplier, members, total XP and API keys")
    .addOption(new Option('--guild <id>', 'server (guild) id').argParser(parse.guildId).makeOptionMandatory())
    .option('--json', 'print one line of JSON')
    .action(async (opts: { guild: string, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const reader = new LeaderboardReader(redis, keys)
        const [stats, board, infos, now] = await Promise.all([
          reader.stats(opts.guild),
          reader.page(opts.guild, 1, 1),
          new ApiKeyStore(redis, keys).list(opts.guild),
          redisNow(redis)
        ])
        const apiKeys = infos.map((info) => ({
          id: info.id,
          name: info.name,
          plan: info.plan,
          status: statusOf(info, now),
          expires_at: info.expiresAt?.toISOString() ?? null
        }))
        if (opts.json === true) {
          printJson({
            guild_id: opts.guild,
            xp_curve: stats.xp_curve,
            xp_multiplier: stats.xp_multiplier,
            members: board.total,
            members_with_xp: stats.total_members,
            total_xp: stats.total_xp,
            average_level: stats.average_level,
            api_keys: apiKeys
          })
          return
        }
        const active = apiKeys.filter((key) => key.status === 'active').length
        print(fields({
          server: opts.guild,
          curve: stats.xp_curve,
          multiplier: stats.xp_multiplier,
          members: `${board.total} (${stats.total_members} with XP)`,
          'total XP': stats.total_xp,
          'average level': stats.average_level,
          'API keys': apiKeys.length === 0 ? 'none' : `${count(apiKeys.length, 'key')}, ${active} active`
        }))
        if (apiKeys.length > 0) {
          print('')
          print(table(['ID', 'NAME', 'PLAN', 'STATUS', 'EXPIRES'],
            infos.map((info, i) => [info.id, info.name ?? '-', info.plan, apiKeys[i]?.status ?? '', shortDate(info.expiresAt)])))
        }
      })
    })
}
