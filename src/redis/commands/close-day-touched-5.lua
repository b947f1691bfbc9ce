--[[
  Close, the day's changes: a chunk of the members the day touched (its day board, final once the
  day ended), put in order of history index for the change records; and the day's activity,
  counted over the members on the visible board at its end.

  KEYS[1] lease    STRING the closing lease
  KEYS[2] day      ZSET board member -> xp gained in the day
  KEYS[3] members  HASH board member -> record
  KEYS[4] snapshot ZSET the board at the day's end
  KEYS[5] order    ZSET the touched members by history index, being built

  ARGV[1] the caller's lease token
  ARGV[2] the lease's length, ms
  ARGV[3] the first 0-based position of the chunk on the day board
  ARGV[4] how many

  Returns { 1, members read, how many of them gained XP, the XP they gained }, or { -6 } when
  the lease was lost.
]]
--- @include "history"

if not hold_lease(KEYS[1], ARGV[1], ARGV[2]) then return { LEASE_LOST } end
local flat, members, m = chunk_at(KEYS[2], tonumber(ARGV[3]), tonumber(ARGV[4]))
if m == 0 then return { CLOSE_DONE, 0, 0, 0 } end
local records = redis.call('HMGET', KEYS[3], unpack(members, 1, m))
local visible = redis.call('ZMSCORE', KEYS[4], unpack(members, 1, m))
local order, n = {}, 0
local active, gained = 0, 0
for i = 1, m do
  local index = records[i] and record_index(records[i])
  if index then
    order[n + 1] = index
    order[n + 2] = members[i]
    n = n + 2
  end
  local xp = tonumber(flat[2 * i])
  if visible[i] and xp > 0 then
    active = active + 1
    gained = gained + xp
  end
end
if n > 0 then redis.call('ZADD', KEYS[5], unpack(order, 1, n)) end
return { CLOSE_DONE, m, active, int(gained) }
