--[[
  Close, the ranks: a chunk of the snapshot in rank order. Each member's rank at the day's end is
  written at its history index (3 bytes, big-endian; 0 is no rank, and so is a rank past 2^24 - 1,
  which does not fit); a member without an index is given the next one (its record keeps it). A
  member whose record is gone (removed since) is ranked but has no index to keep a rank at. The
  indexes a call gives follow on from each other, so their ranks are written as one run of bytes
  (SETRANGE): a server's first close gives every member its index, and a BITFIELD operation per
  member parsed four arguments each.

  A member given its index here that the day touched is counted in the day's activity now, and
  its change record goes into `fresh`: its index is above every index given before, and the
  chunks come in order, so its record follows every other's, and `fresh` holds these last
  records in order for the changes step to copy: each call's as one field, named by the number of
  records before it (`n` counts them), so that no call grows a string of megabytes (which Redis
  may copy whole to grow it). It also goes into `order`, at its tail, for the touched step to
  skip it: where the touched step's walk in hash order would put each at a random place. In a
  server's first close (`from` in `fresh` is 0: no member had an index before it) it does not:
  every member with an index then has its record in `fresh`, the touched step has nothing to
  add (close-day-touched-8.lua), and a million insertions into `order` are saved. A member the
  snapshot holds whose record is gone, and who is off the board (removed since the day ended),
  gets no index; in a first close its activity is counted here, which the touched step counts in
  a later one.

  KEYS[1] lease     STRING the closing lease
  KEYS[2] hist      HASH the server's history (`next_index`)
  KEYS[3] snapshot  ZSET the board at the day's end
  KEYS[4] members   HASH board member -> record
  KEYS[5] ranks_day STRING the day's ranks, being built
  KEYS[6] board     ZSET board member -> xp
  KEYS[7] day_start HASH board member -> visible xp before its first change in the day
  KEYS[8] day       ZSET the day's gains as an earlier version kept them (read where it exists)
  KEYS[9] day_gains HASH board member -> xp gained in the day
  KEYS[10] order    ZSET the touched members by history index, being built
  KEYS[11] fresh    HASH the change records of the members given their index here, being built (`from`: close-day-begin-7.lua)

  ARGV[1] the caller's lease token
  ARGV[2] the lease's length, ms
  ARGV[3] the first 0-based rank of the chunk
  ARGV[4] how many ranks

  Returns { 1, members read, their XP summed, how many have XP, how many of those given an index
  gained XP in the day, the XP they gained }, or { -6 } when the lease was lost.
]]
--- @include "history"

if not hold_lease(KEYS[1], ARGV[1], ARGV[2]) then return { LEASE_LOST } end
local first = tonumber(ARGV[3])
local flat, members, m = chunk_at(KEYS[3], first, tonumber(ARGV[4]), true)
if m == 0 then return { CLOSE_DONE, 0, 0, 0, 0, 0 } end
local records = redis.call('HMGET', KEYS[4], unpack(members, 1, m))
local unrecorded, u = missing_from(records, members, m)
local gone, o = {}, 0
if u > 0 then
  local on_board = redis.call('ZMSCORE', KEYS[6], unpack(unrecorded, 1, u))
  local j = 0
  for i = 1, m do
    if not records[i] then
      j = j + 1
      if on_board[j] then
        records[i] = '::'
      else
        o = o + 1
        gone[o] = members[i]
      end
    end
  end
end
local first_close = is_first_close(KEYS[11])
local bitfield, b = { 'OVERFLOW', 'FAIL' }, 2
local fresh, f = {}, 0
local given, given_index, given_ranks, g = {}, {}, {}, 0
local next_index, first_given
local xp_sum, with_xp = 0, 0
for i = 1, m do
  local xp = tonumber(flat[2 * i])
  xp_sum = xp_sum + xp
  if xp > 0 then with_xp = with_xp + 1 end
  local record = records[i]
  if record then
    local index = record_index_digits(record)
    if index == '' then
      if not next_index then
        next_index = tonumber(redis.call('HGET', KEYS[2], 'next_index') or '0')
        first_given = next_index
      end
      g = g + 1
      given[g] = members[i]
      given_index[g] = next_index
      given_ranks[g] = pack_rank(first + i)
      next_index = next_index + 1
      fresh[f + 1] = members[i]
      fresh[f + 2] = with_index(record, int(given_index[g]))
      f = f + 2
    else
      bitfield[b + 1] = 'SET'
      bitfield[b + 2] = 'u24'
      bitfield[b + 3] = '#' .. index
      bitfield[b + 4] = first + i
      b = b + 4
    end
  end
end
if f > 0 then
  redis.call('HSET', KEYS[4], unpack(fresh, 1, f))
  redis.call('HSET', KEYS[2], 'next_index', int(next_index))
  redis.call('SETRANGE', KEYS[5], RANK_BYTES * first_given, table.concat(given_ranks))
end
if b > 2 then redis.call('BITFIELD', KEYS[5], unpack(bitfield, 1, b)) end
-- The day's activity: the members on its visible board at its end that gained XP in it.
local active, gained = 0, 0
local function count_gain (xp)
  if xp > 0 then
    active = active + 1
    gained = gained + xp
  end
end
if first_close and o > 0 then
  local gains = gains_of(KEYS[9], KEYS[8], gone, o)
  for i = 1, o do count_gain(gains[i] and tonumber(gains[i]) or 0) end
end
if g > 0 then
  local starts = redis.call('HMGET', KEYS[7], unpack(given, 1, g))
  local touched, starts_of, t = {}, {}, 0
  local order, n = {}, 0
  for i = 1, g do
    if starts[i] then
      t = t + 1
      touched[t] = given[i]
      starts_of[t] = starts[i]
      order[n + 1] = given_index[i]
      order[n + 2] = given[i]
      n = n + 2
    end
  end
  if t > 0 then
    local gains = gains_of(KEYS[9], KEYS[8], touched, t)
    local packed = {}
    for i = 1, t do
      local xp = gains[i] and tonumber(gains[i]) or 0
      count_gain(xp)
      packed[i] = pack_change(order[2 * i - 1], start_xp(starts_of[i]), xp)
    end
    if not first_close then redis.call('ZADD', KEYS[10], unpack(order, 1, n)) end
    local before = redis.call('HINCRBY', KEYS[11], 'n', t) - t
    redis.call('HSET', KEYS[11], int(before), table.concat(packed))
  end
end
return { CLOSE_DONE, m, int(xp_sum), with_xp, active, int(gained) }
