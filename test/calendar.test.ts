// A server's calendar (src/calendar/): its days, weeks, months and quarters in its time zone,
// across daylight-saving changes (a 23-hour day, a day whose midnight does not exist), and the one
// window in which every boundary a write counts by holds.
import t from 'tap'
import { localDate, shiftDay, startOfLocalDate, zonedDay, zonedMonths, zonedWeek } from '../src/calendar/zoned.js'
import { serverCalendar } from '../src/calendar/server-calendar.js'
import { DEFAULT_SETTINGS } from '../src/settings/settings.js'

const HOUR = 3_600_000
const at = (iso: string): number => Date.parse(iso)

/** The first instant (to the minute) whose local date is `label`, found by walking a minute at a time: the oracle. */
function walkedStart (label: string, timeZone: string): number {
  const [year = 0, month = 1, day = 1] = label.split('-').map(Number)
  const target = Date.UTC(year, month - 1, day)
  for (let ms = target - 15 * HOUR; ms < target + 15 * HOUR; ms += 60_000) {
    const d = localDate(ms, timeZone)
    if (Date.UTC(d.year, d.month - 1, d.day) >= target) return ms
  }
  throw new Error('not found')
}

t.test('a day starts at its first local instant: 00:00, or later where a change skips midnight', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['Europe/Paris', '2026-03-29', '2026-03-28T23:00:00Z'], // a 23-hour day: clocks go forward at 02:00
    ['Europe/Paris', '2026-10-25', '2026-10-24T22:00:00Z'], // a 25-hour day
    ['America/Santiago', '2026-09-06', '2026-09-06T04:00:00Z'], // 00:00 does not exist: the day starts at 01:00
    ['America/Havana', '2026-03-08', '2026-03-08T05:00:00Z'], // the same at 00:00 in Havana
    ['Asia/Tehran', '2026-03-21', '2026-03-20T20:30:00Z'], // a half-hour offset
    ['Asia/Kathmandu', '2026-01-01', '2025-12-31T18:15:00Z'],
    ['Pacific/Kiritimati', '2026-07-01', '2026-06-30T10:00:00Z'], // UTC+14
    ['Pacific/Pago_Pago', '2026-07-01', '2026-07-01T11:00:00Z'], // UTC-11
    ['UTC', '2026-11-26', '2026-11-26T00:00:00Z']
  ]
  for (const [zone, label, expected] of cases) {
    const [year = 0, month = 1, day = 1] = label.split('-').map(Number)
    t.equal(new Date(startOfLocalDate({ year, month, day }, zone)).toISOString(), new Date(at(expected)).toISOString(), `${zone} ${label}`)
    t.equal(startOfLocalDate({ year, month, day }, zone), walkedStart(label, zone), `${zone} ${label}: as a minute-by-minute walk finds it`)
  }
})

t.test('the day holding a time, its length across a daylight-saving change, and shifting labels', async (t) => {
  const spring = zonedDay(at('2026-03-29T12:00:00Z'), 'Europe/Paris')
  t.same(spring, { label: '2026-03-29', start: at('2026-03-28T23:00:00Z'), end: at('2026-03-29T22:00:00Z') })
  t.equal(spring.end - spring.start, 23 * HOUR)
  const autumn = zonedDay(at('2026-10-25T12:00:00Z'), 'Europe/Paris')
  t.equal(autumn.end - autumn.start, 25 * HOUR)
  t.equal(zonedDay(at('2026-03-28T22:59:59.999Z'), 'Europe/Paris').label, '2026-03-28', 'the last instant of the day before')
  t.equal(zonedDay(at('2026-03-28T23:00:00Z'), 'Europe/Paris').label, '2026-03-29')
  t.equal(shiftDay('2026-03-01', -1), '2026-02-28')
  t.equal(shiftDay('2024-02-28', 1), '2024-02-29')
  t.equal(shiftDay('2026-12-31', 1), '2027-01-01')
})

t.test('weeks from Monday 00:00, months and quarters in the zone', async (t) => {
  // Sunday 2026-11-22 23:30 in New York is 2026-11-23T04:30Z: still the week of Monday the 16th.
  t.same(zonedWeek(at('2026-11-23T04:30:00Z'), 'America/New_York'), { label: '2026-11-16', start: at('2026-11-16T05:00:00Z'), end: at('2026-11-23T05:00:00Z') })
  t.equal(zonedWeek(at('2026-11-23T05:00:00Z'), 'America/New_York').label, '2026-11-23', 'Monday 00:00 local opens the next')
  // The week of a daylight-saving change in Paris is 167 hours long.
  const dst = zonedWeek(at('2026-03-25T12:00:00Z'), 'Europe/Paris')
  t.same(dst, { label: '2026-03-23', start: at('2026-03-22T23:00:00Z'), end: at('2026-03-29T22:00:00Z') })
  t.same(zonedMonths(at('2026-12-31T23:30:00Z'), 'Asia/Tokyo', 1), { label: '2027-01-01', start: at('2026-12-31T15:00:00Z'), end: at('2027-01-31T15:00:00Z') })
  t.same(zonedMonths(at('2026-05-10T00:00:00Z'), 'UTC', 3), { label: '2026-04-01', start: at('2026-04-01T00:00:00Z'), end: at('2026-07-01T00:00:00Z') })
  t.same(zonedMonths(at('2026-11-26T00:00:00Z'), 'UTC', 3), { label: '2026-10-01', start: at('2026-10-01T00:00:00Z'), end: at('2027-01-01T00:00:00Z') })
})

t.test("the window holds every boundary a write counts by: the UTC week and month, the server's day, its season, its boosts", async (t) => {
  const now = at('2026-11-26T10:00:00Z') // Thursday
  const plain = serverCalendar(DEFAULT_SETTINGS, now)
  t.same([plain.from, plain.until], [at('2026-11-26T00:00:00Z'), at('2026-11-27T00:00:00Z')], 'UTC: the day')
  t.equal(plain.season, null)

  const paris = serverCalendar({ ...DEFAULT_SETTINGS, season: { every: 'week', timezone: 'Europe/Paris' } }, now)
  t.same([paris.from, paris.until], [at('2026-11-25T23:00:00Z'), at('2026-11-26T23:00:00Z')], 'the Paris day, inside its week and the UTC week and month')
  t.same(paris.season, { label: '2026-11-23', start: at('2026-11-22T23:00:00Z'), end: at('2026-11-29T23:00:00Z') })
  t.equal(paris.day.label, '2026-11-26')

  const boosts = [
    { hundredths: 200, startsAt: at('2026-11-26T08:00:00Z'), endsAt: at('2026-11-26T12:00:00Z') }, // on now
    { hundredths: 150, startsAt: at('2026-11-26T14:00:00Z'), endsAt: at('2026-11-27T00:00:00Z') }, // later today
    { hundredths: 300, startsAt: at('2026-11-25T00:00:00Z'), endsAt: at('2026-11-26T09:00:00Z') } // over
  ]
  const boosted = serverCalendar({ ...DEFAULT_SETTINGS, boosts }, now)
  t.same(boosted.boosts.map((b) => b.hundredths), [200], 'the boost on now')
  t.same([boosted.from, boosted.until], [at('2026-11-26T09:00:00Z'), at('2026-11-26T12:00:00Z')], 'narrowed to where the same boosts hold')
})
