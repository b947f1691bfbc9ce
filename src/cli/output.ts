// What the CLI writes: results on stdout, one-line errors on stderr, and small tables.
import { LeaderboardError } from '../errors.js'
import { isRedisUnavailable } from '../redis/errors.js'
import { CliError } from './connection.js'

export function print (line: string): void {
  process.stdout.write(`${line}\n`)
}

/** One line on stderr, whatever the message held: a script reading it gets exactly one. */
export function printError (message: string): void {
  const line = message.split('\n').map((part) => part.trim()).filter((part) => part !== '').join(' ')
  process.stderr.write(`error: ${line}\n`)
}

/** One line for any failure; a stack trace helps nobody at a shell prompt. */
export function describeError (err: unknown): string {
  if (err instanceof LeaderboardError || err instanceof CliError) return err.message
  const message = err instanceof Error ? err.message : String(err)
  if (err instanceof Error && err.name === 'ReplyError') return `Redis refused the command: ${message}`
  if (isRedisUnavailable(err)) {
    return `lost Redis while working (${message}); the change may or may not have been made`
  }
  return message
}

/** Columns padded to their widest cell; the last one is not padded. */
export function table (header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)))
  return [header, ...rows]
    .map((row) => row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)).join('  '))
    .join('\n')
}

/** Data for a script: one line of JSON. */
export function printJson (value: unknown): void {
  print(JSON.stringify(value))
}

/** A record as `name  value` lines, names padded; null is a dash, an object its JSON. */
export function fields (record: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(record).map((name) => name.length))
  return Object.entries(record).map(([name, value]) => {
    const text = value === null || value === undefined ? '-' : typeof value === 'object' ? JSON.stringify(value) : String(value)
    return `${name.padEnd(width)}  ${text}`
  }).join('\n')
}

/** A date as 2026-11-21 18:04:05Z, or a dash. */
export function shortDate (date: Date | null): string {
  return date === null ? '-' : date.toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, 'Z')
}

/** `1 member`, `2 members`: a count with its noun, singular for one. */
export function count (n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`
}

/**
 * How long some work took, and its rate when it took long enough for a rate to mean something:
 * `in 12 ms`, or `in 3.4 s (58210 rows/s)`.
 */
export function timing (elapsedMs: number, done: number, unit: string): string {
  if (elapsedMs < 1000) return `in ${Math.max(1, Math.round(elapsedMs))} ms`
  return `in ${(elapsedMs / 1000).toFixed(1)} s (${Math.round(done / (elapsedMs / 1000))} ${unit}/s)`
}
