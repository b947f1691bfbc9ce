// Where a bad row of an import is, and what is wrong with it: shared by the importer and the
// error it throws when a strict import is refused (src/errors.ts), so it depends on neither.

/**
 * Where a row is in its file: a CSV line (1-based, the line the row starts on), or a row of a
 * bot's JSON (0-based): its index in its page's `list` (`players` unless said), the page's own
 * index when the file has several, and, in an object of rows by user id, the row's key.
 */
export type RowPosition = { line: number } | { page?: number, index: number, list?: string, key?: string }

export type ImportProblem = RowPosition & {
  /** The position as text: `line 7`, `players[3]` (a single page), `[2].players[3]` (one of several), `users["42"]`. */
  where: string
  message: string
}
