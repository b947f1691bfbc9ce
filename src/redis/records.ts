// A member's record as the members hash stores it (src/redis/commands/includes/records.lua):
// "<daily streak>:<last claim, Unix ms>:<username>", each part empty when unknown.

export interface MemberRecordParts {
  /** The stored streak (it may have lapsed; see `currentStreak`). */
  streak: number
  /** Last daily claim, Unix ms, or null if never claimed. */
  lastClaim: number | null
  /** The recorded username, or null if none was. */
  username: string | null
}

const NONE: MemberRecordParts = { streak: 0, lastClaim: null, username: null }

export function parseRecord (record: string | null | undefined): MemberRecordParts {
  if (record === null || record === undefined) return NONE
  const first = record.indexOf(':')
  const second = record.indexOf(':', first + 1)
  if (first < 0 || second < 0) return NONE
  const claim = record.slice(first + 1, second)
  const username = record.slice(second + 1)
  return {
    streak: Number(record.slice(0, first)),
    lastClaim: claim === '' ? null : Number(claim),
    username: username === '' ? null : username
  }
}

/** Only the username of a record, without parsing the rest (a page needs no more). */
export function usernameOfRecord (record: string | null | undefined): string | null {
  if (record === null || record === undefined) return null
  const second = record.indexOf(':', record.indexOf(':') + 1)
  return second < 0 || second === record.length - 1 ? null : record.slice(second + 1)
}
