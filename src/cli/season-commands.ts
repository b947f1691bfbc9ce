// A server's seasons from the shell: `season end` (now, whatever the schedule) and `seasons list`.
import { type Command, Option } from 'commander'
import { LeaderboardReader } from '../reader/leaderboard-reader.js'
import { LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { withRedis } from './connection.js'
import { print, printJson, shortDate, table } from './output.js'
import * as parse from './parsers.js'

const guildOption = (): Option => new Option('--guild <id>', 'server (guild) id').argParser(parse.guildId).makeOptionMandatory()

/** Every season a server keeps: a page of the most that may be kept (season_retention's bound, and the current one). */
const ALL = 121

export function addSeasonCommands (program: Command): void {
  program.command('season')
    .description("a server's season")
    .command('end')
    .description('end the current season now, whatever the schedule, and start the next; its board is kept, read-only')
    .addOption(guildOption())
    .option('--name <name>', 'the new season\'s name (default "Season N")')
    .option('--json', 'print one line of JSON')
    .action(async (opts: { guild: string, name?: string, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const season = await new LeaderboardWriter(redis, keys).endSeason(opts.guild, { name: opts.name })
        if (opts.json === true) {
          printJson({ guild_id: opts.guild, id: season.id, name: season.name, started_at: season.startedAt?.toISOString() ?? null })
          return
        }
        print(`season ${season.id - 1} of ${opts.guild} ended; season ${season.id} ("${season.name}") began ${shortDate(season.startedAt)}`)
      })
    })

  program.command('seasons')
    .description("a server's seasons")
    .command('list')
    .description('the current season and the ended ones the server keeps (season_retention), newest first')
    .addOption(guildOption())
    .option('--json', 'print one line of JSON')
    .action(async (opts: { guild: string, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const { value } = await new LeaderboardReader(redis, keys).readSeasons(opts.guild, 1, ALL)
        if (opts.json === true) {
          printJson(value.data)
          return
        }
        const date = (iso: string | null): string => shortDate(iso === null ? null : new Date(iso))
        print(table(['id', 'started', 'ended', 'name'], value.data.map((s) => [String(s.id), date(s.started_at), s.ended_at === null ? 'current' : date(s.ended_at), s.name])))
      })
    })
}
