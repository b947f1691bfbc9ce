--[[
  One page of the leaderboard, read consistently with the server's curve.

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] names     HASH user_id -> username
  KEYS[3] settings  HASH curve, multiplier_hundredths

  ARGV[1] first 0-based rank of the page
  ARGV[2] last 0-based rank of the page

  Returns { total, curve|false, user_id_1, xp_1, username_1|false, user_id_2, ... }
  in rank order.
]]
--- @include "ids"

local total = redis.call('ZCARD', KEYS[1])
local curve = redis.call('HGET', KEYS[3], 'curve')
local result = { total, curve }
local entries = redis.call('ZREVRANGE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES')
if #entries == 0 then return result end

local ids = {}
for i = 1, #entries, 2 do
  ids[#ids + 1] = user_id_from_member(entries[i])
end
local names = redis.call('HMGET', KEYS[2], unpack(ids))
for i, id in ipairs(ids) do
  result[#result + 1] = id
  result[#result + 1] = entries[2 * i]
  result[#result + 1] = names[i]
end
return result
