--[[
  Many members' records at once (GET /members?ids=…), read consistently with one data version.
  No per-entry work in Lua beyond the rank of each member found: the caller decodes records. A
  hidden member is not a member here (includes/visibility.lua).

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] members   HASH board member -> record
  KEYS[3] settings  HASH curve, multiplier_hundredths
  KEYS[4] version   STRING the server's data version
  KEYS[5] week      ZSET the current ISO week's period board
  KEYS[6] month     ZSET the current UTC month's period board

  ARGV[1] ARGV[2] the window [from, until), Unix ms, in which KEYS[5] and KEYS[6] are current
          (includes/periods.lua)
  ARGV[3..] board members (at least one)

  Returns { version|false, now_ms, current, curve|false, { xp|false... }, { rank (0-based)|false... },
  { record|false... }, { week_xp|false... }, { month_xp|false... } }, each list in the order of
  the board members given (false: not a member); current is 0 (and nothing follows) when Redis's
  clock is outside the window, so the caller reads again with the periods of now_ms.
]]
--- @include "periods"
--- @include "visibility"

local version = redis.call('GET', KEYS[4])
local now, current = period_clock(ARGV[1], ARGV[2])
if not current then return { version, now, 0 } end
local n = #ARGV - 2
local xps = redis.call('ZMSCORE', KEYS[1], unpack(ARGV, 3))
local ranks = {}
for i = 1, n do
  if xps[i] and is_hidden(xps[i]) then xps[i] = false end
  ranks[i] = xps[i] and redis.call('ZREVRANK', KEYS[1], ARGV[i + 2])
end
return {
  version,
  now,
  1,
  redis.call('HGET', KEYS[3], 'curve'),
  xps,
  ranks,
  redis.call('HMGET', KEYS[2], unpack(ARGV, 3)),
  redis.call('ZMSCORE', KEYS[5], unpack(ARGV, 3)),
  redis.call('ZMSCORE', KEYS[6], unpack(ARGV, 3))
}
