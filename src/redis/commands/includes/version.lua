-- The server's data version: every write script moves it, so a reader (and an ETag) can tell
-- whether anything changed. It follows Redis's clock in microseconds (one more than the stored
-- version when writes come faster than the clock moves), never the stored counter alone: Redis
-- that comes back older (a restart from an older RDB or AOF, a failover to a replica that missed
-- the last writes) holds an older version, and counting on from it would hand out numbers that
-- already named other data. The clock is past every version it gave before, so a version is
-- never reused, also after the server's keys are deleted. (It assumes Redis's clock does not go
-- back, and that two nodes' clocks differ by less than a failover takes.)
local function bump_version (key)
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
  local current = tonumber(redis.call('GET', key) or 0) or 0
  if current >= now then now = current + 1 end
  redis.call('SET', key, string.format('%d', now))
end
