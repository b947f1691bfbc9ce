// Operation ids for idempotent writes (src/redis/commands/includes/operations.lua). A write
// script checks the hashes of the current and the previous time bucket for its operation id, so
// an id is remembered for at least one bucket and at most two. Buckets are named from the
// writer's clock: a resent command carries the names it was first sent with, and a retry from
// another process finds the id as long as the clocks differ by less than a bucket.
import { randomBytes } from 'node:crypto'
import { InvalidParameterError } from '../errors.js'
import type { KeyBuilder } from '../redis/keys.js'

/** Default bucket: an operation id is remembered for 5 to 10 minutes. */
export const DEFAULT_OPERATION_WINDOW_MS = 5 * 60 * 1000
/** An operation id: the writer's `opId`, the write API's `op_id`. */
export const OPERATION_ID_PATTERN = '^[A-Za-z0-9._:-]{1,64}$'
const OPERATION_ID = new RegExp(OPERATION_ID_PATTERN)

export interface OperationKeys {
  current: string
  previous: string
  opId: string
  /** How long the current bucket's hash lives after its first write. */
  ttlMs: number
}

/** An operation id for a write given none: 96 random bits. */
export function randomOperationId (): string {
  return randomBytes(12).toString('base64url')
}

export function operationKeys (keys: KeyBuilder, guildId: string, windowMs: number, opId?: string): OperationKeys {
  if (opId !== undefined && !OPERATION_ID.test(opId)) {
    throw new InvalidParameterError('opId must be 1 to 64 characters of A-Z a-z 0-9 . _ : -')
  }
  const bucket = Math.floor(Date.now() / windowMs)
  return {
    current: keys.operations(guildId, bucket),
    previous: keys.operations(guildId, bucket - 1),
    opId: opId ?? randomOperationId(),
    ttlMs: 2 * windowMs + 60_000
  }
}
