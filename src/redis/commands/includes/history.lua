-- A day's close (src/history/day-close.ts): the scripts that build a closed day's history a chunk
-- at a time, each under the lease of the instance closing the server's days, and the packing of
-- what they keep.
--- @include "numbers"
--- @include "records"

-- Replies, as src/redis/script-status.ts names them.
local CLOSE_DONE, LEASE_LOST = 1, -6

-- Whether the lease is still `token`'s; renewed for `ms` when it is.
local function hold_lease (key, token, ms)
  if redis.call('GET', key) ~= token then return false end
  redis.call('PEXPIRE', key, ms)
  return true
end

-- The snapshot of the board at the day's end keeps a member not on the visible board then as
-- this score (removed before the close ends).
local NOT_VISIBLE = -1

-- A day-start hash's value as a snapshot score.
local function start_score (value)
  if value == '-' then return NOT_VISIBLE end
  return value
end

-- A chunk of a walk over a sorted set by position (the board's, the ranks' and the changes'
-- steps): `count` entries from the 0-based position `first`, in rank order (highest
-- score first) when `reverse`. Returns the flat { member, score, ... } reply, the members alone
-- and how many there are.
local function chunk_at (key, first, count, reverse)
  local flat = redis.call(reverse and 'ZREVRANGE' or 'ZRANGE', key, first, first + count - 1, 'WITHSCORES')
  local members, m = {}, 0
  for i = 1, #flat, 2 do
    m = m + 1
    members[m] = flat[i]
  end
  return flat, members, m
end

-- The items[1..n] that a reply about them (`values`, in their order) holds nothing for, and how many.
local function missing_from (values, items, n)
  local missing, k = {}, 0
  for i = 1, n do
    if not values[i] then
      k = k + 1
      missing[k] = items[i]
    end
  end
  return missing, k
end

-- The XP each of members[1..m] gained in a day: its gains hash, plus its sorted set where a
-- version before the hash kept them (includes/calendar-counting.lua).
local function gains_of (gains_key, legacy_key, members, m)
  local gains = redis.call('HMGET', gains_key, unpack(members, 1, m))
  if redis.call('EXISTS', legacy_key) == 1 then
    local legacy = redis.call('ZMSCORE', legacy_key, unpack(members, 1, m))
    for i = 1, m do
      if legacy[i] then gains[i] = tonumber(gains[i] or '0') + tonumber(legacy[i]) end
    end
  end
  return gains
end

-- ZADD NX of flat { score, member, ... } pairs (one command).
local function add_new (key, pairs, n)
  if n > 0 then redis.call('ZADD', key, 'NX', unpack(pairs, 1, n)) end
end

-- A touched member's place in the close's order when it has no history index (its record is
-- gone): below every index, where the change records' walk starts after it.
local NO_INDEX = -1

-- Whether the close under way is a server's first: no member had a history index when it began
-- (close-day-begin-7.lua notes in the close's `fresh` hash the first index it may give, `from`).
local function is_first_close (fresh)
  return redis.call('HGET', fresh, 'from') == '0'
end

-- A member record's history index as its digits ('' for none): names hold no \31, so the first
-- one opens the extension, whose first part is the index. One match: splitting the record made
-- five strings of each of the million records a close reads.
local function record_index_digits (record)
  return string.match(record, '\31(%d*)') or ''
end

-- A member record's history index (nil for none).
local function record_index (record)
  return tonumber(record_index_digits(record))
end

-- The record with `index` (its digits) set. A record with no extension yet (most, at a server's
-- first close) has no names to keep.
local function with_index (record, index)
  local cut = string.find(record, '\31', 1, true)
  if not cut then return record .. make_extension(index, '', '') end
  local _, display, avatar = extension_parts(string.sub(record, cut))
  return string.sub(record, 1, cut - 1) .. make_extension(index, display, avatar)
end

-- A closed day's rank at a history index: 3 bytes, big-endian; 0 is no rank, and so is a rank
-- that does not fit (BITFIELD's OVERFLOW FAIL leaves it 0 too).
local RANK_BYTES = 3
local NO_RANK_PAST = 16777215 -- 2^24 - 1

local function pack_rank (rank)
  if rank > NO_RANK_PAST then return '\0\0\0' end
  return struct.pack('>I3', rank)
end

-- A closed day's change record: the history index (3 bytes), the visible XP at the day's start
-- (5 bytes; all ones: not visible) and the XP gained (5 bytes), big-endian.
local CHANGE_BYTES = 13
local NO_XP = 1099511627775 -- 2^40 - 1: above every XP a member may hold

local function pack_change (index, start_xp, gained)
  return struct.pack('>I3I5I5', index, start_xp, gained)
end

-- A day-start hash's value as a change record's XP at the day's start.
local function start_xp (value)
  if value == '-' then return NO_XP end
  return tonumber(value)
end

-- A string of `final` bytes built a chunk at a time in order (the changes), grown to hold the
-- first `needed`: sized at once, a string of millions of bytes is allocated and zeroed in one
-- call, several ms of Redis, so it grows by at most 1 MB a call (2 MB the first). Redis gives a
-- string it grows past 1 MB another 1 MB of room, so the steps end 1 MB apart, an even number
-- after the first: the last growth's room then ends at `final`, as when it was sized at once.
local GROW_STEP = 1048576

local function grow_to (key, needed, final)
  local length = redis.call('STRLEN', key)
  if length >= needed then return end
  local steps = 2 * math.floor((final - 1) / (2 * GROW_STEP))
  local first_step = final - steps * GROW_STEP
  local target = first_step
  if needed > target then target = first_step + math.ceil((needed - first_step) / GROW_STEP) * GROW_STEP end
  redis.call('SETRANGE', key, target - 1, '\0')
end

