--[[
  Removes a member and all its data (the user left the server), from every period board and the
  current season's board too, and its cooldown, so a member added again is not refused as if it
  had been awarded just now; the server's day keeps its XP before the removal (includes/
  calendar-counting.lua), so the day before closes with the member in it. Ended seasons are
  archives: they keep it.

  KEYS[1] board      ZSET board member -> xp
  KEYS[2] members    HASH board member -> record
  KEYS[3] stats      HASH aggregates
  KEYS[4] version    STRING the server's data version
  KEYS[5] ops        HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[6] ops_prev   HASH the same, the previous bucket
  KEYS[7] week       ZSET the current ISO week's period board
  KEYS[8] last_week  ZSET the previous ISO week's
  KEYS[9] month      ZSET the current UTC month's
  KEYS[10] last_month ZSET the previous UTC month's
  KEYS[11] season    ZSET the current season's board
  KEYS[12] settings  HASH the settings, and their `epoch`
  KEYS[13] day_start HASH board member -> visible xp before its first change in the day
  KEYS[14] hist      HASH the server's history (`latest_day`, `since`)
  KEYS[15] hidden    HASH board member -> why the user is hidden (forgotten with the member:
                     includes/visibility.lua)
  KEYS[16] cooldowns ZSET board member -> Unix ms of its last award that added XP, as earlier
                     versions kept it (includes/cooldowns.lua)
  KEYS[17] cooldown_hour HASH the same, the current hour's (src/writer/calendar-writes.ts)
  KEYS[18] cooldown_hour_prev HASH the same, the hour before's

  ARGV[1] board member
  ARGV[2] operation id
  ARGV[3] how long a bucket's hash lives, ms
  ARGV[4] ARGV[5] the window [from, until), Unix ms, in which KEYS[7..10], KEYS[13] and
          KEYS[17..18] are the current and previous periods, the current day and the
          cooldowns' current and previous hours
  ARGV[6] the settings' epoch the caller computed with
  ARGV[7] the day's label (YYYY-MM-DD)
  ARGV[8] when the day's keys expire, Unix ms

  Returns { 1 } when removed, { 0 } when the user was not a member, or, with nothing changed,
  { -2, now_ms } when Redis's clock is outside the window, { -3, epoch } when the settings' epoch
  moved. An operation already applied returns its first reply and changes nothing.
]]
--- @include "aggregates"
--- @include "version"
--- @include "operations"
--- @include "calendar-counting"
--- @include "visibility"
--- @include "cooldowns"

local done = replay(KEYS[5], KEYS[6], ARGV[2])
if done then return done end

local now, refusal = calendar_check(KEYS[12], ARGV[6], ARGV[4], ARGV[5], '')
if refusal then return refusal end

local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then
  return remember(KEYS[5], ARGV[2], ARGV[3], { 0 })
end
touch_day({ day_start = KEYS[13], hist = KEYS[14], label = ARGV[7], expire_at = ARGV[8], now = now }, ARGV[1], 0, score)
local xp, hidden = decode_score(score)
if not hidden then apply_xp_change(KEYS[3], xp, 0) end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[15], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
forget_cooldown(cooldown_keys(KEYS[17], KEYS[18], nil, KEYS[16]), ARGV[1])
for i = 7, 11 do redis.call('ZREM', KEYS[i], ARGV[1]) end
bump_version(KEYS[4])
return remember(KEYS[5], ARGV[2], ARGV[3], { 1 })
