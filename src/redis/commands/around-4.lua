--[[
  The members ranked around one member (GET /members/{user_id}/around): ranks r-radius ..
  r+radius, clipped to the board's visible members, read consistently with the server's curve
  and data version. No per-entry work in Lua: the caller decodes board members and records. A
  hidden member is not a member here (includes/visibility.lua).

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] members   HASH board member -> record
  KEYS[3] settings  HASH curve, multiplier_hundredths
  KEYS[4] version   STRING the server's data version

  ARGV[1] board member
  ARGV[2] radius, an integer from 0

  Returns { version|false, total, curve|false, rank (0-based)|false, first (0-based),
  { board member... }, { xp... }, { record|false... } } in rank order; rank is false (and nothing
  follows) when the user is not a member.
]]
--- @include "visibility"

local version = redis.call('GET', KEYS[4])
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or is_hidden(score) then return { version, 0, false, false } end
local rank = redis.call('ZREVRANK', KEYS[1], ARGV[1])
local total = visible_total(KEYS[1])
local radius = tonumber(ARGV[2])
local first = rank - radius
if first < 0 then first = 0 end
local entries = redis.call('ZREVRANGE', KEYS[1], first, visible_stop(total, rank + radius))
return {
  version,
  total,
  redis.call('HGET', KEYS[3], 'curve'),
  rank,
  first,
  entries,
  redis.call('ZMSCORE', KEYS[1], unpack(entries)),
  redis.call('HMGET', KEYS[2], unpack(entries))
}
