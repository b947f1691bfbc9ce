// Where a bad row of an import is, and what is wrong with it: shared by the importer and the
// error it throws when a strict import is refused (src/errors.ts), so it depends on neither.

/** Where a row is in its file: a CSV line (1-based, the line the row starts on), or a MEE6 player (0-based). */
export type RowPosition = { line: number } | { page?: number, index: number }

export type ImportProblem = RowPosition & {
  /** The position as text: `line 7`, `players[3]` (a single page) or `[2].players[3]` (an array of pages). */
  where: string
  message: string
}
