--[[
  Starts the close of one day of a server (src/history/day-close.ts): takes the closing lease (or
  finds it this caller's already), and clears what an attempt cut short left behind. It notes in
  `fresh` the first history index this close may give (`from`): a member with an index at or above
  it was given it by this close (only a close's ranks step gives them, under the lease).

  KEYS[1] lease       STRING the closing lease (token, with a TTL)
  KEYS[2] hist        HASH the server's history (`closed_through`)
  KEYS[3] snapshot    ZSET the board at the day's end, being built
  KEYS[4] order       ZSET the day's touched members by history index, being built
  KEYS[5] ranks_day   STRING the day's ranks, being built
  KEYS[6] changes_day STRING the day's change records, being built
  KEYS[7] fresh       HASH the change records of the members the close gives their index, being built (`from`)

  ARGV[1] the caller's lease token
  ARGV[2] the lease's length, ms
  ARGV[3] the day (YYYY-MM-DD)

  Returns 1 when the close may go on, 0 when the day is closed already, -6 when another holds the lease.
]]
--- @include "history"

local ALREADY = 0
local closed = redis.call('HGET', KEYS[2], 'closed_through')
if closed and closed >= ARGV[3] then return ALREADY end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and not hold_lease(KEYS[1], ARGV[1], ARGV[2]) then return LEASE_LOST end
redis.call('UNLINK', KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7])
redis.call('HSET', KEYS[7], 'from', redis.call('HGET', KEYS[2], 'next_index') or '0')
return CLOSE_DONE
