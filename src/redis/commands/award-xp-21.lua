--[[
  Adds an award's gain to a member, creating the member if needed, as the server's rules allow
  (includes/rules.lua: cooldown, daily cap), counts it into the current week's and month's period
  boards (includes/periods.lua), the current season's board and the server's day
  (includes/calendar-counting.lua), and appends the events it causes (includes/events.lua). A
  hidden member's award goes to its encoded scores (includes/visibility.lua). The award itself is
  includes/award.lua's, which award-batch-21.lua applies to many.

  KEYS[1] board      ZSET board member -> xp
  KEYS[2] members    HASH board member -> record (see includes/records.lua)
  KEYS[3] stats      HASH aggregates
  KEYS[4] settings   HASH the settings, and their `epoch` (includes/rules.lua reads the rules)
  KEYS[5] version    STRING the server's data version
  KEYS[6] ops        HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[7] ops_prev   HASH the same, the previous bucket
  KEYS[8] week       ZSET board member -> xp gained in the current ISO week
  KEYS[9] month      ZSET board member -> xp gained in the current UTC month
  KEYS[10] event_subscriptions HASH who listens to the server's events (includes/events.lua)
  KEYS[11] events    STREAM the server's events
  KEYS[12] season    ZSET board member -> xp gained in the current season
  KEYS[13] day       ZSET the day's gains as an earlier version kept them (read only, while it exists)
  KEYS[14] day_gains HASH board member -> xp gained in the server's current day (with KEYS[13], the daily cap's count)
  KEYS[15] day_start HASH board member -> visible xp before its first change in the day
  KEYS[16] hist      HASH the server's history (`latest_day`, `since`)
  KEYS[17] cooldowns ZSET board member -> Unix ms of its last award that added XP, as earlier
                     versions kept it (read and written while it exists: includes/cooldowns.lua)
  KEYS[18] hidden    HASH board member -> why the user is hidden (includes/visibility.lua)
  KEYS[19] cooldown_hour HASH board member -> Unix ms of its last award that added XP in the
                     current hour of the window (src/writer/calendar-writes.ts)
  KEYS[20] cooldown_hour_prev HASH the same, the hour before
  KEYS[21] cooldown_hour_old  HASH the same, the hour before that (deleted when the current one begins)

  ARGV[1] board member (complemented, zero-padded user_id)
  ARGV[2] gain, an integer from 0 (the award with its multipliers, src/rules/gain.ts)
  ARGV[3] username, or '' to leave it as it is
  ARGV[4] the highest XP a member may hold
  ARGV[5] operation id
  ARGV[6] how long a bucket's hash lives, ms
  ARGV[7] ARGV[8] the window [from, until), Unix ms, in which the week's, the month's and the
          day's keys (KEYS[8], KEYS[9], KEYS[13] to KEYS[15]) and the cooldowns' hours (KEYS[19]
          to KEYS[21]) are current and the gain was computed
  ARGV[9] ARGV[10] when the week's and the month's boards expire, Unix ms
  ARGV[11] the settings' epoch the gain was computed at
  ARGV[12] when the current season ends, Unix ms, or '' (never by itself)
  ARGV[13] the day's label (YYYY-MM-DD)
  ARGV[14] when the day's keys expire, Unix ms
  ARGV[15] display name, '' to leave it as it is, or "\31" to clear it (includes/profile.lua)
  ARGV[16] avatar URL, the same way

  Returns { status, xp, gained, roles to add, roles to remove } (status 1 or 3 applied; -1, -4,
  -5 not applied, nothing changed: as award-batch-21.lua says; roles as comma-separated ids, ''
  for none); or, with nothing changed and nothing remembered:
          { -2, now_ms } when Redis's clock is outside the window,
          { -3, epoch } when the settings' epoch moved (the settings changed, or a season ended),
          { -4, now_ms } when the current season is due to end:
  the caller learns the clock, reads the settings again or ends the season
  (src/writer/calendar-writes.ts), and sends again. An operation already applied returns its
  first reply and changes nothing.
]]
--- @include "award"
--- @include "version"

local done = replay(KEYS[6], KEYS[7], ARGV[5])
if done then return full_reply(done) end

local rules = load_rules(KEYS[4])
local now, refusal, now_us = calendar_check(KEYS[4], ARGV[11], ARGV[7], ARGV[8], ARGV[12], rules.epoch)
if refusal then return refusal end

local k = { board = KEYS[1], members = KEYS[2], settings = KEYS[4], hidden = KEYS[18], week = KEYS[8], month = KEYS[9], season = KEYS[12],
            cooldowns = cooldown_keys(KEYS[19], KEYS[20], KEYS[21], KEYS[17]) }
local events = events_context(KEYS[10], KEYS[11])
if events then events.curve = rules.curve end
local deltas = new_deltas()
local s = { rules = rules, now = now, max_xp = num(ARGV[4]), events = events,
            day = { legacy = KEYS[13], gains = KEYS[14], day_start = KEYS[15], hist = KEYS[16], label = ARGV[13], expire_at = ARGV[14], now = now } }
local status, xp, gained, add, remove, changed = award_one(k, ARGV[1], ARGV[2], ARGV[3], ARGV[15], ARGV[16], s, deltas)
if changed then
  apply_deltas(KEYS[3], deltas)
  if s.periods_grew then expire_periods(k, ARGV[9], ARGV[10]) end
  expire_cooldowns(rules, k.cooldowns, now)
  bump_version(KEYS[5], now_us)
  events_done(events)
end
remember_json(KEYS[6], ARGV[5], ARGV[6], award_reply_json(status, xp, gained, add, remove))
return { status, xp, gained, add, remove }
