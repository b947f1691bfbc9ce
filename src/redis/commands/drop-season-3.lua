--[[
  Drops the oldest kept season when it is past `season_retention` (its board is freed in the
  background: UNLINK), so that at most that many ended seasons are kept. Reads refuse a season
  past it already (season_not_found); this frees its memory. One season a call, oldest first.

  KEYS[1] seasons  HASH the server's seasons (`current`, `oldest`, `<id>`, `name:<id>`)
  KEYS[2] settings HASH the settings (`season_retention`)
  KEYS[3] board    ZSET the ended season's board

  ARGV[1] the season's id
  ARGV[2] the retention when the settings name none

  Returns 1 when it was dropped, 0 when it is not the oldest kept or is still within retention.
]]
local id = tonumber(ARGV[1])
local oldest = tonumber(redis.call('HGET', KEYS[1], 'oldest') or '1')
local current = tonumber(redis.call('HGET', KEYS[1], 'current') or '1')
local retention = tonumber(redis.call('HGET', KEYS[2], 'season_retention') or ARGV[2])
if id ~= oldest or id >= current - retention then return 0 end
redis.call('UNLINK', KEYS[3])
redis.call('HDEL', KEYS[1], id, 'name:' .. id)
redis.call('HSET', KEYS[1], 'oldest', id + 1)
return 1
