--[[
  Removes a member and all its data, from every period board too, and forgets whether the user
  was hidden (includes/visibility.lua).

  KEYS[1] board      ZSET board member -> xp
  KEYS[2] members    HASH board member -> record
  KEYS[3] stats      HASH aggregates
  KEYS[4] version    STRING the server's data version
  KEYS[5] ops        HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[6] ops_prev   HASH the same, the previous bucket
  KEYS[7] week       ZSET the current ISO week's period board
  KEYS[8] last_week  ZSET the previous ISO week's
  KEYS[9] month      ZSET the current UTC month's
  KEYS[10] last_month ZSET the previous UTC month's
  KEYS[11] hidden    HASH board member -> why the user is hidden

  ARGV[1] board member
  ARGV[2] operation id
  ARGV[3] how long a bucket's hash lives, ms
  ARGV[4] ARGV[5] the window [from, until), Unix ms, in which KEYS[7..10] are the current and
          previous periods (includes/periods.lua)

  Returns { 1 } when removed, { 0 } when the user was not a member, { -2, now_ms } when Redis's
  clock is outside the window (nothing changed, nothing remembered: the caller retries with the
  periods of now_ms); an operation already applied returns its first reply and changes nothing.
]]
--- @include "aggregates"
--- @include "version"
--- @include "operations"
--- @include "periods"
--- @include "visibility"

local done = replay(KEYS[5], KEYS[6], ARGV[2])
if done then return done end

local now, current = period_clock(ARGV[4], ARGV[5])
if not current then return { OUTSIDE_PERIOD_WINDOW, now } end

local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then
  return remember(KEYS[5], ARGV[2], ARGV[3], { 0 })
end
local xp, hidden = decode_score(score)
if not hidden then apply_xp_change(KEYS[3], xp, 0) end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[11], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
for i = 7, 10 do redis.call('ZREM', KEYS[i], ARGV[1]) end
bump_version(KEYS[4])
return remember(KEYS[5], ARGV[2], ARGV[3], { 1 })
