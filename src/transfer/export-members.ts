// Exports every member of a server in rank order, as CSV or JSON lines, a chunk at a time: the
// board is read by rank range with the leaderboard's own page script and decoded as the reader
// decodes it, so a million members never sit in memory and Redis is never held long. Every row
// carries the server's curve and multiplier, so that an import into another server sets them too
// (an importer that does not know these columns ignores them). A CSV name that a spreadsheet
// would read as a formula is marked as text (spreadsheet-cells.ts); the import unmarks it.
import { stringify } from 'csv-stringify/sync'
import { InvalidParameterError } from '../errors.js'
import { type Curve, curveName, levelForXp } from '../levels/curves.js'
import { redisNow } from '../redis/client.js'
import { userIdFromBoardMember } from '../redis/keys.js'
import { parseRecord } from '../redis/records.js'
import { currentStreak, type LeaderboardReader } from '../reader/leaderboard-reader.js'
import { assertInteger, assertSnowflake } from '../validation.js'
import { textCell } from './spreadsheet-cells.js'

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const
export type ExportFormat = typeof EXPORT_FORMATS[number]

/** The fields of an exported member, in this order: the CSV header, and the keys of a JSON line. */
export const EXPORT_COLUMNS = ['user_id', 'username', 'xp', 'level', 'daily_streak', 'last_daily_claim', 'xp_curve', 'xp_multiplier'] as const

export interface ExportedMember {
  user_id: string
  /** The recorded username; null (empty in CSV) when none was recorded, where the API shows the user id. */
  username: string | null
  xp: number
  /** Under the server's curve. */
  level: number
  /** As the member record shows it: 0 once the streak has lapsed. */
  daily_streak: number
  /** ISO 8601 UTC with milliseconds; null (empty in CSV) if the member never claimed. */
  last_daily_claim: string | null
  /** The server's settings, the same on every row. */
  xp_curve: Curve | 'custom'
  xp_multiplier: number
}

/** Members per read: one script call of about a millisecond. */
export const EXPORT_CHUNK = 2000

export interface ExportOptions {
  /** Default csv. */
  format?: ExportFormat
  /** Members per Redis read (default EXPORT_CHUNK). */
  chunk?: number
  /** After each chunk: members exported so far, and the board's size when the export began. */
  onProgress?: (exported: number, total: number) => void
}

/**
 * A server's members in rank order as text: iterate it (once) for chunks of CSV (the header
 * first, even for a server with no members) or JSON lines, and write each where it goes, waiting
 * when the destination is full: `await pipeline(Readable.from(exportMembers(reader, g)), out)`.
 * `members()` gives the same members as objects, a chunk at a time.
 *
 * It is not a snapshot: a member whose rank moves past a chunk boundary while the export runs can
 * be missed or written twice. `consistent` says, afterwards, whether the server was written to
 * meanwhile; when it was not, the export is exact.
 */
export class MemberExport implements AsyncIterable<string> {
  readonly reader: LeaderboardReader
  readonly guildId: string
  readonly format: ExportFormat
  readonly chunk: number
  /** Members exported so far. */
  exported = 0
  /** The board's size when the export began. */
  total = 0
  /** False when the server's data version moved during the export (see above). */
  consistent = true
  readonly #onProgress: ExportOptions['onProgress']

  constructor (reader: LeaderboardReader, guildId: string, options: ExportOptions = {}) {
    this.reader = reader
    this.guildId = assertSnowflake('guild_id', guildId)
    const format = options.format ?? 'csv'
    if (!EXPORT_FORMATS.includes(format)) throw new InvalidParameterError(`format must be one of ${EXPORT_FORMATS.join(', ')}`)
    this.format = format
    this.chunk = assertInteger('chunk', options.chunk ?? EXPORT_CHUNK, 1, 10_000)
    this.#onProgress = options.onProgress
  }

  async * [Symbol.asyncIterator] (): AsyncGenerator<string> {
    let header = this.format === 'csv'
    for await (const members of this.members()) {
      yield this.format === 'csv' ? csv(members, header) : jsonLines(members)
      header = false
    }
    if (header) yield csv([], header)
  }

  /** The members, a chunk at a time, in rank order; the next chunk is read while this one is used. */
  async * members (): AsyncGenerator<ExportedMember[]> {
    const { redis } = this.reader
    const nowMs = await redisNow(redis) // one clock for every streak in the file
    // A change of multiplier after this read moves the data version, which `consistent` reports.
    const stats = await this.reader.readStats(this.guildId)
    const multiplier = stats.value.xp_multiplier
    let firstVersion: string | null = null
    const read = (start: number): Promise<ExportedMember[]> => {
      const page = this.reader.pageScript(this.guildId, start, start + this.chunk - 1)
        .then(({ version, total, curve, members, xps, records }) => {
          if (start === 0) {
            this.total = total
            firstVersion = version
            if ((version ?? '0') !== stats.version) this.consistent = false
          } else if (version !== firstVersion) {
            this.consistent = false
          }
          return members.map((member, i): ExportedMember => {
            const xp = Number(xps[i])
            const { streak, lastClaim, username } = parseRecord(records[i])
            return {
              user_id: userIdFromBoardMember(member),
              username,
              xp,
              level: levelForXp(curve, xp),
              daily_streak: currentStreak(streak, lastClaim, nowMs),
              last_daily_claim: lastClaim === null ? null : new Date(lastClaim).toISOString(),
              xp_curve: curveName(curve),
              xp_multiplier: multiplier
            }
          })
        })
      page.catch(() => {}) // awaited below unless the caller stopped early
      return page
    }
    let next = read(0)
    for (let start = 0; ; start += this.chunk) {
      const members = await next
      if (members.length === this.chunk) next = read(start + this.chunk)
      if (members.length === 0) return
      this.exported += members.length
      this.#onProgress?.(this.exported, this.total)
      yield members
      if (members.length < this.chunk) return
    }
  }
}

export function exportMembers (reader: LeaderboardReader, guildId: string, options: ExportOptions = {}): MemberExport {
  return new MemberExport(reader, guildId, options)
}

/** Members as CSV rows (after the header, when asked), every text cell safe to open in a spreadsheet. */
function csv (members: ExportedMember[], header: boolean): string {
  return stringify(members, { header, columns: [...EXPORT_COLUMNS], cast: { string: textCell } })
}

function jsonLines (members: ExportedMember[]): string {
  let text = ''
  for (const member of members) text += `${JSON.stringify(member)}\n`
  return text
}
