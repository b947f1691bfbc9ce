--[[
  Hides or shows members (a bot's join and leave sync, an opt-out): each item adds a reason to
  hide the user, or takes one (or every one) away; a user is hidden while any reason holds.
  Hiding moves the member's score on every board to -(xp + 1) and takes its XP out of the
  aggregates; showing moves it back and counts it in again (includes/visibility.lua), atomically,
  so every read sees the member on all boards or on none. A user who is not a member yet is
  recorded hidden all the same: its first write places it hidden. Items apply in order (a user
  given twice ends as the last item leaves it). Setting a state that holds already changes nothing.

  Each member that moves is kept in the server's day (includes/calendar-counting.lua: its
  visible XP before the move), so the day's close sees the board as it stood at the day's end.

  The number of keys is given with each call: 11, then the seasons' boards.
  KEYS[1] board      ZSET board member -> xp
  KEYS[2] stats      HASH aggregates
  KEYS[3] version    STRING the server's data version
  KEYS[4] hidden     HASH board member -> reasons ("left", "opted_out", or both, comma-separated)
  KEYS[5] week       ZSET the current ISO week's period board
  KEYS[6] last_week  ZSET the previous ISO week's
  KEYS[7] month      ZSET the current UTC month's
  KEYS[8] last_month ZSET the previous UTC month's
  KEYS[9] settings   HASH the settings, and their `epoch`
  KEYS[10] day_start HASH board member -> visible xp before its first change in the day
  KEYS[11] hist      HASH the server's history (`latest_day`, `since`)
  KEYS[12..] the seasons' boards, current and archived (every other board a score is kept in)

  ARGV[1] ARGV[2] the window [from, until), Unix ms, in which KEYS[5..8] are the current and
          previous periods and KEYS[10] the current day's day-start hash
  ARGV[3] the settings' epoch the caller computed with
  ARGV[4] the day's label (YYYY-MM-DD)
  ARGV[5] when the day's keys expire, Unix ms
  then 3 per item i (from 0), at ARGV 6 + 3i to 8 + 3i: board member, '0' to hide or '1' to show,
          the reason (hiding: 'left' or 'opted_out'; showing: the reason that no longer holds, or
          '' for every reason)

  Returns { 1, then 3 per item: 1 if the user is shown after it (else 0), its reasons after it
  (comma-separated, '' when shown), its XP (false: not a member) }, or, with nothing changed,
  { -2, now_ms } when Redis's clock is outside the window, { -3, epoch } when the settings'
  epoch moved (the caller computes again and retries).
]]
--- @include "aggregates"
--- @include "version"
--- @include "calendar-counting"
--- @include "visibility"

local now, refusal = calendar_check(KEYS[9], ARGV[3], ARGV[1], ARGV[2], '')
if refusal then return refusal end

local REASONS = { 'left', 'opted_out' }   -- the order reasons are kept in
local FIRST = 6                           -- ARGV[FIRST + 3i] is item i's board member
local SEASONS = 12                        -- KEYS[SEASONS..] are the seasons' boards
local n = (#ARGV - FIRST + 1) / 3
local members = {}
for i = 1, n do members[i] = ARGV[FIRST + 3 * (i - 1)] end
local stored = redis.call('HMGET', KEYS[4], unpack(members, 1, n))
local scores = redis.call('ZMSCORE', KEYS[1], unpack(members, 1, n))

local first = {}        -- board member -> its reasons before the call
local reasons = {}      -- board member -> { reason = true }, as the items leave them
local function joined (set)
  local out = {}
  for _, reason in ipairs(REASONS) do
    if set[reason] then out[#out + 1] = reason end
  end
  return table.concat(out, ',')
end

local reply = { 1 }
for i = 1, n do
  local member, show, reason = members[i], ARGV[FIRST + 3 * i - 2] == '1', ARGV[FIRST + 3 * i - 1]
  local set = reasons[member]
  if not set then
    first[member] = stored[i] or ''
    set = {}
    for r in string.gmatch(first[member], '[^,]+') do set[r] = true end
    reasons[member] = set
  end
  if not show then
    set[reason] = true
  elseif reason == '' then
    for r in pairs(set) do set[r] = nil end
  else
    set[reason] = nil
  end
  local now_reasons = joined(set)
  reply[#reply + 1] = now_reasons == '' and 1 or 0
  reply[#reply + 1] = now_reasons
  reply[#reply + 1] = scores[i] and decode_score(scores[i]) or false
end

-- Each user once, by how the call leaves it.
local hide, show, h, s = {}, {}, 0, 0
local set_fields, f, cleared, c = {}, 0, {}, 0
for member, set in pairs(reasons) do
  local before, after = first[member], joined(set)
  if after ~= before then
    if after == '' then
      c = c + 1
      cleared[c] = member
    else
      set_fields[f + 1] = member
      set_fields[f + 2] = after
      f = f + 2
    end
    if before == '' then
      h = h + 1
      hide[h] = member
    elseif after == '' then
      s = s + 1
      show[s] = member
    end
  end
end
if f == 0 and c == 0 then return reply end

if f > 0 then redis.call('HSET', KEYS[4], unpack(set_fields, 1, f)) end
if c > 0 then redis.call('HDEL', KEYS[4], unpack(cleared, 1, c)) end
local deltas = new_deltas()
local touched, touched_old, t = {}, {}, 0   -- members that moved on the all-time board, and their score before
for xp_sign, list in pairs({ [-1] = { hide, h, true }, [1] = { show, s, false } }) do
  local moved = flip_scores(KEYS[1], list[1], list[2], list[3])
  for member, xp in pairs(moved) do
    count_member(deltas, xp, xp_sign)
    t = t + 1
    touched[t] = member
    touched_old[t] = int(encode_score(xp, not list[3]))
  end
  for k = 5, 8 do flip_scores(KEYS[k], list[1], list[2], list[3]) end
  for k = SEASONS, #KEYS do flip_scores(KEYS[k], list[1], list[2], list[3]) end
end
apply_deltas(KEYS[2], deltas)
touch_day_many({ day_start = KEYS[10], hist = KEYS[11], label = ARGV[4], expire_at = ARGV[5], now = now }, touched, touched_old, t)
bump_version(KEYS[3])
return reply
