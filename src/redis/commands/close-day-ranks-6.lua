--[[
  Close, the ranks: a chunk of the snapshot in rank order. Each member's rank at the day's end is
  written at its history index (3 bytes, big-endian; 0 is no rank, and so is a rank past 2^24 - 1,
  which does not fit); a member without an index
  is given the next one (its record keeps it). A member whose record is gone (removed since) is
  ranked but has no index to keep a rank at.

  KEYS[1] lease     STRING the closing lease
  KEYS[2] hist      HASH the server's history (`next_index`)
  KEYS[3] snapshot  ZSET the board at the day's end
  KEYS[4] members   HASH board member -> record
  KEYS[5] ranks_day STRING the day's ranks, being built
  KEYS[6] board     ZSET board member -> xp

  ARGV[1] the caller's lease token
  ARGV[2] the lease's length, ms
  ARGV[3] the first 0-based rank of the chunk
  ARGV[4] how many ranks

  Returns { 1, members read, their XP summed, how many have XP }, or { -6 } when the lease was lost.
]]
--- @include "history"

if not hold_lease(KEYS[1], ARGV[1], ARGV[2]) then return { LEASE_LOST } end
local first = tonumber(ARGV[3])
local flat, members, m = chunk_at(KEYS[3], first, tonumber(ARGV[4]), true)
if m == 0 then return { CLOSE_DONE, 0, 0, 0 } end
local records = redis.call('HMGET', KEYS[4], unpack(members, 1, m))
local unrecorded, u = {}, 0
for i = 1, m do
  if not records[i] then
    u = u + 1
    unrecorded[u] = members[i]
  end
end
if u > 0 then
  local on_board = redis.call('ZMSCORE', KEYS[6], unpack(unrecorded, 1, u))
  local j = 0
  for i = 1, m do
    if not records[i] then
      j = j + 1
      if on_board[j] then records[i] = '::' end
    end
  end
end
local bitfield, b = { 'OVERFLOW', 'FAIL' }, 2
local fresh, f = {}, 0
local next_index
local xp_sum, with_xp = 0, 0
for i = 1, m do
  local xp = tonumber(flat[2 * i])
  xp_sum = xp_sum + xp
  if xp > 0 then with_xp = with_xp + 1 end
  local record = records[i]
  if record then
    local index = record_index_digits(record)
    if index == '' then
      next_index = next_index or tonumber(redis.call('HGET', KEYS[2], 'next_index') or '0')
      index = int(next_index)
      next_index = next_index + 1
      fresh[f + 1] = members[i]
      fresh[f + 2] = with_index(record, tonumber(index))
      f = f + 2
    end
    bitfield[b + 1] = 'SET'
    bitfield[b + 2] = 'u24'
    bitfield[b + 3] = '#' .. index
    bitfield[b + 4] = first + i
    b = b + 4
  end
end
if f > 0 then
  redis.call('HSET', KEYS[4], unpack(fresh, 1, f))
  redis.call('HSET', KEYS[2], 'next_index', int(next_index))
end
if b > 2 then redis.call('BITFIELD', KEYS[5], unpack(bitfield, 1, b)) end
return { CLOSE_DONE, m, int(xp_sum), with_xp }
