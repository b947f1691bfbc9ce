--[[
  Records a daily claim at a given time, once per UTC calendar day, creating the member (with
  0 XP) if needed. The streak grows by one when the previous claim was on the previous UTC day
  and restarts at 1 otherwise. Time comes from Redis so that every writer agrees.

  KEYS[1] board    ZSET board member -> xp
  KEYS[2] streaks  HASH user_id -> daily streak
  KEYS[3] claims   HASH user_id -> last claim (ms)

  ARGV[1] board member
  ARGV[2] user_id
  ARGV[3] claim time in Unix ms, or '' for now
  ARGV[4] how far ahead of Redis's clock a claim may be dated, in ms

  Returns { 1, streak, claimed_at } on success, or, with nothing changed,
          { -1, last_claim }  already claimed on that UTC day
          { -2, last_claim }  dated before the member's last claim
          { -3, now }         dated too far ahead of the clock
]]
--- @include "clock"

local DAY = 86400000

local now = now_ms()
local at = now
if ARGV[3] ~= '' then at = tonumber(ARGV[3]) end
if at > now + tonumber(ARGV[4]) then
  return { -3, now }
end

local streak = 1
local last = tonumber(redis.call('HGET', KEYS[3], ARGV[2]) or '')
if last then
  if at < last then return { -2, last } end
  local day, last_day = math.floor(at / DAY), math.floor(last / DAY)
  if day == last_day then return { -1, last } end
  if day == last_day + 1 then
    streak = tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0') + 1
  end
end

redis.call('HSET', KEYS[2], ARGV[2], streak)
redis.call('HSET', KEYS[3], ARGV[2], string.format('%d', at))
-- A new member enters the board with 0 XP; 0 XP adds nothing to the aggregates.
redis.call('ZADD', KEYS[1], 'NX', 0, ARGV[1])
return { 1, streak, at }
