// Checks shared by the writer library, the CLI and the HTTP layer's messages.
import { InvalidParameterError } from './errors.js'
import { MAX_XP } from './levels/curves.js'
import { SNOWFLAKE_PATTERN } from './snowflake.js'

const snowflake = new RegExp(SNOWFLAKE_PATTERN)

export function assertSnowflake (name: string, value: unknown): string {
  if (typeof value !== 'string' || !snowflake.test(value)) {
    throw new InvalidParameterError(`${name} must be a decimal id of 1 to 20 digits without a leading zero`)
  }
  return value
}

export function assertInteger (name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidParameterError(`${name} must be an integer from ${min} to ${max}`)
  }
  return value
}

/** The largest single award; a larger one is almost certainly a bug in the bot. */
export const MAX_AWARD = 1_000_000

export function assertXp (value: unknown): number {
  return assertInteger('xp', value, 0, MAX_XP)
}

/** Usernames and labels (of keys and tokens): at most this many characters (code points, as JSON Schema's maxLength counts them). */
export const MAX_USERNAME_LENGTH = 100
export const MAX_LABEL_LENGTH = 100

/** A text's length in Unicode code points (an emoji is one; JavaScript's length counts UTF-16 units). */
export function codePoints (text: string): number {
  return text.length - (text.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0)
}

export function assertUsername (value: unknown): string {
  if (typeof value !== 'string') throw new InvalidParameterError('username must be a string')
  const name = value.trim()
  const length = codePoints(name)
  // eslint-disable-next-line no-control-regex
  if (length === 0 || length > MAX_USERNAME_LENGTH || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new InvalidParameterError(`username must be 1 to ${MAX_USERNAME_LENGTH} characters without control characters`)
  }
  return name
}

/** The name of an API key or a token, trimmed: 1 to MAX_LABEL_LENGTH characters. */
export function assertLabel (value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : ''
  const length = codePoints(name)
  if (length === 0 || length > MAX_LABEL_LENGTH) throw new InvalidParameterError(`name must be 1 to ${MAX_LABEL_LENGTH} characters`)
  return name
}

/**
 * A multiplier from 0.01 to 100 with at most two decimals, as an exact count of hundredths.
 * Numbers are read through their shortest decimal form (0.29 -> "0.29" -> 29), never by
 * multiplying in floating point.
 */
export function parseMultiplier (value: unknown): number {
  const text = typeof value === 'number' ? String(value) : value
  const match = typeof text === 'string' ? /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(text.trim()) : null
  const hundredths = match === null ? NaN : Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'))
  if (!(hundredths >= 1 && hundredths <= 10000)) {
    throw new InvalidParameterError('multiplier must be a number from 0.01 to 100 with at most two decimals')
  }
  return hundredths
}

export function formatMultiplier (hundredths: number): number {
  return hundredths / 100
}
