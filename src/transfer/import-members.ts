// Imports a leaderboard from rows read out of a file (src/transfer/import-sources.ts reads CSV and
// the JSON of leveling bots): each good row sets one member's XP (not multiplied) and username through the bulk
// write path, so the aggregates stay exact; bad rows are reported by position and skipped, or,
// when strict, refuse the whole import before anything is written. A file may carry its server's
// settings (curve and multiplier, as an export writes them); they are set before the first member.
import { ImportRefusedError, InvalidParameterError } from '../errors.js'
import { CURVES, type Curve, isCurve, MAX_XP } from '../levels/curves.js'
import { SNOWFLAKE_PATTERN } from '../snowflake.js'
import { assertSnowflake, assertUsername, formatMultiplier, parseMultiplier } from '../validation.js'
import type { ImportProblem, RowPosition } from './import-problem.js'
import type { BulkMember, LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { profileArgs, type ProfileInput } from '../writer/profiles.js'

export type { ImportProblem, RowPosition } from './import-problem.js'

/** One row as read from a file, not yet checked. */
export interface SourceRow {
  at: RowPosition
  /** A decimal snowflake (a string; a number is accepted while it is a safe integer). */
  userId: unknown
  /** Text; empty means none is given, and a name already stored is kept. */
  username: unknown
  /** A whole number from 0 to MAX_XP, or its digits as text. */
  xp: unknown
  /**
   * The server's settings as the file gives them on every row (an export's xp_curve and
   * xp_multiplier columns); undefined or empty when the file has none. Every row that gives
   * them must give the same.
   */
  curve?: unknown
  multiplier?: unknown
  /** Set by a reader that could already tell the row is bad (a CSV row with too few fields, say). */
  problem?: string
  /**
   * The name the source shows for the member besides the username, and an https URL of their
   * avatar, when it gives them (a bot's JSON): stored as the member's display name and avatar
   * when valid (see rowProfile).
   */
  displayName?: string
  avatarUrl?: string
}

/** Rows out of a file, and how far into it they are. */
export interface RowSource {
  /** The rows, an array at a time (importMembers takes them so). */
  rows: Iterable<SourceRow[]> | AsyncIterable<SourceRow[]>
  /** How much of the input the rows handed out so far cover, from 0 to 1. */
  fractionRead: () => number
}

/**
 * A server's settings as an import file carries them. A file from a server with a custom curve
 * says `custom` but cannot carry the curve's list: only the multiplier is set, and the server's
 * curve is kept (curve null here).
 */
export interface ImportedSettings {
  curve: Curve | null
  multiplier: number
}

export interface ImportProgress {
  /** Rows read so far, good and bad. */
  read: number
  /** Members written so far. */
  imported: number
}

export interface ImportOptions {
  /** Keep the server's curve and multiplier even when the file carries others (default: set the file's). */
  keepSettings?: boolean
  /** Refuse the whole import (ImportRefusedError, nothing written) if any row is bad. */
  strict?: boolean
  /** Every bad row, as it is found (the summary lists only the first MAX_LISTED_PROBLEMS). */
  onProblem?: (problem: ImportProblem) => void
  /** After each batch written. */
  onProgress?: (progress: ImportProgress) => void
}

export interface ImportSummary {
  guildId: string
  /** Members set (one per good row). */
  imported: number
  /** Bad rows skipped. */
  skipped: number
  /** The first MAX_LISTED_PROBLEMS bad rows. */
  problems: ImportProblem[]
  /** The settings the file carried and that were set; undefined when it carried none or they were kept. */
  settings?: ImportedSettings
  elapsedMs: number
}

/** Good rows written per bulk call: the next chunk is checked while the one before is written. */
export const IMPORT_CHUNK = 10_000
export const MAX_LISTED_PROBLEMS = 100

/**
 * Sets each good row's member to the row's XP and username; members not in the rows, and the
 * daily records of those in them, are left as they are. A second run with the same rows changes
 * no member, record or aggregate. Rows may come one by one or in arrays (a reader that hands out
 * all it parsed from one read saves a promise per row). Rows are consumed as they come (a stream of a million is never
 * held whole), except with `strict`, where every good row is held until the last is checked.
 * A user id given twice is a bad row the second time: the first is imported.
 */
export async function importMembers (
  writer: LeaderboardWriter,
  guildId: string,
  rows: Iterable<SourceRow | SourceRow[]> | AsyncIterable<SourceRow | SourceRow[]>,
  options: ImportOptions = {}
): Promise<ImportSummary> {
  const started = performance.now()
  assertSnowflake('guild_id', guildId)
  const summary: ImportSummary = { guildId, imported: 0, skipped: 0, problems: [], elapsedMs: 0 }
  const output = new ChunkedWrite(writer, guildId, (imported) => {
    summary.imported = imported
    options.onProgress?.({ read, imported })
  })
  const firstSeen: FirstSeen = new Map()
  const settings: FileSettings = {}
  // The file's settings go in before its first member, so that no reader sees members under the old curve.
  const write = async (members: BulkMember[]): Promise<void> => {
    if (settings.found !== undefined && options.keepSettings !== true && summary.settings === undefined) {
      const { curve, hundredths } = settings.found
      summary.settings = { curve: curve === 'custom' ? null : curve, multiplier: formatMultiplier(hundredths) }
      await writer.configureGuild(guildId, { curve: summary.settings.curve ?? undefined, multiplier: summary.settings.multiplier })
    }
    await output.add(members)
  }
  const held: BulkMember[][] = []
  let chunk: BulkMember[] = []
  let read = 0
  try {
    for await (const item of rows) {
      for (const row of Array.isArray(item) ? item : [item]) {
        read++
        const checked = checkRow(row, firstSeen, settings)
        if (typeof checked === 'string') {
          const problem: ImportProblem = { ...row.at, where: describePosition(row.at), message: checked }
          summary.skipped++
          if (summary.problems.length < MAX_LISTED_PROBLEMS) summary.problems.push(problem)
          options.onProblem?.(problem)
          continue
        }
        chunk.push(checked)
        if (chunk.length === IMPORT_CHUNK) {
          if (options.strict === true) held.push(chunk)
          else await write(chunk)
          chunk = []
        }
      }
    }
    if (options.strict === true && summary.skipped > 0) {
      const first = summary.problems[0]
      throw new ImportRefusedError(`${summary.skipped} bad row${summary.skipped === 1 ? '' : 's'} ` +
        `(the first: ${first?.where}: ${first?.message}); nothing was imported`, summary.skipped, summary.problems)
    }
    for (const c of held) await write(c)
    if (chunk.length > 0) await write(chunk)
  } catch (err) {
    await output.finish().catch(() => {}) // the first failure is the one to report
    throw err
  }
  await output.finish()
  summary.elapsedMs = performance.now() - started
  return summary
}

export function describePosition (at: RowPosition): string {
  if ('line' in at) return `line ${at.line}`
  const row = `${at.list ?? 'players'}[${at.key === undefined ? at.index : JSON.stringify(at.key)}]`
  return at.page === undefined ? row : `[${at.page}].${row}`
}

/**
 * Where each user id was first seen, as one number (a position object per row, kept alive for the
 * whole import, would be memory and garbage collection's work in proportion to the file): a CSV
 * line as it is, a JSON row as -(1 + (page + 1) * 2^32 + index), page -1 for a single page.
 */
type FirstSeen = Map<string, number>

const PAGE_UNIT = 2 ** 32

function packPosition (at: RowPosition): number {
  return 'line' in at ? at.line : -(1 + ((at.page ?? -1) + 1) * PAGE_UNIT + at.index)
}

/** The position `packPosition` packed, its list and key (the row's id) taken from the later row's: a file keeps its rows under one name. */
function unpackPosition (packed: number, later: RowPosition, id: string): RowPosition {
  if (packed > 0 || 'line' in later) return { line: packed }
  const n = -packed - 1
  const page = Math.floor(n / PAGE_UNIT) - 1
  const at: RowPosition = { index: n % PAGE_UNIT, list: later.list }
  if (page >= 0) at.page = page
  if (later.key !== undefined) at.key = id
  return at
}

/** The settings of the first good row that gave any, which every later one must repeat. */
interface FileSettings { found?: RowSettings }
interface RowSettings { curve: Curve | 'custom', hundredths: number }

/** The member a row sets, or why the row is bad. */
function checkRow (row: SourceRow, firstSeen: FirstSeen, settings: FileSettings): BulkMember | string {
  if (row.problem !== undefined) return row.problem
  const userId = typeof row.userId === 'number' && Number.isSafeInteger(row.userId) ? String(row.userId) : row.userId
  if (userId === undefined || userId === null || userId === '') return 'the user id is missing'
  const id = typeof userId === 'string' ? (SNOWFLAKE.test(userId) ? userId : userId.trim()) : ''
  if (!SNOWFLAKE.test(id)) return `the user id must be a decimal id of 1 to 20 digits without a leading zero (got ${shown(row.userId)})`

  let xp = row.xp
  if (xp === undefined || xp === null || xp === '') return 'xp is missing'
  if (typeof xp === 'string') xp = /^\s*\d{1,16}\s*$/.test(xp) ? Number(xp) : NaN
  if (typeof xp !== 'number' || !Number.isSafeInteger(xp) || xp < 0 || xp > MAX_XP) {
    return `xp must be a whole number from 0 to ${MAX_XP} (got ${shown(row.xp)})`
  }

  if (row.username === undefined || row.username === null) return 'the username is missing'
  if (typeof row.username !== 'string') return `the username must be text (got ${shown(row.username)})`
  let username: string | undefined
  if (row.username.trim() !== '') {
    try {
      username = assertUsername(row.username)
    } catch (err) {
      if (err instanceof InvalidParameterError) return `${err.message} (got ${shown(row.username)})`
      throw err
    }
  }

  const rowSettings = settingsOf(row)
  if (typeof rowSettings === 'string') return rowSettings
  const fileSettings = settings.found
  if (rowSettings !== undefined && fileSettings !== undefined &&
    (rowSettings.curve !== fileSettings.curve || rowSettings.hundredths !== fileSettings.hundredths)) {
    return `the settings (xp_curve ${rowSettings.curve}, xp_multiplier ${formatMultiplier(rowSettings.hundredths)}) differ from ` +
      `the file's first (${fileSettings.curve}, ${formatMultiplier(fileSettings.hundredths)}): a file holds one server's settings`
  }

  const earlier = firstSeen.get(id)
  if (earlier !== undefined) return `a second row for user ${id} (the one at ${describePosition(unpackPosition(earlier, row.at, id))} counts)`
  firstSeen.set(id, packPosition(row.at))
  if (fileSettings === undefined && rowSettings !== undefined) settings.found = rowSettings
  return { userId: id, xp, ...(username === undefined ? {} : { username }), ...rowProfile(row) }
}

/**
 * A row's display name and avatar URL, each kept only when valid: a bot's odd value (a name with
 * control characters, an http avatar) leaves that field as it was rather than costing the member
 * its XP. Absent, the member's own are kept.
 */
function rowProfile (row: SourceRow): ProfileInput {
  const profile: ProfileInput = {}
  const valid = (check: () => unknown): boolean => {
    try {
      check()
      return true
    } catch (err) {
      if (err instanceof InvalidParameterError) return false
      throw err
    }
  }
  if (typeof row.displayName === 'string' && row.displayName.trim() !== '' && valid(() => profileArgs({ displayName: row.displayName }))) profile.displayName = row.displayName
  if (typeof row.avatarUrl === 'string' && valid(() => profileArgs({ avatarUrl: row.avatarUrl }))) profile.avatarUrl = row.avatarUrl
  return profile
}

/** A row's settings, undefined when it gives none, or why they are bad. */
function settingsOf (row: SourceRow): RowSettings | undefined | string {
  const given = (value: unknown): boolean => value !== undefined && value !== null && value !== ''
  if (!given(row.curve) && !given(row.multiplier)) return undefined
  if (!given(row.curve) || !given(row.multiplier)) return 'xp_curve and xp_multiplier must be given together'
  const curve = typeof row.curve === 'string' ? row.curve.trim() : row.curve
  if (!isCurve(curve) && curve !== 'custom') return `xp_curve must be one of ${[...CURVES, 'custom'].join(', ')} (got ${shown(row.curve)})`
  try {
    return { curve, hundredths: parseMultiplier(row.multiplier) }
  } catch (err) {
    if (err instanceof InvalidParameterError) return `xp_${err.message} (got ${shown(row.multiplier)})`
    throw err
  }
}

const SNOWFLAKE = new RegExp(SNOWFLAKE_PATTERN)

/** A value for a message: short, on one line, quoted as JSON so that blanks and control characters show. */
function shown (value: unknown): string {
  if (value === undefined) return 'nothing'
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 40 ? `${text.slice(0, 39)}…` : text
}

/**
 * Writes chunks through bulkSetMembers, one at a time in order, the caller checking the next
 * while the last is written (as seeding does). `add` returns once the chunk before is written.
 */
class ChunkedWrite {
  readonly #writer: LeaderboardWriter
  readonly #guildId: string
  readonly #onWritten: (imported: number) => void
  #writing: Promise<unknown> = Promise.resolve()
  #imported = 0

  constructor (writer: LeaderboardWriter, guildId: string, onWritten: (imported: number) => void) {
    this.#writer = writer
    this.#guildId = guildId
    this.#onWritten = onWritten
  }

  async add (members: BulkMember[]): Promise<void> {
    let chunkDone = 0
    const write = this.#writer.bulkSetMembers(this.#guildId, members, (done) => {
      this.#imported += done - chunkDone
      chunkDone = done
      this.#onWritten(this.#imported)
    })
    write.catch(() => {}) // awaited by the next add or by finish; meanwhile not unhandled
    const before = this.#writing
    this.#writing = write
    await before
  }

  async finish (): Promise<void> {
    await this.#writing
  }
}
