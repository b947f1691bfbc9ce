--[[
  One page of a period leaderboard (XP gained in one ISO week or UTC month), with each entry's
  overall XP for its level, read consistently with the server's curve and data version. No
  per-entry work in Lua: the caller decodes board members and records. Hidden members are
  neither counted nor listed (includes/visibility.lua).

  KEYS[1] period    ZSET board member -> xp gained in the period (includes/periods.lua)
  KEYS[2] board     ZSET board member -> xp
  KEYS[3] members   HASH board member -> record
  KEYS[4] settings  HASH curve, multiplier_hundredths
  KEYS[5] version   STRING the server's data version

  ARGV[1] first 0-based rank of the page
  ARGV[2] last 0-based rank of the page
  ARGV[3] ARGV[4] the window [from, until), Unix ms, in which KEYS[1] is the period asked for

  Returns { version|false, now_ms, current, total, curve|false, { board member... },
  { period xp... }, { xp|false... }, { record|false... } } in rank order; current is 0 (and
  nothing follows) when Redis's clock is outside the window, so the caller reads again with the
  periods of now_ms.
  The curve is its name, or custom:<settings epoch> for a custom one (includes/shown-curve.lua).
]]
--- @include "periods"
--- @include "shown-curve"

local version = redis.call('GET', KEYS[5])
local now, current = period_clock(ARGV[3], ARGV[4])
if not current then return { version, now, 0 } end
local entries, total = visible_range(KEYS[1], ARGV[1], ARGV[2])
local result = {
  version,
  now,
  1,
  total,
  shown_curve(KEYS[4]),
  entries
}
if #entries > 0 then
  result[7] = redis.call('ZMSCORE', KEYS[1], unpack(entries))
  result[8] = redis.call('ZMSCORE', KEYS[2], unpack(entries))
  result[9] = redis.call('HMGET', KEYS[3], unpack(entries))
else
  result[7], result[8], result[9] = {}, {}, {}
end
return result
