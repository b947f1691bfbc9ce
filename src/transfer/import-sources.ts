// Rows for importMembers out of the two file formats: CSV with a header naming at least
// user_id, username and xp (read as a stream), and MEE6 leaderboard JSON (a page object or an
// array of pages). What makes a whole file unreadable throws ImportFileError; a bad row is only
// passed on, with its position, for importMembers to report.
import { open, readFile } from 'node:fs/promises'
import { extname } from 'node:path'
import { pipeline, type Readable } from 'node:stream'
import { CsvError, parse } from 'csv-parse'
import { ImportFileError } from '../errors.js'
import { type ImportOptions, type ImportProgress, type ImportSummary, importMembers, type SourceRow } from './import-members.js'
import type { LeaderboardWriter } from '../writer/leaderboard-writer.js'

export const IMPORT_FORMATS = ['mee6', 'csv'] as const
export type ImportFormat = typeof IMPORT_FORMATS[number]

/** The columns a CSV header must name (in any order, among others, in any case). */
export const CSV_REQUIRED_COLUMNS = ['user_id', 'username', 'xp'] as const

export interface RowSource {
  rows: Iterable<SourceRow> | AsyncIterable<SourceRow>
  /** How much of the input the rows handed out so far cover, from 0 to 1. */
  fractionRead: () => number
}

/** The format a file's name implies: .json is MEE6, .csv is CSV. */
export function importFormatOf (path: string): ImportFormat {
  const ext = extname(path).toLowerCase()
  if (ext === '.json') return 'mee6'
  if (ext === '.csv') return 'csv'
  throw new ImportFileError(`cannot tell the format of ${path} from its name (.json is mee6, .csv is csv); give the format`)
}

/**
 * The rows of a CSV stream. The first record is the header; a row whose number of fields is not
 * the header's is a bad row (an unquoted comma in a name, say, would otherwise shift its columns).
 * Quoted fields may hold commas, quotes and line breaks; a row's line is the one it starts on.
 * `size`, the input's length in bytes when known, lets `fractionRead` say how far it got.
 */
export function csvSource (input: Readable, size?: number): RowSource {
  // Not csv-parse's `info` (a copy of its counters per record tripled the parse time, and it
  // counts a quoted CRLF as two lines): lines are counted here, from the fields themselves, so
  // empty lines come through as one empty field and are skipped here.
  const parser = parse({ bom: true, relax_column_count: true })
  pipeline(input, parser, () => {}) // an error of either ends the iteration below with it
  return {
    rows: csvRows(parser),
    fractionRead: () => size === undefined || size === 0 ? 0 : Math.min(1, parser.info.bytes / size)
  }
}

async function * csvRows (records: AsyncIterable<string[]>): AsyncGenerator<SourceRow> {
  let line = 1
  let columns: { userId: number, username: number, xp: number, count: number } | undefined
  try {
    for await (const record of records) {
      const at = { line }
      line += 1 + lineBreaksIn(record)
      if (record.length === 1 && record[0] === '') continue // an empty line
      if (columns === undefined) {
        columns = csvColumns(record, at.line)
        continue
      }
      if (record.length !== columns.count) {
        yield { at, userId: undefined, username: undefined, xp: undefined, problem: `expected ${columns.count} fields as in the header, found ${record.length}` }
        continue
      }
      yield { at, userId: record[columns.userId], username: record[columns.username], xp: record[columns.xp] }
    }
  } catch (err) {
    if (err instanceof CsvError) throw new ImportFileError(`the CSV cannot be read on from line ${line}: ${err.message}`)
    throw err
  }
  if (columns === undefined) throw new ImportFileError(`the CSV is empty: expected a header naming ${CSV_REQUIRED_COLUMNS.join(', ')}`)
}

