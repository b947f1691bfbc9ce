--[[
  Removes a member and all its data (the user left the server).

  KEYS[1] board    ZSET board member -> xp
  KEYS[2] names    HASH user_id -> username
  KEYS[3] streaks  HASH user_id -> daily streak
  KEYS[4] claims   HASH user_id -> last claim (ms)
  KEYS[5] stats    HASH aggregates

  ARGV[1] board member
  ARGV[2] user_id

  Returns 1 when removed, 0 when the user was not a member.
]]
--- @include "aggregates"

local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then
  return 0
end
apply_xp_change(KEYS[5], tonumber(score), 0)
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[2])
redis.call('HDEL', KEYS[4], ARGV[2])
return 1
