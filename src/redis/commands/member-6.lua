--[[
  One member's record, read consistently with its rank, its XP in the current periods, the
  server's curve and data version. A hidden member (includes/visibility.lua) is not a member,
  unless the caller (the write API, the CLI) asks for hidden members too.

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] members   HASH board member -> record
  KEYS[3] settings  HASH curve, multiplier_hundredths
  KEYS[4] version   STRING the server's data version
  KEYS[5] week      ZSET the current ISO week's period board
  KEYS[6] month     ZSET the current UTC month's period board

  ARGV[1] board member
  ARGV[2] ARGV[3] the window [from, until), Unix ms, in which KEYS[5] and KEYS[6] are current
          (includes/periods.lua)
  ARGV[4] '1' to read a hidden member too, '' not to

  Returns { version|false, now_ms, current, xp|false, rank (0-based)|false, record|false,
  curve|false, week_xp|false, month_xp|false }: current is 0 (and nothing follows) when Redis's
  clock is outside the window, so the caller reads again with the periods of now_ms; xp is false
  (and nothing follows) when the user is not a member; rank is false for a hidden member (the XP
  are its own all the same).
]]
--- @include "periods"
--- @include "visibility"

local version = redis.call('GET', KEYS[4])
local now, current = period_clock(ARGV[2], ARGV[3])
if not current then return { version, now, 0 } end
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return { version, now, 1, false } end
local xp, hidden = decode_score(score)
if hidden and ARGV[4] ~= '1' then return { version, now, 1, false } end
local function period_xp (key)
  local gained = redis.call('ZSCORE', key, ARGV[1])
  return gained and int(decode_score(gained))
end
return {
  version,
  now,
  1,
  int(xp),
  not hidden and redis.call('ZREVRANK', KEYS[1], ARGV[1]),
  redis.call('HGET', KEYS[2], ARGV[1]),
  redis.call('HGET', KEYS[3], 'curve'),
  period_xp(KEYS[5]),
  period_xp(KEYS[6])
}
