--[[
  Close, the day's changes: a chunk of the touched members with a history index, in its order, each
  written as a change record (includes/history.lua: index, visible XP at the day's start, XP
  gained) at its position in `order`, so that a member's record is found by binary search. The
  string is sized for every record by its first chunks (grow_to, includes/history.lua): grown
  only as each chunk needs, Redis would keep up to as much again spare (it grows a string by
  doubling it, and by 1 MB past 1 MB). The members the close gave their index come last (the
  last of `order`, or in a first close not in it), and their records are in `fresh`
  (close-day-ranks-11.lua): copied, not read again.

  KEYS[1] lease       STRING the closing lease
  KEYS[2] order       ZSET the touched members by history index
  KEYS[3] day         ZSET the day's gains as an earlier version kept them (read where it exists)
  KEYS[4] day_gains   HASH board member -> xp gained in the day
  KEYS[5] day_start   HASH board member -> visible xp before its first change in the day
  KEYS[6] changes_day STRING the day's change records, being built
  KEYS[7] fresh       HASH the change records of the members the close gave their index (the last of `order`), by the number of records before them; `from`, `n`

  ARGV[1] the caller's lease token
  ARGV[2] the lease's length, ms
  ARGV[3] the first 0-based position of the chunk among the members of `order` with an index
  ARGV[4] how many

  Returns { 1, records written (at least ARGV[4], but at the end) }, or { -6 } when the lease was lost.
]]
--- @include "history"

if not hold_lease(KEYS[1], ARGV[1], ARGV[2]) then return { LEASE_LOST } end
local first, count = tonumber(ARGV[3]), tonumber(ARGV[4])
local unindexed = redis.call('ZCOUNT', KEYS[2], '-inf', '(0')
local given = tonumber(redis.call('HGET', KEYS[7], 'n') or '0')
-- The members of `order` that had their index before this close: the others, the last ones, have
-- their records in `fresh` already (and are not in `order` in a first close).
local before = redis.call('ZCARD', KEYS[2]) - unindexed
if not is_first_close(KEYS[7]) then before = before - given end
local indexed = before + given
local parts, written = {}, 0
if first < before then
  local flat, members, m = chunk_at(KEYS[2], unindexed + first, math.min(count, before - first))
  local starts = redis.call('HMGET', KEYS[5], unpack(members, 1, m))
  local gains = gains_of(KEYS[4], KEYS[3], members, m)
  local packed = {}
  for i = 1, m do
    packed[i] = pack_change(tonumber(flat[2 * i]), starts[i] and start_xp(starts[i]) or NO_XP, tonumber(gains[i] or '0'))
  end
  parts[1] = table.concat(packed)
  written = m
end
while written < count and first + written >= before do
  local copied = redis.call('HGET', KEYS[7], int(first + written - before))
  if not copied then break end
  parts[#parts + 1] = copied
  written = written + #copied / CHANGE_BYTES
end
if written == 0 then return { CLOSE_DONE, 0 } end
grow_to(KEYS[6], CHANGE_BYTES * (first + written), CHANGE_BYTES * indexed)
redis.call('SETRANGE', KEYS[6], CHANGE_BYTES * first, table.concat(parts))
return { CLOSE_DONE, written }
