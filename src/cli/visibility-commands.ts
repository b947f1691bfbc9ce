// Who is shown, from the shell: member hide, member unhide, and member visibility (a file of
// changes, a join and leave sync), through the library's setVisibility and setVisibilityMany.
import { readFile } from 'node:fs/promises'
import { text } from 'node:stream/consumers'
import { type Command, Option } from 'commander'
import { InvalidParameterError } from '../errors.js'
import { SNOWFLAKE_PATTERN } from '../snowflake.js'
import { LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { HIDE_REASONS, type HideReason, type VisibilityChange, type VisibilityResult } from '../writer/visibility.js'
import { withRedis } from './connection.js'
import { count, print, printJson } from './output.js'
import * as parse from './parsers.js'
import { progressReporter } from './progress.js'

const guildOption = (): Option => new Option('--guild <id>', 'server (guild) id').argParser(parse.guildId).makeOptionMandatory()
const userOption = (): Option => new Option('--user <id>', 'member (user) id').argParser(parse.userId).makeOptionMandatory()

const SNOWFLAKE = new RegExp(SNOWFLAKE_PATTERN)
/** `--file -`: standard input. */
const STDIN = '-'

function describe (r: VisibilityResult): string {
  const xp = r.xp === null ? 'not a member yet' : `${r.xp} XP`
  return `${r.userId}: ${r.visible ? 'shown' : `hidden (${r.reasons.join(', ')})`}, ${xp}`
}

const asJson = (r: VisibilityResult): Record<string, unknown> => ({ user_id: r.userId, visible: r.visible, reasons: r.reasons, xp: r.xp })

/**
 * A file of changes, one a line: `<user id> hide <reason>` or `<user id> show [<reason>]`; blank
 * lines and lines from `#` on are skipped. Ids stay text (no JSON number to round them).
 */
export function parseVisibilityLines (content: string): VisibilityChange[] {
  const changes: VisibilityChange[] = []
  content.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/#.*/, '').trim()
    if (line === '') return
    const [userId = '', action = '', reason, extra] = line.split(/[\s,]+/)
    const where = `line ${i + 1}`
    if ((action !== 'hide' && action !== 'show') || extra !== undefined) {
      throw new InvalidParameterError(`${where}: expected "<user id> hide <reason>" or "<user id> show [<reason>]", got "${line}"`)
    }
    if (reason !== undefined && !(HIDE_REASONS as readonly string[]).includes(reason)) {
      throw new InvalidParameterError(`${where}: the reason must be one of ${HIDE_REASONS.join(', ')}`)
    }
    if (!SNOWFLAKE.test(userId)) throw new InvalidParameterError(`${where}: "${userId}" is not a user id`)
    changes.push({ userId, visible: action === 'show', ...(reason === undefined ? {} : { reason: reason as HideReason }) })
  })
  return changes
}

export function addVisibilityCommands (member: Command): void {
  member.command('hide')
    .description('hide a member from every public read (board, rank, totals, streams), keeping its XP; awards to it go on counting, hidden')
    .addOption(guildOption())
    .addOption(userOption())
    .addOption(new Option('--reason <reason>', 'why: it left the server, or asked not to be shown').choices(HIDE_REASONS).makeOptionMandatory())
    .option('--json', 'print one line of JSON')
    .action(async (opts: { guild: string, user: string, reason: HideReason, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const result = await new LeaderboardWriter(redis, keys).setVisibility({ guildId: opts.guild, userId: opts.user, visible: false, reason: opts.reason })
        if (opts.json === true) printJson(asJson(result))
        else print(describe(result))
      })
    })

  member.command('unhide')
    .description('show a hidden member again, with its XP and exact rank (still hidden while another reason holds)')
    .addOption(guildOption())
    .addOption(userOption())
    .addOption(new Option('--reason <reason>', 'the reason that no longer holds (default: every reason)').choices(HIDE_REASONS))
    .option('--json', 'print one line of JSON')
    .action(async (opts: { guild: string, user: string, reason?: HideReason, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const result = await new LeaderboardWriter(redis, keys).setVisibility({ guildId: opts.guild, userId: opts.user, visible: true, reason: opts.reason })
        if (opts.json === true) printJson(asJson(result))
        else print(describe(result))
      })
    })

  member.command('visibility')
    .description('hide and show many members from a file, one change a line: "<user id> hide <reason>" or "<user id> show [<reason>]" ' +
      '(a join and leave sync); every line is checked before anything is written')
    .addOption(guildOption())
    .addOption(new Option('--file <path>', 'the file of changes; - reads standard input').makeOptionMandatory())
    .option('--json', 'print each user\'s visibility as one line of JSON')
    .action(async (opts: { guild: string, file: string, json?: boolean }) => {
      const content = opts.file === STDIN ? await text(process.stdin) : await readFile(opts.file, 'utf8')
      const changes = parseVisibilityLines(content) // before connecting: a typo needs no Redis
      await withRedis(async ({ redis, keys }) => {
        const progress = progressReporter('visibility', { unit: 'users' })
        let results: VisibilityResult[]
        try {
          results = await new LeaderboardWriter(redis, keys).setVisibilityMany(opts.guild, changes, (done) => { progress.update(done, changes.length) })
        } finally {
          progress.stop()
        }
        if (opts.json === true) {
          printJson({ results: results.map(asJson) })
          return
        }
        const hidden = results.filter((r) => !r.visible).length
        print(`${count(results.length, 'user')} in ${opts.guild}: ${hidden} hidden, ${results.length - hidden} shown`)
      })
    })
}
