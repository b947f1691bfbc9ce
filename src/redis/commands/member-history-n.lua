--[[
  A member's history over closed days (GET /members/{user_id}/history): each day's XP at its end,
  XP gained, and rank at its end. The ranks are read at the member's history index; the XP is
  walked back from now: a day's end is the next day's start, which a change record keeps for
  each day that touched the member (includes/history.lua), and the open days' day-start hashes
  for the days not closed yet. The caller names the keys from the history hash's state as it last
  saw it; when that moved, nothing is read and the state comes back.

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] members   HASH board member -> record
  KEYS[3] version   STRING the server's data version
  KEYS[4] hist      HASH the server's history (`closed_through`, `closed_from`, `latest_day`)
  then the N days' ranks (STRING each; the last closed day's is hist:ranks:latest), oldest first,
  then their N change records (STRING each), in the same order,
  then the M open days' day-start hashes (the days after the last closed one, through latest_day), oldest first

  ARGV[1] board member
  ARGV[2] N, the days read
  ARGV[3] M, the open days given
  ARGV[4] ARGV[5] ARGV[6] closed_through, closed_from and latest_day as the caller saw them ('' for none)

  Returns { version|false, 1, xp_1, gained_1, rank_1, ..., xp_N, gained_N, rank_N } oldest day
  first (rank 0: not ranked at that day's end, when xp is 0 too), { version|false, 0 } when the
  user is not a member, or { version|false, -1, closed_through, closed_from, latest_day } when
  the history moved: read again with these.
]]
--- @include "history"

local version = redis.call('GET', KEYS[3])
local state = redis.call('HMGET', KEYS[4], 'closed_through', 'closed_from', 'latest_day')
for i = 1, 3 do
  if (state[i] or '') ~= ARGV[3 + i] then return { version, -1, state[1] or '', state[2] or '', state[3] or '' } end
end
local member = ARGV[1]
local score = redis.call('ZSCORE', KEYS[1], member)
if not score or tonumber(score) < 0 then return { version, 0 } end
local n, m = tonumber(ARGV[2]), tonumber(ARGV[3])
local RANKS, CHANGES, OPEN = 4, 4 + n, 4 + 2 * n

-- The XP at the end of the last closed day: its value before the first change since, else now.
local xp = tonumber(score)
for j = 1, m do
  local start = redis.call('HGET', KEYS[OPEN + j], member)
  if start then
    xp = start ~= '-' and tonumber(start) or nil
    break
  end
end

-- The change record of `index` in a closed day's records (sorted by index), by binary search.
local function change_of (key, index)
  local lo, hi = 0, redis.call('STRLEN', key) / CHANGE_BYTES - 1
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local at, start, gained = struct.unpack('>I3I5I5', redis.call('GETRANGE', key, mid * CHANGE_BYTES, (mid + 1) * CHANGE_BYTES - 1))
    if at == index then return start, gained end
    if at < index then lo = mid + 1 else hi = mid - 1 end
  end
  return nil
end

local index = record_index(redis.call('HGET', KEYS[2], member) or '')
local out = { version, 1 }
for day = n, 1, -1 do
  local rank, gained = 0, 0
  local start
  if index then
    rank = redis.call('BITFIELD_RO', KEYS[RANKS + day], 'GET', 'u24', '#' .. index)[1]
    start, gained = change_of(KEYS[CHANGES + day], index)
  end
  local at = 3 * day
  out[at] = rank > 0 and xp or 0
  out[at + 1] = gained or 0
  out[at + 2] = rank
  if start then xp = start ~= NO_XP and start or nil end
end
return out
