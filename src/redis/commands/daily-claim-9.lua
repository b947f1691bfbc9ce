--[[
  Records a daily claim at a given time, once per UTC calendar day, creating the member (with
  0 XP) if needed. The streak grows by one when the previous claim was on the previous UTC day
  and restarts at 1 otherwise. Time comes from Redis so that every writer agrees. A member the
  claim creates is kept in the server's day (includes/calendar-counting.lua): it joined the board.

  KEYS[1] board    ZSET board member -> xp
  KEYS[2] members  HASH board member -> record
  KEYS[3] version  STRING the server's data version
  KEYS[4] ops      HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[5] ops_prev HASH the same, the previous bucket
  KEYS[6] settings  HASH the settings, and their `epoch`
  KEYS[7] day_start HASH board member -> visible xp before its first change in the day
  KEYS[8] hist      HASH the server's history (`latest_day`, `since`)
  KEYS[9] hidden   HASH board member -> why the user is hidden (includes/visibility.lua)

  ARGV[1] board member
  ARGV[2] claim time in Unix ms, or '' for now
  ARGV[3] how far ahead of Redis's clock a claim may be dated, in ms
  ARGV[4] operation id
  ARGV[5] how long a bucket's hash lives, ms
  ARGV[6] ARGV[7] the window [from, until), Unix ms, in which KEYS[7] is current
  ARGV[8] the settings' epoch the caller computed with
  ARGV[9] the day's label (YYYY-MM-DD)
  ARGV[10] when the day's keys expire, Unix ms

  Returns { 1, streak, claimed_at } on success (CLAIMED), or, with nothing changed,
          { -1, last_claim }  ALREADY_CLAIMED on that UTC day
          { -2, last_claim }  BEFORE_LAST_CLAIM: dated before the member's last claim
          { -3, now }         IN_FUTURE: dated too far ahead of the clock
  or, with nothing changed and nothing remembered, { 0, -2, now_ms } when Redis's clock is outside
  the window, { 0, -3, epoch } when the settings' epoch moved (includes/calendar-counting.lua's
  refusals behind a 0: their codes are the claim's own).
  An operation already applied returns its first reply and changes nothing.
]]
--- @include "clock"
--- @include "records"
--- @include "version"
--- @include "operations"
--- @include "calendar-counting"
--- @include "visibility"

local done = replay(KEYS[4], KEYS[5], ARGV[4])
if done then return done end

local DAY = 86400000
-- Statuses, as src/redis/script-status.ts names them.
local CLAIMED, ALREADY_CLAIMED, BEFORE_LAST_CLAIM, IN_FUTURE = 1, -1, -2, -3

local CALENDAR_REFUSAL = 0
local now, refusal = calendar_check(KEYS[6], ARGV[8], ARGV[6], ARGV[7], '')
if refusal then return { CALENDAR_REFUSAL, refusal[1], refusal[2] } end
local at = now
if ARGV[2] ~= '' then at = tonumber(ARGV[2]) end
if at > now + tonumber(ARGV[3]) then
  return remember(KEYS[4], ARGV[4], ARGV[5], { IN_FUTURE, now })
end

local stored_streak, stored_claim, name, extension = read_record(KEYS[2], ARGV[1])
local streak = 1
local last = tonumber(stored_claim)
if last then
  if at < last then return remember(KEYS[4], ARGV[4], ARGV[5], { BEFORE_LAST_CLAIM, last }) end
  local day, last_day = math.floor(at / DAY), math.floor(last / DAY)
  if day == last_day then return remember(KEYS[4], ARGV[4], ARGV[5], { ALREADY_CLAIMED, last }) end
  if day == last_day + 1 then
    streak = (tonumber(stored_streak) or 0) + 1
  end
end

write_record(KEYS[2], ARGV[1], streak, string.format('%d', at), name, extension)
-- A new member enters the board with 0 XP (hidden if the user is); 0 XP adds nothing to the aggregates.
if redis.call('ZADD', KEYS[1], 'NX', int(encode_score(0, hidden_user(KEYS[9], ARGV[1]))), ARGV[1]) == 1 then
  touch_day({ day_start = KEYS[7], hist = KEYS[8], label = ARGV[9], expire_at = ARGV[10], now = now }, ARGV[1], 0, false)
end
bump_version(KEYS[3])
return remember(KEYS[4], ARGV[4], ARGV[5], { CLAIMED, streak, at })
