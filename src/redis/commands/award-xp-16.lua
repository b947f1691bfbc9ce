--[[
  Adds floor(award * multiplier) XP to a member, creating the member if needed, counts the gain
  into the current week's and month's period boards (includes/periods.lua), the current season's
  board and the server's day (includes/calendar-counting.lua), and appends the events it causes
  (includes/events.lua). The award itself is includes/award.lua's, which award-batch-16.lua
  applies to many.

  KEYS[1] board      ZSET board member -> xp
  KEYS[2] members    HASH board member -> record (see includes/records.lua)
  KEYS[3] stats      HASH aggregates
  KEYS[4] settings   HASH the settings, and their `epoch`
  KEYS[5] version    STRING the server's data version
  KEYS[6] ops        HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[7] ops_prev   HASH the same, the previous bucket
  KEYS[8] week       ZSET board member -> xp gained in the current ISO week
  KEYS[9] month      ZSET board member -> xp gained in the current UTC month
  KEYS[10] event_subscriptions HASH who listens to the server's events (includes/events.lua)
  KEYS[11] events    STREAM the server's events
  KEYS[12] season    ZSET board member -> xp gained in the current season
  KEYS[13] day       ZSET board member -> xp gained in the server's current day
  KEYS[14] day_start HASH board member -> visible xp before its first change in the day
  KEYS[15] hist      HASH the server's history (`latest_day`, `since`)
  KEYS[16] hidden    HASH board member -> why the user is hidden (includes/visibility.lua)

  ARGV[1] board member (complemented, zero-padded user_id)
  ARGV[2] award, a positive integer
  ARGV[3] username, or '' to leave it as it is
  ARGV[4] the highest XP a member may hold
  ARGV[5] operation id
  ARGV[6] how long a bucket's hash lives, ms
  ARGV[7] ARGV[8] the window [from, until), Unix ms, in which the week's, the month's and the
          day's keys (KEYS[8], KEYS[9], KEYS[13], KEYS[14]) are current
  ARGV[9] ARGV[10] when the week's and the month's boards expire, Unix ms
  ARGV[11] the settings' epoch the caller computed with
  ARGV[12] the server's multiplier at that epoch, in hundredths
  ARGV[13] when the current season ends, Unix ms, or '' (never by itself)
  ARGV[14] the day's label (YYYY-MM-DD)
  ARGV[15] when the day's keys expire, Unix ms
  ARGV[16] display name, '' to leave it as it is, or "\31" to clear it (includes/profile.lua)
  ARGV[17] avatar URL, the same way

  Returns { 1, new_xp, gained } on success,
          { -1, old_xp, gained } when the award would pass the XP limit (nothing changed),
          { -2, now_ms } when Redis's clock is outside the window,
          { -3, epoch } when the settings' epoch moved (the settings changed, or a season ended),
          { -4, now_ms } when the current season is due to end:
  for the last three nothing changed and nothing is remembered: the caller learns the clock,
  reads the settings again or ends the season (src/writer/calendar-writes.ts), and sends again.
  An operation already applied returns its first reply and changes nothing.
]]
--- @include "award"
--- @include "version"

local done = replay(KEYS[6], KEYS[7], ARGV[5])
if done then return done end

local now, refusal = calendar_check(KEYS[4], ARGV[11], ARGV[7], ARGV[8], ARGV[13])
if refusal then return refusal end

local deltas = new_deltas()
local events = events_context(KEYS[10], KEYS[11])
local reply, changed = award_one(
  { board = KEYS[1], members = KEYS[2], settings = KEYS[4], hidden = KEYS[16], week = KEYS[8], month = KEYS[9], season = KEYS[12] },
  { member = ARGV[1], award = ARGV[2], username = ARGV[3], display = ARGV[16], avatar = ARGV[17] },
  { hundredths = tonumber(ARGV[12]), max_xp = tonumber(ARGV[4]), week_expire_at = ARGV[9], month_expire_at = ARGV[10], events = events,
    day = { day = KEYS[13], day_start = KEYS[14], hist = KEYS[15], label = ARGV[14], expire_at = ARGV[15], now = now } },
  deltas)
if changed then
  apply_deltas(KEYS[3], deltas)
  bump_version(KEYS[5])
  events_done(events)
end
return remember(KEYS[6], ARGV[5], ARGV[6], reply)
