--[[
  Sets many members of one server at once (seeding and imports): XP outright (no multiplier),
  and optionally the username, the daily record, the display name and the avatar URL. One call
  keeps the aggregates exact, as the single-member scripts do, and bumps the data version once;
  a hidden member stays hidden, and a hidden user enters hidden (includes/visibility.lua).
  Running it twice changes nothing else. A handful of commands per call whatever its size: one
  ZMSCORE, one ZADD, at most one HMGET of records (only of members already on the board), one
  HSET, one HMGET of the hidden hash (only of users new to the board), and the server's day
  (includes/calendar-counting.lua) for the members whose XP changes: one HMGET of the day-start
  hash, and one HSET for those it had not seen yet; and for each member given a display name or an avatar URL
  one HGET and at most one HSET.

  KEYS[1] board    ZSET board member -> xp
  KEYS[2] members  HASH board member -> record (see includes/records.lua)
  KEYS[3] stats    HASH aggregates
  KEYS[4] version  STRING the server's data version
  KEYS[5] settings  HASH the settings, and their `epoch`
  KEYS[6] day_start HASH board member -> visible xp before its first change in the day
  KEYS[7] hist      HASH the server's history (`latest_day`, `since`)
  KEYS[8] hidden    HASH board member -> why the user is hidden

  ARGV[1..4] how many members come in each group, in this order: those given a whole record
             (username and daily record), a username only (their daily record is kept), a daily
             record only (their username is kept), neither (their record is kept)
  ARGV[5] ARGV[6] the window [from, until), Unix ms, in which KEYS[6] is current
  ARGV[7] the settings' epoch the caller computed with
  ARGV[8] the day's label (YYYY-MM-DD)
  ARGV[9] when the day's keys expire, Unix ms
  ARGV[10] how many members are given a display name or an avatar URL, p
  then       the n board members, group by group (distinct: the writer merges repeats; a repeat
             still keeps the aggregates exact)
  then       their n XP values, in the same order (integers from 0 to the XP limit, checked by
             the caller)
  then       one record for each member of the first three groups, in the same order, as it is
             when nothing is stored: "<streak>:<claim>:<username>", "::<username>" or
             "<streak>:<claim>:" (so a new member's record is written as given)
  then       p triples: board member (one of the n), display name, avatar URL ('' keeps each,
             "\31" clears it: includes/profile.lua)

  Returns the number of members set, or, with nothing changed, { -2, now_ms } when Redis's clock
  is outside the window, { -3, epoch } when the settings' epoch moved.
]]
--- @include "aggregates"
--- @include "version"
--- @include "calendar-counting"
--- @include "profile"
--- @include "visibility"

local argv, tonumber = ARGV, tonumber
local now, refusal = calendar_check(KEYS[5], argv[7], argv[5], argv[6], '')
if refusal then return refusal end

local whole, named, dated, bare = tonumber(argv[1]), tonumber(argv[2]), tonumber(argv[3]), tonumber(argv[4])
local n = whole + named + dated + bare
local profiled = tonumber(argv[10])
local MEMBERS, XPS, PARTS = 10, 10 + n, 10 + 2 * n    -- argv[MEMBERS + i] is member i, and so on
local PROFILES = PARTS + whole + named + dated

-- XP and aggregates. A member whose XP does not change is left out of the ZADD (a repeated seed
-- or import writes nothing to the board), unless it is new: a new member enters even at 0 XP.
local old = redis.call('ZMSCORE', KEYS[1], unpack(argv, MEMBERS + 1, MEMBERS + n))
local hides = {}  -- board member -> true: hidden
local fresh, r = {}, 0
for i = 1, n do
  if old[i] then
    local _, hidden = decode_score(old[i])
    hides[argv[MEMBERS + i]] = hidden
  else
    r = r + 1
    fresh[r] = argv[MEMBERS + i]
  end
end
if r > 0 then
  local flags = redis.call('HMGET', KEYS[8], unpack(fresh, 1, r))
  for j = 1, r do hides[fresh[j]] = flags[j] ~= false end
end
local deltas = new_deltas()
local scores, s = {}, 0
local seen = {}   -- board member -> XP set earlier in this call
local touched, touched_old, t = {}, {}, 0   -- the members whose XP changes, and their score before the call
for i = 1, n do
  local member, xp = argv[MEMBERS + i], argv[XPS + i]
  local new_xp = tonumber(xp)
  local old_xp = seen[member]
  if old_xp == nil and old[i] then old_xp = decode_score(old[i]) end
  if old_xp ~= new_xp then
    if hides[member] then
      xp = int(encode_score(new_xp, true))
    else
      add_xp_change(deltas, old_xp or 0, new_xp)
    end
    scores[s + 1] = xp
    scores[s + 2] = member
    s = s + 2
    t = t + 1
    touched[t] = member
    touched_old[t] = old[i]
  end
  seen[member] = new_xp
end
if s > 0 then redis.call('ZADD', KEYS[1], unpack(scores, 1, s)) end
apply_deltas(KEYS[3], deltas)
touch_day_many({ day_start = KEYS[6], hist = KEYS[7], label = argv[8], expire_at = argv[9], now = now }, touched, touched_old, t)

-- Records: given ones merged with the stored record, read only for members that were on the
-- board already (a record never outlives its member). A whole record replaces the username and
-- the daily record; every record keeps its extension (history index, profile).
local fields, f = {}, 0
local stored, k = {}, 0
if whole + named + dated > 0 then
  local existing, e = {}, 0
  for i = 1, whole + named + dated do
    if old[i] then
      e = e + 1
      existing[e] = argv[MEMBERS + i]
    end
  end
  if e > 0 then stored = redis.call('HMGET', KEYS[2], unpack(existing, 1, e)) end
end
for i = 1, whole + named + dated do
  local record = false
  if old[i] then
    k = k + 1
    record = stored[k]
  end
  local merged = argv[PARTS + i]
  if record then
    local extension = string.match(record, '\31.*$') or ''
    if i <= whole then
      merged = merged .. extension
    elseif i <= whole + named then
      merged = (string.match(record, '^%d*:%d*:') or '::') .. string.sub(merged, 3) .. extension   -- keep the daily record
    else
      merged = merged .. (string.match(record, '^%d*:%d*:(.*)$') or '')                         -- keep the username
    end
  end
  if merged ~= record then
    fields[f + 1] = argv[MEMBERS + i]
    fields[f + 2] = merged
    f = f + 2
  end
end
if f > 0 then redis.call('HSET', KEYS[2], unpack(fields, 1, f)) end

-- Profiles, after the records (so over what was just written), each as set_names would.
for j = 0, profiled - 1 do
  local at = PROFILES + 3 * j
  set_names(KEYS[2], argv[at + 1], '', argv[at + 2], argv[at + 3])
end

bump_version(KEYS[4])
return n
