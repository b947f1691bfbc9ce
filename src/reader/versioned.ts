/** A read with the server's data version it was made at ("0": the server has never been written). */
export interface Versioned<T> {
  version: string
  /** Redis's clock at the read, Unix ms, where the result depends on the day. */
  nowMs?: number
  value: T
}
