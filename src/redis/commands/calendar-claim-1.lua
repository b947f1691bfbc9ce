--[[
  The calendar ticker's next servers (src/calendar-ticker/): those whose next day end or season
  end has come, each held back from the other instances' tickers for a while (its time moved on),
  so that instances share the work. A hold only spreads work: the season's end and the day's
  close are exactly once by their own compare-and-sets.

  KEYS[1] servers ZSET server id -> when it is next due, Unix ms

  ARGV[1] how many servers at most
  ARGV[2] how long the servers taken are held back, ms

  Returns { Redis's time in ms, server id... }.
]]
--- @include "clock"

local now = now_ms()
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, ARGV[1])
local held = {}
for i, id in ipairs(due) do
  held[2 * i - 1] = now + tonumber(ARGV[2])
  held[2 * i] = id
end
if #due > 0 then redis.call('ZADD', KEYS[1], 'XX', unpack(held)) end
return { now, unpack(due) }
