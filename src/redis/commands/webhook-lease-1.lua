--[[
  The lease on delivering a server's events: one instance at a time delivers them.

  KEYS[1] lease  STRING the holder's id, with a TTL

  ARGV[1] the instance's id
  ARGV[2] the lease's length, ms
  ARGV[3] 'take' (taken when free, extended when held), 'renew' (extended when held), or
          'release' (dropped when held)

  Returns { 1, ms left } when the instance holds it after the call, { 0, ms left to the other
  holder (0 when none) } when it does not.
]]

local holder = redis.call('GET', KEYS[1])
if ARGV[3] == 'release' then
  if holder == ARGV[1] then redis.call('DEL', KEYS[1]) end
  return { 0, 0 }
end
if holder == ARGV[1] or (holder == false and ARGV[3] == 'take') then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return { 1, tonumber(ARGV[2]) }
end
if holder == false then return { 0, 0 } end
return { 0, redis.call('PTTL', KEYS[1]) }
