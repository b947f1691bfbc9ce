-- The server's data version: every write script bumps it, so a reader (and an ETag) can tell
-- whether anything changed. A new counter starts from Redis's clock in microseconds, not from 1,
-- so a server whose data was deleted and written again never repeats an old version.
local function bump_version (key)
  if redis.call('INCR', key) == 1 then
    local time = redis.call('TIME')
    redis.call('SET', key, time[1] .. string.format('%06d', tonumber(time[2])))
  end
end
