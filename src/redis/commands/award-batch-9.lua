--[[
  Many XP awards to one server in one call, each exactly as award-xp-9.lua applies one
  (includes/award.lua: its multiplier, its operation id, its period boards), in order. The
  aggregates and the data version move once for the call.

  KEYS[1..9] as award-xp-9.lua: board, members, stats, settings, version, ops, ops_prev, week, month

  ARGV[1] the highest XP a member may hold
  ARGV[2] how long a bucket's hash lives, ms
  ARGV[3] ARGV[4] the window [from, until), Unix ms, in which KEYS[8] and KEYS[9] are current
  ARGV[5] ARGV[6] when the week's and the month's boards expire, Unix ms
  ARGV[7 + 4i .. 10 + 4i] award i: board member, award (a positive integer), username ('' to
          leave it as it is), operation id

  Returns { 1, xp_1, gained_1, status_2, xp_2, gained_2, ... }: for each award in order its
  status (1 awarded, -1 over the XP limit: that award changed nothing), XP after it and gain
  (an operation applied before gives its first reply); or { -2, now_ms } when Redis's clock is
  outside the window (nothing changed: the caller retries with the periods of now_ms).
]]
--- @include "award"
--- @include "version"

local now, current = period_clock(ARGV[3], ARGV[4])
if not current then return { OUTSIDE_PERIOD_WINDOW, now } end

local k = { board = KEYS[1], members = KEYS[2], ops = KEYS[6], ops_prev = KEYS[7], week = KEYS[8], month = KEYS[9] }
local s = { hundredths = multiplier_hundredths(KEYS[4]), max_xp = tonumber(ARGV[1]), ops_ttl_ms = ARGV[2],
  week_expire_at = ARGV[5], month_expire_at = ARGV[6] }
local deltas = new_deltas()
local replies = {}
local any = false
for i = 7, #ARGV, 4 do
  local reply, changed = replay(k.ops, k.ops_prev, ARGV[i + 3]), false
  if not reply then
    reply, changed = award_one(k, { member = ARGV[i], award = ARGV[i + 1], username = ARGV[i + 2], op_id = ARGV[i + 3] }, s, deltas)
  end
  replies[#replies + 1] = reply[1]
  replies[#replies + 1] = reply[2]
  replies[#replies + 1] = reply[3]
  any = any or changed
end
if any then
  apply_deltas(KEYS[3], deltas)
  bump_version(KEYS[5])
end
return replies
