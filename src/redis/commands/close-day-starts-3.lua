--[[
  Close, the snapshot of the day's end: a chunk of a later day's day-start hash (the day after,
  or a later one). Each member in it held that XP at the day's end (its value before its first
  change after it), or was not on the visible board (`-`). Later days are given oldest first, and
  a member keeps its first value (ZADD NX): the earliest later day holds its value at the end.

  KEYS[1] lease     STRING the closing lease
  KEYS[2] day_start HASH board member -> visible xp before its first change in a later day
  KEYS[3] snapshot  ZSET the board at the day's end, being built

  ARGV[1] the caller's lease token
  ARGV[2] the lease's length, ms
  ARGV[3] the HSCAN cursor ('0' to start)
  ARGV[4] how many fields to read

  Returns { 1, next cursor ('0': done) }, or { -6 } when the lease was lost.
]]
--- @include "history"

if not hold_lease(KEYS[1], ARGV[1], ARGV[2]) then return { LEASE_LOST } end
local scan = redis.call('HSCAN', KEYS[2], ARGV[3], 'COUNT', ARGV[4])
local fields, pairs, n = scan[2], {}, 0
for i = 1, #fields, 2 do
  pairs[n + 1] = start_score(fields[i + 1])
  pairs[n + 2] = fields[i]
  n = n + 2
end
add_new(KEYS[3], pairs, n)
return { CLOSE_DONE, scan[1] }
