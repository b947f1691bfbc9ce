// A time window (a rate limit's, the failed-authentication limit's) is a bound on the machine's
// speed: the requests a test counts in one window must all land in it. So a window is not a
// length that suited a fast machine on the day: a test runs its scenario and measures the time its
// requests took (its work, leaving out its deliberate waits); when that work did not fit in a
// quarter of the window, the scenario runs again, with fresh keys, in a window four times the
// work's length. A quick machine keeps the short window; a slow or busy one gets the room it needs.

export interface Trial<T> {
  /** How long the scenario's requests took, its deliberate waits left out (ms). */
  workMs: number
  /** What the scenario saw, for the test to check once the work fitted. */
  seen: T
}

/** The scenario run in `firstMs`, then in longer windows until its work fits in a quarter of one. */
export async function inFittingWindow<T> (firstMs: number, scenario: (windowMs: number) => Promise<Trial<T>>): Promise<{ windowMs: number, seen: T }> {
  for (let windowMs = firstMs; ;) {
    const { workMs, seen } = await scenario(windowMs)
    if (workMs * 4 <= windowMs) return { windowMs, seen }
    windowMs = Math.max(windowMs * 2, Math.ceil(workMs * 4 / 1000) * 1000)
  }
}

/** Runs `work` and adds its duration to `clock.ms`: the part of a scenario that counts as work. */
export async function timed<T> (clock: { ms: number }, work: () => Promise<T>): Promise<T> {
  const started = performance.now()
  try {
    return await work()
  } finally {
    clock.ms += performance.now() - started
  }
}
