// CSV cells a spreadsheet cannot take for a formula (CSV injection): OWASP's advice is that no
// cell begins with `=`, `+`, `-`, `@`, a tab or a carriage return, and that such a cell gets a
// leading `'`, which spreadsheets read as "this is text". A name such as `=HYPERLINK(…)` or
// `-Ninja-` is exported as `'=HYPERLINK(…)`, `'-Ninja-`; the import takes the mark off again.
// A cell that begins with `'` gets one more, so that every name comes back exactly as it was.

/** The first characters a spreadsheet may read as the start of a formula; and the mark itself. */
const MARKED = /^[=+\-@\t\r']/
/** A cell written by textCell with its mark (from another program too, if it follows OWASP). */
const WITH_MARK = /^'[=+\-@\t\r']/

/** `text` as an exported CSV cell. */
export function textCell (text: string): string {
  return MARKED.test(text) ? `'${text}` : text
}

/** The text of a CSV cell that textCell wrote (any other cell is returned as it is). */
export function cellText (cell: string): string {
  return WITH_MARK.test(cell) ? cell.slice(1) : cell
}
