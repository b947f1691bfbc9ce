// A member's profile as writes take it (award items, PUT member, batches, imports): its display
// name and avatar URL, checked here and encoded for the scripts (src/redis/commands/includes/profile.lua).
import { assertDisplayText, assertHttpsUrl } from '../settings/settings.js'

/** A member's display name and avatar URL as a write takes them: a value sets it, null clears it, absent keeps it. */
export interface ProfileInput {
  /** 1 to 100 characters (code points), no control characters; null clears it. */
  displayName?: string | null
  /** An https URL of at most 512 characters; null clears it. */
  avatarUrl?: string | null
}

/** What a script is given to clear a part ('' keeps it): the record's separator, which no name or URL holds. */
const CLEAR = '\x1f'

/** The script arguments of `input`'s display name and avatar URL, checked (an error names the field). */
export function profileArgs (input: ProfileInput): { displayName: string, avatarUrl: string } {
  return {
    displayName: part(input.displayName, (value) => assertDisplayText('display_name', value)),
    avatarUrl: part(input.avatarUrl, (value) => assertHttpsUrl('avatar_url', value))
  }
}

function part (value: unknown, check: (value: unknown) => string): string {
  if (value === undefined) return ''
  if (value === null) return CLEAR
  return check(value)
}

/** Whether `input` names a display name or an avatar URL at all. */
export function hasProfile (input: ProfileInput): boolean {
  return input.displayName !== undefined || input.avatarUrl !== undefined
}
