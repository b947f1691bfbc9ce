--[[
  Close, the end: the day becomes the last closed day, at once for every reader. Its stats are
  kept, its ranks become the latest (the previous latest keeps its day's name), the keys the
  close built from are freed, and the data version moves: no cached answer and no ETag from
  before (ranks change with rank_change) survives it. A compare-and-set on the last closed day,
  so a day is closed once.

  KEYS[1] lease        STRING the closing lease
  KEYS[2] hist         HASH the server's history (`closed_through`, `closed_from`)
  KEYS[3] hist_stats   HASH closed day -> its stats
  KEYS[4] ranks_latest STRING the ranks at the end of the last closed day
  KEYS[5] ranks_prev   STRING the name the last closed day's ranks take
  KEYS[6] ranks_day    STRING the day's ranks
  KEYS[7] snapshot     ZSET the board at the day's end
  KEYS[8] order        ZSET the touched members by history index
  KEYS[9] day          ZSET the day's gains as an earlier version kept them
  KEYS[10] day_gains   HASH the day's gains
  KEYS[11] day_start   HASH the day's day-start hash
  KEYS[12] version     STRING the server's data version
  KEYS[13] fresh       HASH the change records of the members the close gave their index

  ARGV[1] the caller's lease token
  ARGV[2] the day (YYYY-MM-DD)
  ARGV[3] the last closed day the close was built after, or '' for none
  ARGV[4] the day's stats, "<total_members>:<total_xp>:<active_members>:<xp_gained>"
  ARGV[5] until when (Redis time, Unix ms) the later days the close read are all there are
  ARGV[6] '1' when the day follows the last closed day (the closed days stay without a gap)
  ARGV[7] the first day kept by history_days: closed_from moves up to it

  Returns { 1 } once closed, { 0 } when the last closed day is no longer ARGV[3] (closed by
  another), { -6 } when the lease was lost, { -2, now_ms } when a day began since the close
  started (read it again, with that day).
]]
--- @include "history"
--- @include "clock"
--- @include "version"

local ALREADY, DAY_BEGAN = 0, -2
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return { LEASE_LOST } end
if (redis.call('HGET', KEYS[2], 'closed_through') or '') ~= ARGV[3] then return { ALREADY } end
local now = now_ms()
if now >= tonumber(ARGV[5]) then return { DAY_BEGAN, now } end
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
if redis.call('EXISTS', KEYS[4]) == 1 then
  if ARGV[3] ~= '' then redis.call('RENAME', KEYS[4], KEYS[5]) else redis.call('UNLINK', KEYS[4]) end
end
-- Copied rather than renamed: the ranks were written a chunk at a time at random offsets, and
-- Redis grew the string by doubling it (by 1 MB past 1 MB), so it holds up to as much again
-- spare; a copy is allocated to its length.
if redis.call('COPY', KEYS[6], KEYS[4], 'REPLACE') == 1 then redis.call('UNLINK', KEYS[6]) end
redis.call('HSET', KEYS[2], 'closed_through', ARGV[2])
local from = redis.call('HGET', KEYS[2], 'closed_from')
if ARGV[6] ~= '1' or not from then from = ARGV[2] end
if from < ARGV[7] then from = ARGV[7] end
redis.call('HSET', KEYS[2], 'closed_from', from)
redis.call('UNLINK', KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[13])
bump_version(KEYS[12])
return { CLOSE_DONE }
