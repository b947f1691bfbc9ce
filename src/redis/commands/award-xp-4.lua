--[[
  Adds floor(award * multiplier) XP to a member, creating the member if needed.

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] names     HASH user_id -> username
  KEYS[3] stats     HASH aggregates
  KEYS[4] settings  HASH curve, multiplier_hundredths

  ARGV[1] board member (complemented, zero-padded user_id)
  ARGV[2] user_id
  ARGV[3] award, a positive integer
  ARGV[4] username, or '' to leave it as it is
  ARGV[5] the highest XP a member may hold

  Returns { 1, new_xp, gained } on success,
          { -1, old_xp, gained } when the award would pass the XP limit (nothing changed).
]]
--- @include "aggregates"

local hundredths = tonumber(redis.call('HGET', KEYS[4], 'multiplier_hundredths') or '100')
local product = tonumber(ARGV[3]) * hundredths -- exact: both are integers well below 2^53
local gained = (product - product % 100) / 100
local old_xp = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '0')
local new_xp = old_xp + gained
if new_xp > tonumber(ARGV[5]) then
  return { -1, old_xp, gained }
end

redis.call('ZADD', KEYS[1], int(new_xp), ARGV[1])
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
end
apply_xp_change(KEYS[3], old_xp, new_xp)
return { 1, new_xp, gained }
