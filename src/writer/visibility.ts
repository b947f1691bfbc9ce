// Who is shown, as writes take it: a visibility change per user (hide for a reason, show when a
// reason, or every reason, no longer holds), checked, and a batch's changes merged per user into
// the items the script applies (src/redis/commands/set-visibility-n.lua).
import { InvalidParameterError } from '../errors.js'
import { boardMember } from '../redis/keys.js'
import { assertSnowflake } from '../validation.js'

/** Why a member is hidden: it left the server, or asked not to be shown. */
export const HIDE_REASONS = ['left', 'opted_out'] as const
export type HideReason = typeof HIDE_REASONS[number]

/** One change: hide `userId` for `reason`, or show it again when `reason` (or, without one, any reason) no longer holds. */
export interface VisibilityChange {
  userId: string
  visible: boolean
  /** Required to hide; to show, the reason that no longer holds (absent: every reason). */
  reason?: HideReason
}

/** A user's visibility after a change. */
export interface VisibilityResult {
  userId: string
  /** Shown on every public read (no reason to hide it holds). */
  visible: boolean
  /** Why it is hidden, in a fixed order; empty when shown. */
  reasons: HideReason[]
  /** Its XP, shown or not; null for a user that is not a member (its visibility is kept for its first write). */
  xp: number | null
}

/** Changes per visibility write API call; the library takes any number, in script calls of VISIBILITY_BATCH. */
export const MAX_VISIBILITY_CHANGES = 10_000

function checked (change: VisibilityChange): VisibilityChange {
  if (typeof change !== 'object' || change === null) throw new InvalidParameterError('must be an object { userId, visible, reason }')
  const userId = assertSnowflake('user_id', change.userId)
  if (typeof change.visible !== 'boolean') throw new InvalidParameterError('visible must be true or false')
  if (change.reason !== undefined && !(HIDE_REASONS as readonly unknown[]).includes(change.reason)) {
    throw new InvalidParameterError(`reason must be one of ${HIDE_REASONS.join(', ')}`)
  }
  if (!change.visible && change.reason === undefined) throw new InvalidParameterError(`hiding a member needs a reason: ${HIDE_REASONS.join(' or ')}`)
  return { userId, visible: change.visible, ...(change.reason === undefined ? {} : { reason: change.reason }) }
}

/**
 * A user's changes in a call, reduced to what they leave: each reason set or cleared by the last
 * change that names it (showing without a reason clears both). Applied in one script call, in any
 * order of users, they leave every user as the changes one by one would.
 */
export class VisibilityChanges {
  readonly userIds: string[] = []
  readonly #reasons = new Map<string, Map<HideReason, boolean>>()
  /** Each change's user, in the order given (the results follow it). */
  readonly order: string[] = []

  /** Checks `change` (an error says what is wrong, for the caller to name its index) and adds it. */
  add (change: VisibilityChange): void {
    const { userId, visible, reason } = checked(change)
    let reasons = this.#reasons.get(userId)
    if (reasons === undefined) {
      reasons = new Map()
      this.#reasons.set(userId, reasons)
      this.userIds.push(userId)
    }
    for (const r of reason === undefined ? HIDE_REASONS : [reason]) reasons.set(r, !visible)
    this.order.push(userId)
  }

  /** The script's items (3 values each) for users `from` to `to` - 1, and how many each user has. */
  chunk (from: number, to: number): VisibilityChunk {
    const userIds = this.userIds.slice(from, to)
    const items: string[] = []
    const counts: number[] = []
    for (const userId of userIds) {
      const member = boardMember(userId)
      const reasons = this.#reasons.get(userId) ?? new Map<HideReason, boolean>()
      for (const [reason, hidden] of reasons) items.push(member, hidden ? '0' : '1', reason)
      counts.push(reasons.size)
    }
    return { userIds, items, counts }
  }
}

/** Users' items for one script call. */
export interface VisibilityChunk {
  userIds: string[]
  items: string[]
  /** Items per user, in order. */
  counts: number[]
}

/** Each user's visibility after a script call (its reply: 3 values per item, after a status). */
export function visibilityResults ({ userIds, counts }: VisibilityChunk, reply: ReadonlyArray<number | string | null>): VisibilityResult[] {
  let item = 0
  return userIds.map((userId, i) => {
    item += counts[i] ?? 1
    const at = 3 * item - 2 // the user's last item
    const reasons = String(reply[at + 1] ?? '')
    const xp = reply[at + 2]
    return {
      userId,
      visible: Number(reply[at]) === 1,
      reasons: reasons === '' ? [] : reasons.split(',') as HideReason[],
      xp: xp === null || xp === undefined ? null : Number(xp)
    }
  })
}
