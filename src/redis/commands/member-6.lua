--[[
  One member's record, read consistently with its rank, its XP in the current periods, the
  server's curve and data version.

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] members   HASH board member -> record
  KEYS[3] settings  HASH curve, multiplier_hundredths
  KEYS[4] version   STRING the server's data version
  KEYS[5] week      ZSET the current ISO week's period board
  KEYS[6] month     ZSET the current UTC month's period board

  ARGV[1] board member
  ARGV[2] ARGV[3] the window [from, until), Unix ms, in which KEYS[5] and KEYS[6] are current
          (includes/periods.lua)

  Returns { version|false, now_ms, current, xp|false, rank (0-based), record|false, curve|false,
  week_xp|false, month_xp|false }: current is 0 (and nothing follows) when Redis's clock is
  outside the window, so the caller reads again with the periods of now_ms; xp is false (and
  nothing follows) when the user is not a member.
  The curve is its name, or custom:<settings epoch> for a custom one (includes/shown-curve.lua).
]]
--- @include "periods"
--- @include "shown-curve"

local version = redis.call('GET', KEYS[4])
local now, current = period_clock(ARGV[2], ARGV[3])
if not current then return { version, now, 0 } end
local xp = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not xp then return { version, now, 1, false } end
return {
  version,
  now,
  1,
  xp,
  redis.call('ZREVRANK', KEYS[1], ARGV[1]),
  redis.call('HGET', KEYS[2], ARGV[1]),
  shown_curve(KEYS[3]),
  redis.call('ZSCORE', KEYS[5], ARGV[1]),
  redis.call('ZSCORE', KEYS[6], ARGV[1])
}
