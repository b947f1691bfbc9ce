// A member's record as the members hash stores it (src/redis/commands/includes/records.lua):
// "<daily streak>:<last claim, Unix ms>:<username>", each part empty when unknown, then, once the
// member has any of them, "\x1f<history index>\x1f<display name>\x1f<avatar url>" (names never
// hold control characters, so \x1f cannot occur in one).

export interface MemberRecordParts {
  /** The stored streak (it may have lapsed; see `currentStreak`). */
  streak: number
  /** Last daily claim, Unix ms, or null if never claimed. */
  lastClaim: number | null
  /** The recorded username, or null if none was. */
  username: string | null
  /** The member's place in the server's history arrays, or null before its first day close. */
  historyIndex: number | null
  displayName: string | null
  avatarUrl: string | null
}

const NONE: MemberRecordParts = { streak: 0, lastClaim: null, username: null, historyIndex: null, displayName: null, avatarUrl: null }
const SEPARATOR = '\x1f'

export function parseRecord (record: string | null | undefined): MemberRecordParts {
  if (record === null || record === undefined) return NONE
  const first = record.indexOf(':')
  const second = record.indexOf(':', first + 1)
  if (first < 0 || second < 0) return NONE
  const claim = record.slice(first + 1, second)
  const cut = record.indexOf(SEPARATOR, second + 1)
  const username = record.slice(second + 1, cut < 0 ? undefined : cut)
  const [index = '', display = '', avatar = ''] = cut < 0 ? [] : record.slice(cut + 1).split(SEPARATOR)
  return {
    streak: Number(record.slice(0, first)),
    lastClaim: claim === '' ? null : Number(claim),
    username: username === '' ? null : username,
    historyIndex: index === '' ? null : Number(index),
    displayName: display === '' ? null : display,
    avatarUrl: avatar === '' ? null : avatar
  }
}

/** Only the username of a record, without parsing the rest (a page needs no more). */
export function usernameOfRecord (record: string | null | undefined): string | null {
  if (record === null || record === undefined) return null
  const second = record.indexOf(':', record.indexOf(':') + 1)
  if (second < 0) return null
  const cut = record.indexOf(SEPARATOR, second + 1)
  const end = cut < 0 ? record.length : cut
  return end === second + 1 ? null : record.slice(second + 1, end)
}
