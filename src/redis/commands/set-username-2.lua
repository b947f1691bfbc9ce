--[[
  Records a member's display name; only for a member that exists.

  KEYS[1] board  ZSET board member -> xp
  KEYS[2] names  HASH user_id -> username

  ARGV[1] board member
  ARGV[2] user_id
  ARGV[3] username

  Returns 1 when recorded, 0 when the user is not a member (nothing changed).
]]
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
