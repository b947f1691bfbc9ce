// The retry schedule of failed webhook deliveries (src/webhooks/retry-schedule.ts) as a pure
// function, with its real defaults: exponential from 5 s, capped at an hour, for 24 h.
import t from 'tap'
import { DEFAULT_RETRY_SCHEDULE, givenUp, retryDelayMs } from '../src/webhooks/retry-schedule.js'

const S = DEFAULT_RETRY_SCHEDULE

t.test('the delay doubles with each failure in a row from 5 s, and stays at an hour', async (t) => {
  const delays = Array.from({ length: 14 }, (_, i) => retryDelayMs(S, i + 1, 0))
  t.same(delays, [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600, 3600, 3600].map((s) => s * 1000))
  t.equal(retryDelayMs(S, 10_000, 0), 3_600_000, 'no overflow for a very long run of failures')
})

t.test('jitter takes up to a fifth off, never adds', async (t) => {
  for (const failures of [1, 4, 12]) {
    const full = retryDelayMs(S, failures, 0)
    t.equal(retryDelayMs(S, failures, 0.999999), Math.round(full * (1 - 0.999999 / 5)))
    for (let i = 0; i < 100; i++) {
      const d = retryDelayMs(S, failures)
      t.ok(d <= full && d >= 0.8 * full, `${d} within [0.8, 1] × ${full}`)
    }
  }
})

t.test('an event is tried for 24 h after its creation; with the real schedule that is about 30 attempts', async (t) => {
  t.equal(givenUp(S, 0, 24 * 3_600_000 - 1), false)
  t.equal(givenUp(S, 0, 24 * 3_600_000), true)
  let at = 0
  let attempts = 1
  while (true) {
    at += retryDelayMs(S, attempts, 0)
    if (givenUp(S, 0, at)) break
    attempts++
  }
  t.equal(attempts, 33, 'the first attempt, then 32 retries (10 growing ones over 85 min, then hourly) before 24 h pass')
})

t.test('a shorter schedule (tests, WEBHOOK_RETRY_*_MS) keeps the shape', async (t) => {
  t.same([1, 2, 3, 4, 5].map((n) => retryDelayMs({ firstMs: 20, maxMs: 100, forMs: 1000 }, n, 0)), [20, 40, 80, 100, 100])
})
