// import and export: a server's members from and to files, through src/transfer.
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { type Command, Option } from 'commander'
import { ImportFileError, ImportRefusedError } from '../errors.js'
import { LeaderboardReader } from '../reader/leaderboard-reader.js'
import { EXPORT_FORMATS, type ExportFormat, exportMembers } from '../transfer/export-members.js'
import type { ImportProblem, ImportSummary } from '../transfer/import-members.js'
import { formatFromName, IMPORT_FORMATS, type ImportFormat, importFile, importStream } from '../transfer/import-sources.js'
import { LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { CliError, withRedis } from './connection.js'
import { count, print, printJson, timing } from './output.js'
import * as parse from './parsers.js'
import { progressReporter } from './progress.js'

interface ImportOpts { guild: string, file: string, format?: ImportFormat, strict?: boolean, keepSettings?: boolean, json?: boolean }

/** `--file -`: standard input. */
const STDIN = '-'

export function addTransferCommands (program: Command): void {
  program.command('import')
    .description("set members' XP (not multiplied) and usernames from a CSV naming user_id, username and xp, or from the leaderboard JSON " +
      'of MEE6, Amari, Lurkr, Polaris or Tatsu; other members and every daily streak are kept; bad rows are listed on stderr and skipped; ' +
      "a CSV made by export also sets the server's curve and multiplier")
    .addOption(new Option('--guild <id>', 'server (guild) to import into').argParser(parse.guildId).makeOptionMandatory())
    .addOption(new Option('--file <path>', 'the file to read; - reads standard input (then give --format)').makeOptionMandatory())
    .addOption(new Option('--format <name>', "the file's format: csv, or the bot whose JSON it is (default: .json is mee6, .csv is csv)").choices(IMPORT_FORMATS))
    .option('--strict', 'refuse the whole file if any row is bad: nothing is written, exit 1')
    .option('--keep-settings', "keep the server's curve and multiplier even if the file carries others")
    .option('--json', 'print the summary as one line of JSON (bad rows in it, not on stderr)')
    .action(async (opts: ImportOpts) => {
      const format = opts.format ?? formatOf(opts.file) // before connecting: a typo needs no Redis
      await withRedis(async ({ redis, keys }) => {
        const progress = progressReporter('importing', { unit: 'rows', terminalOnly: true })
        let imported = 0
        let summary: ImportSummary
        try {
          const writer = new LeaderboardWriter(redis, keys)
          const options = {
            format,
            strict: opts.strict,
            keepSettings: opts.keepSettings,
            onProgress: (p: { imported: number, fractionRead: number }) => {
              imported = p.imported
              progress.update(Math.round(p.fractionRead * 1000), 1000, `${p.imported} imported`)
            }
          }
          summary = opts.file === STDIN
            ? await importStream(writer, opts.guild, process.stdin, { ...options, name: 'standard input' })
            : await importFile(writer, opts.guild, opts.file, options)
        } catch (err) {
          progress.stop()
          if (err instanceof ImportRefusedError) {
            reportRefusal(err, opts, format)
            throw err
          }
          if (err instanceof ImportFileError && imported > 0) {
            throw new CliError(`${err.message} (${count(imported, 'member')} before it ${imported === 1 ? 'was' : 'were'} imported; importing again once the file is fixed is safe)`)
          }
          throw err
        } finally {
          progress.stop()
        }
        reportImport(summary, opts, format)
      })
    })

  program.command('export')
    .description('write every member of a server to stdout in rank order: user_id, username, xp, level, daily_streak, last_daily_claim')
    .addOption(new Option('--guild <id>', 'server (guild) to export').argParser(parse.guildId).makeOptionMandatory())
    .addOption(new Option('--format <name>', 'CSV with a header, or one JSON object per line').choices(EXPORT_FORMATS).default('csv'))
    .action(async (opts: { guild: string, format: ExportFormat }) => {
      await withRedis(async ({ redis, keys }) => {
        const progress = progressReporter('exporting', { unit: 'members', terminalOnly: true })
        const members = exportMembers(new LeaderboardReader(redis, keys), opts.guild, {
          format: opts.format,
          onProgress: (done, total) => { progress.update(done, Math.max(done, total)) }
        })
        try {
          // Chunk by chunk, waiting while stdout is full; stdout stays open for the warning below.
          await pipeline(Readable.from(members), process.stdout, { end: false })
        } catch (err) {
          // The reader went away (`export | head`): it has all it wanted.
          if ((err as NodeJS.ErrnoException).code === 'EPIPE') return
          throw err
        } finally {
          progress.stop()
        }
        if (!members.consistent) {
          // Not a failure (a live server is written to all the time), but not an exact copy either.
          process.stderr.write(`warning: server ${opts.guild} was written to during the export: a member whose rank moved meanwhile may be missing or in it twice; export again for an exact copy\n`)
        }
      })
    })
}

/** The format from the file's name, or an error naming --format. */
function formatOf (file: string): ImportFormat {
  const format = file === STDIN ? undefined : formatFromName(file)
  if (format !== undefined) return format
  const what = file === STDIN ? 'standard input' : `the format of ${file} from its name (.json is mee6, .csv is csv)`
  throw new CliError(`cannot tell ${what}; give --format ${IMPORT_FORMATS.join('|')}`)
}

function problemLines (problems: readonly ImportProblem[], total: number, verb: string): void {
  for (const p of problems) process.stderr.write(`${verb} ${p.where}: ${p.message}\n`)
  if (total > problems.length) process.stderr.write(`… and ${count(total - problems.length, 'more bad row')}\n`)
}

function reportImport (s: ImportSummary, opts: ImportOpts, format: ImportFormat): void {
  const seconds = s.elapsedMs / 1000
  const rowsPerSecond = Math.round((s.imported + s.skipped) / Math.max(seconds, 0.001))
  if (opts.json === true) {
    printJson({
      guild_id: s.guildId,
      file: opts.file,
      format,
      imported: s.imported,
      skipped: s.skipped,
      problems: s.problems,
      settings: s.settings === undefined ? null : { xp_curve: s.settings.curve, xp_multiplier: s.settings.multiplier },
      elapsed_ms: Math.round(s.elapsedMs),
      rows_per_second: rowsPerSecond
    })
    return
  }
  problemLines(s.problems, s.skipped, 'skipped')
  const skipped = s.skipped === 0 ? '' : `; skipped ${count(s.skipped, 'bad row')} (on stderr)`
  const settings = s.settings === undefined
    ? ''
    : s.settings.curve === null
      ? `; set multiplier ${s.settings.multiplier} (the file's custom curve is not in it: the server's curve is kept)`
      : `; set curve ${s.settings.curve}, multiplier ${s.settings.multiplier}`
  const from = opts.file === STDIN ? 'standard input' : opts.file
  print(`imported ${count(s.imported, 'member')} into ${s.guildId} from ${from} (${format}) ${timing(s.elapsedMs, s.imported + s.skipped, 'rows')}${settings}${skipped}`)
}

function reportRefusal (err: ImportRefusedError, opts: ImportOpts, format: ImportFormat): void {
  if (opts.json === true) {
    printJson({ guild_id: opts.guild, file: opts.file, format, imported: 0, skipped: err.skipped, problems: err.problems, refused: true })
  } else {
    problemLines(err.problems, err.skipped, 'bad row at')
  }
}
