--[[
  A server's history of stats over closed days (GET /stats/history), read consistently with its
  data version.

  KEYS[1] hist       HASH the server's history (`closed_through`, `closed_from`)
  KEYS[2] hist_stats HASH closed day -> "<total_members>:<total_xp>:<active_members>:<xp_gained>"
  KEYS[3] version    STRING the server's data version

  Returns { version|false, closed_through|false, closed_from|false, { day, stats, ... } }.
]]
local state = redis.call('HMGET', KEYS[1], 'closed_through', 'closed_from')
return { redis.call('GET', KEYS[3]), state[1], state[2], redis.call('HGETALL', KEYS[2]) }
