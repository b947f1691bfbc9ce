--[[
  Gives up the closing lease, if it is still the caller's: another instance may close at once.

  KEYS[1] lease STRING the closing lease

  ARGV[1] the caller's lease token

  Returns 1 when released, 0 when it was not the caller's.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
