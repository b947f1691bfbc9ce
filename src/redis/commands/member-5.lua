--[[
  One member's record, read consistently with its rank and the server's curve.

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] names     HASH user_id -> username
  KEYS[3] streaks   HASH user_id -> daily streak
  KEYS[4] claims    HASH user_id -> last claim (ms)
  KEYS[5] settings  HASH curve, multiplier_hundredths

  ARGV[1] board member
  ARGV[2] user_id

  Returns false when the user is not a member, else
  { xp, rank (0-based), username|false, streak|false, last_claim|false, curve|false, now_ms }.
]]
--- @include "clock"

local xp = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not xp then return false end
return {
  xp,
  redis.call('ZREVRANK', KEYS[1], ARGV[1]),
  redis.call('HGET', KEYS[2], ARGV[2]),
  redis.call('HGET', KEYS[3], ARGV[2]),
  redis.call('HGET', KEYS[4], ARGV[2]),
  redis.call('HGET', KEYS[5], 'curve'),
  now_ms()
}
