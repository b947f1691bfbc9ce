--[[
  One page of the leaderboard, read consistently with the server's curve and data version.
  No per-entry work in Lua: the caller decodes board members and records. Hidden members are
  neither counted nor listed (includes/visibility.lua).

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] members   HASH board member -> record
  KEYS[3] settings  HASH curve, multiplier_hundredths
  KEYS[4] version   STRING the server's data version

  ARGV[1] first 0-based rank of the page
  ARGV[2] last 0-based rank of the page

  Returns { version|false, total, curve|false, { board member... }, { xp... }, { record|false... } }
  in rank order.
]]
--- @include "visibility"

local total = visible_total(KEYS[1])
local entries = redis.call('ZREVRANGE', KEYS[1], ARGV[1], visible_stop(total, ARGV[2]))
local result = {
  redis.call('GET', KEYS[4]),
  total,
  redis.call('HGET', KEYS[3], 'curve'),
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
