--[[
  Records a daily claim at a given time, once per UTC calendar day, creating the member (with
  0 XP, hidden if the user is: includes/visibility.lua) if needed. The streak grows by one when the previous claim was on the previous UTC day
  and restarts at 1 otherwise. Time comes from Redis so that every writer agrees.

  KEYS[1] board    ZSET board member -> xp
  KEYS[2] members  HASH board member -> record
  KEYS[3] version  STRING the server's data version
  KEYS[4] ops      HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[5] ops_prev HASH the same, the previous bucket
  KEYS[6] hidden   HASH board member -> why the user is hidden

  ARGV[1] board member
  ARGV[2] claim time in Unix ms, or '' for now
  ARGV[3] how far ahead of Redis's clock a claim may be dated, in ms
  ARGV[4] operation id
  ARGV[5] how long a bucket's hash lives, ms

  Returns { 1, streak, claimed_at } on success (CLAIMED), or, with nothing changed,
          { -1, last_claim }  ALREADY_CLAIMED on that UTC day
          { -2, last_claim }  BEFORE_LAST_CLAIM: dated before the member's last claim
          { -3, now }         IN_FUTURE: dated too far ahead of the clock
  An operation already applied returns its first reply and changes nothing.
]]
--- @include "clock"
--- @include "records"
--- @include "version"
--- @include "operations"
--- @include "visibility"

local done = replay(KEYS[4], KEYS[5], ARGV[4])
if done then return done end

local DAY = 86400000
-- Statuses, as src/redis/script-status.ts names them.
local CLAIMED, ALREADY_CLAIMED, BEFORE_LAST_CLAIM, IN_FUTURE = 1, -1, -2, -3

local now = now_ms()
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
-- A new member enters the board with 0 XP; 0 XP adds nothing to the aggregates.
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], int(encode_score(0, hidden_user(KEYS[6], ARGV[1]))), ARGV[1])
end
bump_version(KEYS[3])
return remember(KEYS[4], ARGV[4], ARGV[5], { CLAIMED, streak, at })
