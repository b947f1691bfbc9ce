--[[
  Close, the change records of a day whose every record is one the close gave its index (a
  server's first close): the closer has read them from `fresh` and written them whole, with one
  SET, to a staging key of its own (named by its lease token, with a TTL, in case it dies before
  this call). Renamed into place here, under the lease: grown a chunk at a time in a script call,
  a string of megabytes is copied whole each time Redis moves it to grow it (milliseconds in one
  call), where a SET's value was read from the socket beside the calls, as it came.

  KEYS[1] lease       STRING the closing lease
  KEYS[2] staging     STRING the records, as the closer wrote them
  KEYS[3] changes_day STRING the day's change records

  ARGV[1] the caller's lease token
  ARGV[2] the lease's length, ms

  Returns { 1 }, or { -6 } when the lease was lost (the staging key then expires).
]]
--- @include "history"

if not hold_lease(KEYS[1], ARGV[1], ARGV[2]) then return { LEASE_LOST } end
redis.call('RENAME', KEYS[2], KEYS[3])
redis.call('PERSIST', KEYS[3])
return { CLOSE_DONE }
