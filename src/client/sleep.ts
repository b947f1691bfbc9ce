// A wait that an AbortSignal ends early (rejecting with the signal's reason): retries and
// reconnects wait with it, so aborting a call also ends its wait.

export async function sleep (ms: number, signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted()
  await new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
