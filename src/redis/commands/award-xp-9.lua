--[[
  Adds floor(award * multiplier) XP to a member, creating the member if needed, and counts the
  gain into the current week's and month's period boards (includes/periods.lua).

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] members   HASH board member -> record (see includes/records.lua)
  KEYS[3] stats     HASH aggregates
  KEYS[4] settings  HASH curve, multiplier_hundredths
  KEYS[5] version   STRING the server's data version
  KEYS[6] ops       HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[7] ops_prev  HASH the same, the previous bucket
  KEYS[8] week      ZSET board member -> xp gained in the current ISO week
  KEYS[9] month     ZSET board member -> xp gained in the current UTC month

  ARGV[1] board member (complemented, zero-padded user_id)
  ARGV[2] award, a positive integer
  ARGV[3] username, or '' to leave it as it is
  ARGV[4] the highest XP a member may hold
  ARGV[5] operation id
  ARGV[6] how long a bucket's hash lives, ms
  ARGV[7] ARGV[8] the window [from, until), Unix ms, in which KEYS[8] and KEYS[9] are current
  ARGV[9] ARGV[10] when the week's and the month's boards expire, Unix ms

  Returns { 1, new_xp, gained } on success,
          { -1, old_xp, gained } when the award would pass the XP limit (nothing changed),
          { -2, now_ms } when Redis's clock is outside the window (nothing changed, nothing
                        remembered: the caller retries with the periods of now_ms);
  an operation already applied returns its first reply and changes nothing.
]]
--- @include "aggregates"
--- @include "records"
--- @include "version"
--- @include "operations"
--- @include "periods"

-- Statuses, as src/redis/script-status.ts names them.
local AWARDED, OVER_XP_LIMIT = 1, -1

local done = replay(KEYS[6], KEYS[7], ARGV[5])
if done then return done end

local now, current = period_clock(ARGV[7], ARGV[8])
if not current then return { OUTSIDE_PERIOD_WINDOW, now } end

local hundredths = tonumber(redis.call('HGET', KEYS[4], 'multiplier_hundredths') or '100')
local product = tonumber(ARGV[2]) * hundredths -- exact: both are integers well below 2^53
local gained = (product - product % 100) / 100
local old_xp = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '0')
local new_xp = old_xp + gained
if new_xp > tonumber(ARGV[4]) then
  return remember(KEYS[6], ARGV[5], ARGV[6], { OVER_XP_LIMIT, old_xp, gained })
end

redis.call('ZADD', KEYS[1], int(new_xp), ARGV[1])
if ARGV[3] ~= '' then set_name(KEYS[2], ARGV[1], ARGV[3]) end
apply_xp_change(KEYS[3], old_xp, new_xp)
if gained > 0 then
  count_in_period(KEYS[8], ARGV[1], gained, ARGV[9])
  count_in_period(KEYS[9], ARGV[1], gained, ARGV[10])
end
bump_version(KEYS[5])
return remember(KEYS[6], ARGV[5], ARGV[6], { AWARDED, new_xp, gained })
