-- The server's data version: every write script moves it, so a reader (and an ETag) can tell
-- whether anything changed. It follows Redis's clock in microseconds (one more than the stored
-- version when writes come faster than the clock moves), never the stored counter alone: Redis
-- that comes back older (a restart from an older RDB or AOF, a failover to a replica that missed
-- the last writes) holds an older version, and counting on from it would hand out numbers that
-- already named other data. The clock is past every version it gave before, so a version is
-- never reused, also after the server's keys are deleted. (It assumes Redis's clock does not go
-- back, and that two nodes' clocks differ by less than a failover takes.)
-- `now_us` is Redis's clock in µs when the script read it already (calendar_check's): a script
-- runs whole before the next, so its first reading is past every earlier script's too. nil:
-- read here.
--- @include "clock"
local function bump_version (key, now_us)
  local now = now_us
  if now == nil then now = select(2, clock_now()) end
  local current = tonumber(redis.call('GET', key) or 0) or 0
  if current >= now then now = current + 1 end
  redis.call('SET', key, string.format('%d', now))
end
