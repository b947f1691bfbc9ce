--[[
  Many XP awards to one server in one call, each exactly as award-xp-16.lua applies one
  (includes/award.lua: its multiplier, its period boards, the season's and the day's), in order.
  The call is one operation (its id remembered with its whole reply, so a resent call is applied
  once); an award may also carry an operation id of its own (a Discord message id, say),
  remembered with its reply as award-xp remembers one, so it is applied once across calls too.
  The aggregates and the data version move once for the call; each award appends the events it
  causes (includes/events.lua).

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

  ARGV[1] the highest XP a member may hold
  ARGV[2] how long a bucket's hash lives, ms
  ARGV[3] ARGV[4] the window [from, until), Unix ms, in which the week's, the month's and the
          day's keys (KEYS[8], KEYS[9], KEYS[13], KEYS[14]) are current
  ARGV[5] ARGV[6] when the week's and the month's boards expire, Unix ms
  ARGV[7] the call's operation id
  ARGV[8] the settings' epoch the caller computed with
  ARGV[9] the server's multiplier at that epoch, in hundredths
  ARGV[10] when the current season ends, Unix ms, or '' (never by itself)
  ARGV[11] the day's label (YYYY-MM-DD)
  ARGV[12] when the day's keys expire, Unix ms
  then 6 per award i (from 0), at ARGV 13 + 6i to 18 + 6i: board member, award (a positive
          integer), username ('' to leave it as it is), its own operation id or '', display
          name and avatar URL ('' to leave each as it is, "\31" to clear it: includes/profile.lua)

  Returns { status_1, xp_1, gained_1, status_2, xp_2, gained_2, ... }: for each award in order
  its status (1 awarded, -1 over the XP limit: that award changed nothing), XP after it and gain;
  an award whose own operation was applied before gives that first reply, its status marked as
  a replay (2 awarded before, -3 over the XP limit before); or, with nothing changed,
  { -2, now_ms } when Redis's clock is outside the window, { -3, epoch } when the settings'
  epoch moved, { -4, now_ms } when the current season is due to end (award-xp-16.lua says what
  the caller does; a reply of two elements is one of these). A call already applied returns its
  first reply and changes nothing.
]]
--- @include "award"
--- @include "version"

local done = replay(KEYS[6], KEYS[7], ARGV[7])
if done then return done end

local now, refusal = calendar_check(KEYS[4], ARGV[8], ARGV[3], ARGV[4], ARGV[10])
if refusal then return refusal end

local k = { board = KEYS[1], members = KEYS[2], settings = KEYS[4], hidden = KEYS[16], week = KEYS[8], month = KEYS[9], season = KEYS[12] }
local events = events_context(KEYS[10], KEYS[11])
local s = { hundredths = tonumber(ARGV[9]), max_xp = tonumber(ARGV[1]), week_expire_at = ARGV[5], month_expire_at = ARGV[6], events = events,
            day = { day = KEYS[13], day_start = KEYS[14], hist = KEYS[15], label = ARGV[11], expire_at = ARGV[12], now = now } }
-- An award's first status -> the same, replayed (src/redis/script-status.ts names them).
local REPLAYED = { [AWARDED] = 2, [OVER_XP_LIMIT] = -3 }
local deltas = new_deltas()
local replies = {}
local any = false
for i = 13, #ARGV, 6 do
  local op = ARGV[i + 3]
  local reply, changed = op ~= '' and replay(KEYS[6], KEYS[7], op), false
  local status
  if reply then
    status = REPLAYED[reply[1]] or reply[1]
  else
    reply, changed = award_one(k, { member = ARGV[i], award = ARGV[i + 1], username = ARGV[i + 2], display = ARGV[i + 4], avatar = ARGV[i + 5] }, s, deltas)
    if op ~= '' then remember(KEYS[6], op, ARGV[2], reply) end
    status = reply[1]
  end
  replies[#replies + 1] = status
  replies[#replies + 1] = reply[2]
  replies[#replies + 1] = reply[3]
  any = any or changed
end
if any then
  apply_deltas(KEYS[3], deltas)
  bump_version(KEYS[5])
  events_done(events)
end
return remember(KEYS[6], ARGV[7], ARGV[2], replies)
