--[[
  Close, the snapshot of the day's end: a chunk of the board, in rank order. A member changed
  since the day's end has its value there in a later day-start hash: the earlier ones are in the
  snapshot already, and today's, which writes still fill, is read here for the chunk's members.
  Any other member holds its value at the day's end on the board. Members hidden (a negative
  score) are not on the visible board.

  The board is walked in rank order, so that each chunk goes in at the head of the snapshot's
  sorted set: added in the board's hash order (ZSCAN), each member cost a search through the
  whole set, most of a close's time. Writes go on between chunks, so a chunk starts after the
  last member of the one before (the anchor) where it stands now: a member whose score is the
  one the walk read holds the same place among the members not changed since (those the walk is
  for; the others are in today's day-start hash, read here and again at the end). When the
  anchor's score moved, the chunk starts at the first member of the anchor's old score, and
  reads some again (ZADD NX keeps their first value, the same).

  KEYS[1] lease     STRING the closing lease
  KEYS[2] board     ZSET board member -> xp
  KEYS[3] day_start HASH today's day-start hash
  KEYS[4] snapshot  ZSET the board at the day's end, being built

  ARGV[1] the caller's lease token
  ARGV[2] the lease's length, ms
  ARGV[3] the anchor: the last member the walk read ('' to start)
  ARGV[4] the anchor's score when it was read
  ARGV[5] how many members to read

  Returns { 1, anchor, its score } to go on from there, { 1 } when the board was read to its
  end, or { -6 } when the lease was lost.
]]
--- @include "history"

if not hold_lease(KEYS[1], ARGV[1], ARGV[2]) then return { LEASE_LOST } end
local count = tonumber(ARGV[5])
local first = 0
if ARGV[3] ~= '' then
  if redis.call('ZSCORE', KEYS[2], ARGV[3]) == ARGV[4] then
    first = redis.call('ZREVRANK', KEYS[2], ARGV[3]) + 1
  else
    first = redis.call('ZCOUNT', KEYS[2], '(' .. ARGV[4], '+inf')
  end
end
local flat, members, m = chunk_at(KEYS[2], first, count, true)
local pairs, n = {}, 0
if m > 0 then
  local later = redis.call('HMGET', KEYS[3], unpack(members, 1, m))
  for i = 1, m do
    local score = later[i] and start_score(later[i]) or flat[2 * i]
    if later[i] or tonumber(score) >= 0 then
      pairs[n + 1] = score
      pairs[n + 2] = members[i]
      n = n + 2
    end
  end
end
add_new(KEYS[4], pairs, n)
if m < count then return { CLOSE_DONE } end
return { CLOSE_DONE, members[m], flat[2 * m] }
