--[[
  A server's seasons (GET /seasons): the current one and the ended ones it keeps, read
  consistently with its data version.

  KEYS[1] seasons  HASH the server's seasons (src/seasons/season-state.ts)
  KEYS[2] settings HASH season_retention
  KEYS[3] hist     HASH the server's history (`since`: when the first season began, if none was recorded)
  KEYS[4] version  STRING the server's data version

  Returns { version|false, season_retention|false, since|false, { field, value, ... } (the seasons hash) }.
]]
return { redis.call('GET', KEYS[4]), redis.call('HGET', KEYS[2], 'season_retention'), redis.call('HGET', KEYS[3], 'since'), redis.call('HGETALL', KEYS[1]) }
