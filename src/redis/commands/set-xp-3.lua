--[[
  Sets a member's XP outright (an administrative act: no multiplier), creating the member if needed.

  KEYS[1] board   ZSET board member -> xp
  KEYS[2] names   HASH user_id -> username
  KEYS[3] stats   HASH aggregates

  ARGV[1] board member
  ARGV[2] user_id
  ARGV[3] xp, an integer from 0 to the XP limit (checked by the caller)
  ARGV[4] username, or '' to leave it as it is

  Returns the member's previous XP (0 for a new member).
]]
--- @include "aggregates"

local old_xp = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '0')
local new_xp = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], int(new_xp), ARGV[1])
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
end
apply_xp_change(KEYS[3], old_xp, new_xp)
return old_xp
