// Rows for importMembers out of the file formats: CSV with a header naming at least user_id,
// username and xp (xp_curve and xp_multiplier carry the server's settings), and the leaderboard
// JSON of MEE6, Amari, Lurkr, Polaris and Tatsu (src/transfer/json-pages.ts), both read as a
// stream. What makes a whole file unreadable throws ImportFileError; a bad row is only passed on,
// with its position, for importMembers to report.
import { open } from 'node:fs/promises'
import { extname } from 'node:path'
import type { Readable } from 'node:stream'
import { CsvError, parse, type Parser } from 'csv-parse'
import { ImportFileError } from '../errors.js'
import { type ImportOptions, type ImportProgress, type ImportSummary, importMembers, type RowSource, type SourceRow } from './import-members.js'
import { type ImportFormat, isJsonFormat } from './import-formats.js'
import { jsonSource } from './json-pages.js'
import type { LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { cellText } from './spreadsheet-cells.js'

export { IMPORT_FORMATS, JSON_IMPORT_FORMATS, type ImportFormat, type JsonImportFormat } from './import-formats.js'
export type { RowSource } from './import-members.js'

/** The columns a CSV header must name (in any order, among others, in any case). */
export const CSV_REQUIRED_COLUMNS = ['user_id', 'username', 'xp'] as const
/** Optional columns with the server's settings, the same on every row (as `export` writes them). */
export const CSV_SETTINGS_COLUMNS = ['xp_curve', 'xp_multiplier'] as const

/** The format a file's name implies (.json is MEE6, .csv is CSV; another bot's JSON is named), or undefined. */
export function formatFromName (path: string): ImportFormat | undefined {
  const ext = extname(path).toLowerCase()
  if (ext === '.json') return 'mee6'
  if (ext === '.csv') return 'csv'
  return undefined
}

/** The format a file's name implies: .json is MEE6, .csv is CSV; an ImportFileError otherwise. */
export function importFormatOf (path: string): ImportFormat {
  const format = formatFromName(path)
  if (format === undefined) throw new ImportFileError(`cannot tell the format of ${path} from its name (.json is mee6, .csv is csv); give the format`)
  return format
}

/**
 * The rows of a CSV stream. The first record is the header; a row whose number of fields is not
 * the header's is a bad row (an unquoted comma in a name, say, would otherwise shift its columns).
 * Quoted fields may hold commas, quotes and line breaks; a row's line is the one it starts on.
 * `size`, the input's length in bytes when known, lets `fractionRead` say how far it got.
 */
export function csvSource (input: Readable, size?: number): RowSource {
  const parser = parse({ bom: true, relax_column_count: true })
  return {
    rows: csvRows(input, parser),
    fractionRead: () => size === undefined || size === 0 ? 0 : Math.min(1, parser.info.bytes / size)
  }
}

/** Where each column is; -1 for a settings column the file does not have. */
interface CsvColumns { userId: number, username: number, xp: number, curve: number, multiplier: number, count: number }

/**
 * Feeds the parser one read of the input at a time and hands out, per read, the rows it gave:
 * csv-parse emits records synchronously while it is written to, so a promise per read replaces
 * one per record (its async iterator). Waiting for the consumer before reading on is the
 * backpressure. Lines are counted here, from the fields themselves (its `info` option copies its
 * counters into every record, and counts a quoted CRLF as two lines), so empty lines come through as one empty field and are skipped here.
 */
async function * csvRows (input: AsyncIterable<Buffer | string>, parser: Parser): AsyncGenerator<SourceRow[]> {
  let records: string[][] = []
  parser.on('data', (record: string[]) => { records.push(record) })
  // Settled from the start, so a parse error is never missed, however late it is emitted.
  let failure: unknown
  const finished = new Promise<void>((resolve, reject) => {
    parser.once('end', resolve)
    parser.on('error', (err) => {
      failure = err
      reject(err)
    })
  })
  finished.catch(() => {}) // awaited below unless the consumer stopped early
  let line = 1
  let columns: CsvColumns | undefined
  const rowsOf = (batch: string[][]): SourceRow[] => {
    const rows: SourceRow[] = []
    for (const record of batch) {
      const at = { line }
      line += 1 + lineBreaksIn(record)
      if (record.length === 1 && record[0] === '') continue // an empty line
      if (columns === undefined) {
        columns = csvColumns(record, at.line)
      } else if (record.length !== columns.count) {
        rows.push({ at, userId: undefined, username: undefined, xp: undefined, problem: `expected ${columns.count} fields as in the header, found ${record.length}` })
      } else {
        const username = record[columns.username]
        rows.push({
          at,
          userId: record[columns.userId],
          username: username === undefined ? undefined : cellText(username),
          xp: record[columns.xp],
          curve: record[columns.curve],
          multiplier: record[columns.multiplier]
        })
      }
    }
    return rows
  }
  try {
    for await (const chunk of input) {
      parser.write(chunk)
      if (failure !== undefined) throw failure
      const batch = rowsOf(records)
      records = []
      if (batch.length > 0) yield batch
    }
    parser.end()
    await finished
    const batch = rowsOf(records)
    if (batch.length > 0) yield batch
  } catch (err) {
    if (err instanceof CsvError) throw new ImportFileError(`the CSV is malformed, nothing past the fault can be read: ${err.message}`)
    throw err
  } finally {
    parser.destroy()
  }
  if (columns === undefined) throw new ImportFileError(`the CSV is empty: expected a header naming ${CSV_REQUIRED_COLUMNS.join(', ')}`)
}

function csvColumns (header: string[], line: number): CsvColumns {
  const names = header.map((name) => name.trim().toLowerCase())
  const index = (column: string): number => names.indexOf(column)
  const missing = CSV_REQUIRED_COLUMNS.filter((column) => index(column) < 0)
  if (missing.length > 0) {
    throw new ImportFileError(`the CSV header (line ${line}) must name the columns ${CSV_REQUIRED_COLUMNS.join(', ')}; ` +
      `missing: ${missing.join(', ')} (found: ${header.map((name) => JSON.stringify(name)).join(', ')})`)
  }
  const twice = [...CSV_REQUIRED_COLUMNS, ...CSV_SETTINGS_COLUMNS].find((column) => names.lastIndexOf(column) !== index(column))
  if (twice !== undefined) throw new ImportFileError(`the CSV header (line ${line}) names the column ${twice} twice`)
  return {
    userId: index('user_id'),
    username: index('username'),
    xp: index('xp'),
    curve: index('xp_curve'),
    multiplier: index('xp_multiplier'),
    count: header.length
  }
}

/** Line breaks inside a record's quoted fields: CRLF, LF or a lone CR each count once. */
function lineBreaksIn (record: string[]): number {
  let breaks = 0
  for (const field of record) {
    if (field.includes('\n') || field.includes('\r')) breaks += field.match(/\r\n|\r|\n/g)?.length ?? 0
  }
  return breaks
}

/**
 * Rows out of a stream in the given format (`name` says where it comes from in messages, and
 * `size`, its length in bytes when known, lets progress be told).
 */
export async function openImportStream (input: Readable, format: ImportFormat, name: string, size?: number): Promise<RowSource> {
  return isJsonFormat(format) ? jsonSource(input, format, { name, size }) : csvSource(input, size)
}

/** A file's rows in the given format (default: from its name). */
export async function openImportFile (path: string, format: ImportFormat = importFormatOf(path)): Promise<RowSource> {
  let file
  try {
    file = await open(path, 'r')
  } catch (err) {
    throw new ImportFileError(`cannot read ${path}: ${(err as Error).message}`)
  }
  const { size } = await file.stat()
  return await openImportStream(file.createReadStream(), format, path, size)
}

export interface ImportFileOptions extends Omit<ImportOptions, 'onProgress'> {
  /** Default: from the file's name (.json: mee6, .csv: csv); amari, lurkr, polaris and tatsu are named. */
  format?: ImportFormat
  /** After each batch written, with the share of the file read so far. */
  onProgress?: (progress: ImportProgress & { fractionRead: number }) => void
}

/** importMembers over a CSV or a bot's leaderboard JSON file. */
export async function importFile (writer: LeaderboardWriter, guildId: string, path: string, options: ImportFileOptions = {}): Promise<ImportSummary> {
  return await importFrom(writer, guildId, await openImportFile(path, options.format), options)
}

/** importMembers over a stream (standard input, an upload) in the given format. */
export async function importStream (writer: LeaderboardWriter, guildId: string, input: Readable,
  options: ImportFileOptions & { format: ImportFormat, name?: string }): Promise<ImportSummary> {
  return await importFrom(writer, guildId, await openImportStream(input, options.format, options.name ?? 'the input'), options)
}

async function importFrom (writer: LeaderboardWriter, guildId: string, source: RowSource, options: ImportFileOptions): Promise<ImportSummary> {
  const { onProgress } = options
  return await importMembers(writer, guildId, source.rows, {
    strict: options.strict,
    keepSettings: options.keepSettings,
    onProblem: options.onProblem,
    onProgress: onProgress === undefined ? undefined : (progress) => { onProgress({ ...progress, fractionRead: source.fractionRead() }) }
  })
}
