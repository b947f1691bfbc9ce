--[[
  Many XP awards to one server in one call, each exactly as award-xp-10.lua applies one
  (includes/award.lua: its multiplier, its period boards), in order. The call is one operation
  (its id remembered with its whole reply, so a resent call is applied once); an award may also
  carry an operation id of its own (a Discord message id, say), remembered with its reply as
  award-xp remembers one, so it is applied once across calls too. The aggregates and the data
  version move once for the call.

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] members   HASH board member -> record (see includes/records.lua)
  KEYS[3] stats     HASH aggregates
  KEYS[4] settings  HASH curve, multiplier_hundredths
  KEYS[5] version   STRING the server's data version
  KEYS[6] ops       HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[7] ops_prev  HASH the same, the previous bucket
  KEYS[8] week      ZSET board member -> xp gained in the current ISO week
  KEYS[9] month     ZSET board member -> xp gained in the current UTC month
  KEYS[10] hidden   HASH board member -> why the user is hidden (includes/visibility.lua)

  ARGV[1] the highest XP a member may hold
  ARGV[2] how long a bucket's hash lives, ms
  ARGV[3] ARGV[4] the window [from, until), Unix ms, in which KEYS[8] and KEYS[9] are current
  ARGV[5] ARGV[6] when the week's and the month's boards expire, Unix ms
  ARGV[7] the call's operation id
  then 6 per award i (from 0), at ARGV 8 + 6i to 13 + 6i: board member, award (a positive integer), username ('' to
          leave it as it is), its own operation id or '', display name and avatar URL ('' to leave
          each as it is, "\31" to clear it: includes/profile.lua)

  Returns { status_1, xp_1, gained_1, status_2, xp_2, gained_2, ... }: for each award in order
  its status (1 awarded, -1 over the XP limit: that award changed nothing), XP after it and gain;
  an award whose own operation was applied before gives that first reply, its status marked as
  a replay (2 awarded before, -3 over the XP limit before); or { -2, now_ms }
  when Redis's clock is outside the window (nothing changed: the caller retries with the periods
  of now_ms). A call already applied returns its first reply and changes nothing.
]]
--- @include "award"
--- @include "version"

local done = replay(KEYS[6], KEYS[7], ARGV[7])
if done then return done end

local now, current = period_clock(ARGV[3], ARGV[4])
if not current then return { OUTSIDE_PERIOD_WINDOW, now } end

local k = { board = KEYS[1], members = KEYS[2], hidden = KEYS[10], week = KEYS[8], month = KEYS[9] }
local s = { hundredths = multiplier_hundredths(KEYS[4]), max_xp = tonumber(ARGV[1]), week_expire_at = ARGV[5], month_expire_at = ARGV[6] }
-- An award's first status -> the same, replayed (src/redis/script-status.ts names them).
local REPLAYED = { [AWARDED] = 2, [OVER_XP_LIMIT] = -3 }
local deltas = new_deltas()
local replies = {}
local any = false
for i = 8, #ARGV, 6 do
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
end
return remember(KEYS[6], ARGV[7], ARGV[2], replies)
