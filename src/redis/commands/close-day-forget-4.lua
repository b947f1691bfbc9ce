--[[
  Frees a closed day past history_days (readers stop at `closed_from` already, which the commit
  moved past it): its stats, ranks and change records.

  KEYS[1] hist_stats  HASH closed day -> its stats
  KEYS[2] hist        HASH the server's history (`closed_from`)
  KEYS[3] ranks       STRING the day's ranks
  KEYS[4] changes     STRING the day's change records

  ARGV[1] the day (YYYY-MM-DD)

  Returns 1 when it was freed, 0 when it is still kept (not before `closed_from`).
]]
local from = redis.call('HGET', KEYS[2], 'closed_from')
if not from or ARGV[1] >= from then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('UNLINK', KEYS[3], KEYS[4])
return 1
