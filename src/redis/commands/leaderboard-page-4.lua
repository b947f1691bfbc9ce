--[[
  One page of the leaderboard, read consistently with the server's curve and data version.
  No per-entry work in Lua: the caller decodes board members and records.

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] members   HASH board member -> record
  KEYS[3] settings  HASH curve, multiplier_hundredths
  KEYS[4] version   STRING the server's data version

  ARGV[1] first 0-based rank of the page
  ARGV[2] last 0-based rank of the page

  Returns { version|false, total, curve|false, { board member... }, { xp... }, { record|false... } }
  in rank order.
  The curve is its name, or custom:<settings epoch> for a custom one (includes/shown-curve.lua).
]]
--- @include "shown-curve"

local entries = redis.call('ZREVRANGE', KEYS[1], ARGV[1], ARGV[2])
local result = {
  redis.call('GET', KEYS[4]),
  redis.call('ZCARD', KEYS[1]),
  shown_curve(KEYS[3]),
  entries
}
if #entries > 0 then
  result[5] = redis.call('ZMSCORE', KEYS[1], unpack(entries))
  result[6] = redis.call('HMGET', KEYS[2], unpack(entries))
else
  result[5] = {}
  result[6] = {}
end
return result