function csvColumns (header: string[], line: number): { userId: number, username: number, xp: number, count: number } {
  const names = header.map((name) => name.trim().toLowerCase())
  const index = (column: string): number => names.indexOf(column)
  const missing = CSV_REQUIRED_COLUMNS.filter((column) => index(column) < 0)
  if (missing.length > 0) {
    throw new ImportFileError(`the CSV header (line ${line}) must name the columns ${CSV_REQUIRED_COLUMNS.join(', ')}; ` +
      `missing: ${missing.join(', ')} (found: ${header.map((name) => JSON.stringify(name)).join(', ')})`)
  }
  const twice = CSV_REQUIRED_COLUMNS.find((column) => names.lastIndexOf(column) !== index(column))
  if (twice !== undefined) throw new ImportFileError(`the CSV header (line ${line}) names the column ${twice} twice`)
  return { userId: index('user_id'), username: index('username'), xp: index('xp'), count: header.length }
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
 * The rows of a MEE6 leaderboard: `{"players": [{"id", "username", "xp", ...}], ...}`, as MEE6's
 * leaderboard API answers for a page, or an array of such pages. Other fields are ignored.
 * The whole structure is checked before any row is handed out.
 */
export function mee6Source (json: unknown): RowSource {
  const single = isPage(json)
  if (!single && !Array.isArray(json)) {
    throw new ImportFileError('not a MEE6 leaderboard: expected a page, {"players": [...]}, or an array of pages')
  }
  const pagesOf = (array: unknown[]): unknown[][] => array.map((page, i) => {
    if (!isPage(page)) throw new ImportFileError(`[${i}] is not a MEE6 leaderboard page: it has no "players" array`)
    return page.players
  })
  const pages = single ? [json.players] : pagesOf(json as unknown[])
  const total = pages.reduce((sum, players) => sum + players.length, 0)
  let read = 0
  function * rows (): Generator<SourceRow> {
    for (const [p, players] of pages.entries()) {
      for (const [index, player] of players.entries()) {
        read++
        const at = single ? { index } : { page: p, index }
        if (typeof player !== 'object' || player === null || Array.isArray(player)) {
          yield { at, userId: undefined, username: undefined, xp: undefined, problem: 'not a player object' }
        } else {
          const { id, username, xp } = player as Record<string, unknown>
          yield { at, userId: id, username, xp }
        }
      }
    }
  }
  return { rows: rows(), fractionRead: () => total === 0 ? 1 : read / total }
}

function isPage (value: unknown): value is { players: unknown[] } {
  return typeof value === 'object' && value !== null && Array.isArray((value as { players?: unknown }).players)
}

/** A file's rows in the given format (default: from its name). A MEE6 file is read whole; a CSV is streamed. */
export async function openImportFile (path: string, format: ImportFormat = importFormatOf(path)): Promise<RowSource> {
  if (format === 'mee6') {
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (err) {
      throw new ImportFileError(`cannot read ${path}: ${(err as Error).message}`)
    }
    let json: unknown
    try {
      json = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
    } catch (err) {
      throw new ImportFileError(`${path} is not valid JSON: ${(err as Error).message}`)
    }
    return mee6Source(json)
  }
  let file
  try {
    file = await open(path, 'r')
  } catch (err) {
    throw new ImportFileError(`cannot read ${path}: ${(err as Error).message}`)
  }
  const { size } = await file.stat()
  return csvSource(file.createReadStream(), size)
}

export interface ImportFileOptions extends Omit<ImportOptions, 'onProgress'> {
  /** Default: from the file's name (.json: mee6, .csv: csv). */
  format?: ImportFormat
  /** After each batch written, with the share of the file read so far. */
  onProgress?: (progress: ImportProgress & { fractionRead: number }) => void
}

/** importMembers over a CSV or MEE6 JSON file. */
export async function importFile (writer: LeaderboardWriter, guildId: string, path: string, options: ImportFileOptions = {}): Promise<ImportSummary> {
  const { format, onProgress, ...rest } = options
  const source = await openImportFile(path, format)
  return await importMembers(writer, guildId, source.rows, {
    ...rest,
    onProgress: onProgress === undefined ? undefined : (progress) => { onProgress({ ...progress, fractionRead: source.fractionRead() }) }
  })
}
