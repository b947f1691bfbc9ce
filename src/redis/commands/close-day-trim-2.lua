--[[
  Close, the snapshot of the day's end: drops a chunk of the members that were not on the visible
  board at the day's end (kept so far, below every visible score, so that no later chunk added
  them from the board).

  KEYS[1] lease    STRING the closing lease
  KEYS[2] snapshot ZSET the board at the day's end

  ARGV[1] the caller's lease token
  ARGV[2] the lease's length, ms
  ARGV[3] how many to drop at most

  Returns { 1, how many are left to drop }, or { -6 } when the lease was lost.
]]
--- @include "history"

if not hold_lease(KEYS[1], ARGV[1], ARGV[2]) then return { LEASE_LOST } end
local left = redis.call('ZCOUNT', KEYS[2], '-inf', '(0')
local drop = math.min(left, tonumber(ARGV[3]))
if drop > 0 then redis.call('ZREMRANGEBYRANK', KEYS[2], 0, drop - 1) end
return { CLOSE_DONE, left - drop }
