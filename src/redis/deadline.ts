// A deadline for a wait on Redis, counted from when the wait began. ioredis starts a command's
// own timeout only when the command is written, and with auto-pipelining a command issued while
// Redis stalls is written only once the pipeline before it is answered (or timed out): its 503
// would come after twice the timeout, later still for each pipeline queued ahead of it.

/** Rejects with a "Command timed out" error (a 503 timeout, src/redis/errors.ts) once `ms` passed. */
export async function withDeadline<T> (work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new Error(`Command timed out: no answer from Redis within ${ms} ms`)) }, ms)
  })
  work.catch(() => {}) // settled later, after the deadline: nobody is waiting for it any more
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}

/** The command timeout a client was made with (ms), or undefined for none. */
export function commandTimeoutOf (client: { options: object }): number | undefined {
  const options = client.options as { commandTimeout?: number, redisOptions?: { commandTimeout?: number } }
  return options.commandTimeout ?? options.redisOptions?.commandTimeout
}
