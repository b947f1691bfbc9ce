--[[
  Close, the day's changes: a chunk of the touched members in order of history index, each
  appended as a change record (includes/history.lua: index, visible XP at the day's start, XP
  gained), so that a member's record is found by binary search.

  KEYS[1] lease       STRING the closing lease
  KEYS[2] order       ZSET the touched members by history index
  KEYS[3] day         ZSET board member -> xp gained in the day
  KEYS[4] day_start   HASH board member -> visible xp before its first change in the day
  KEYS[5] changes_day STRING the day's change records, being built

  ARGV[1] the caller's lease token
  ARGV[2] the lease's length, ms
  ARGV[3] the first 0-based position of the chunk in `order`
  ARGV[4] how many

  Returns { 1, records written }, or { -6 } when the lease was lost.
]]
--- @include "history"

if not hold_lease(KEYS[1], ARGV[1], ARGV[2]) then return { LEASE_LOST } end
local first = tonumber(ARGV[3])
local flat = redis.call('ZRANGE', KEYS[2], first, first + tonumber(ARGV[4]) - 1, 'WITHSCORES')
local members, m = {}, 0
for i = 1, #flat, 2 do
  m = m + 1
  members[m] = flat[i]
end
if m == 0 then return { CLOSE_DONE, 0 } end
local starts = redis.call('HMGET', KEYS[4], unpack(members, 1, m))
local gains = redis.call('ZMSCORE', KEYS[3], unpack(members, 1, m))
local packed = {}
for i = 1, m do
  local start = starts[i]
  local start_xp = (start and start ~= '-') and tonumber(start) or NO_XP
  packed[i] = pack_change(tonumber(flat[2 * i]), start_xp, tonumber(gains[i] or '0'))
end
redis.call('APPEND', KEYS[5], table.concat(packed))
return { CLOSE_DONE, m }
