--[[
  Removes a member and all its data (the user left the server).

  KEYS[1] board    ZSET board member -> xp
  KEYS[2] members  HASH board member -> record
  KEYS[3] stats    HASH aggregates
  KEYS[4] version  STRING the server's data version
  KEYS[5] ops      HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[6] ops_prev HASH the same, the previous bucket

  ARGV[1] board member
  ARGV[2] operation id
  ARGV[3] how long a bucket's hash lives, ms

  Returns 1 when removed, 0 when the user was not a member; an operation already applied
  returns its first reply and changes nothing.
]]
--- @include "aggregates"
--- @include "version"
--- @include "operations"

local done = replay(KEYS[5], KEYS[6], ARGV[2])
if done then return done[1] end

local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then
  return remember(KEYS[5], ARGV[2], ARGV[3], { 0 })[1]
end
apply_xp_change(KEYS[3], tonumber(score), 0)
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
bump_version(KEYS[4])
return remember(KEYS[5], ARGV[2], ARGV[3], { 1 })[1]
