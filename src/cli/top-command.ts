// `top`: a page of a server's leaderboard, read as the API reads it.
import { type Command, Option } from 'commander'
import { LeaderboardReader } from '../reader/leaderboard-reader.js'
import { type Period, PERIODS } from '../periods/periods.js'
import { withRedis } from './connection.js'
import { count, print, printJson, table } from './output.js'
import * as parse from './parsers.js'

// The API's bounds, so a page here is a page there.
const MAX_LIMIT = 100
const MAX_PAGE = 1_000_000_000

export function addTopCommand (program: Command): void {
  program.command('top')
    .description("the top members of a server as a table: rank, user, name, level, XP (a page at a time, as the API's leaderboard)")
    .addOption(new Option('--guild <id>', 'server (guild) id').argParser(parse.guildId).makeOptionMandatory())
    .addOption(new Option('--limit <n>', `members per page, 1 to ${MAX_LIMIT}`).default(10).argParser(parse.integer('limit', 1, MAX_LIMIT)))
    .addOption(new Option('--page <n>', 'page number, from 1').default(1).argParser(parse.integer('page', 1, MAX_PAGE)))
    .addOption(new Option('--period <period>', 'all-time, or XP gained this or last ISO week or UTC month').choices(PERIODS).default('all'))
    .option('--json', 'print the API\'s leaderboard response ({data, total, page}) as one line of JSON')
    .action(async (opts: { guild: string, limit: number, page: number, period: Period, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const board = await new LeaderboardReader(redis, keys).page(opts.guild, opts.page, opts.limit, opts.period)
        if (opts.json === true) {
          printJson(board)
          return
        }
        const within = opts.period === 'all' ? '' : ` with XP in the period (${opts.period})`
        if (board.total === 0) {
          print(`server ${opts.guild} has no members${within}`)
          return
        }
        const pages = Math.ceil(board.total / opts.limit)
        if (board.data.length === 0) {
          print(`page ${opts.page} is past the end: server ${opts.guild} has ${count(board.total, 'member')} (${count(pages, 'page')} of ${opts.limit})`)
          return
        }
        print(table(['RANK', 'USER', 'USERNAME', 'LEVEL', 'XP'],
          board.data.map((entry) => [String(entry.rank), entry.user_id, entry.username, String(entry.level), String(entry.xp)])))
        print(`page ${opts.page} of ${pages}, ${count(board.total, 'member')}${within}`)
      })
    })
}
