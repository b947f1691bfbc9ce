--[[
  Gives a public board's slug back to the registry (src/settings/public-slugs.ts), if the server
  still holds it: a server that moved to another slug, or made its board private with no slug.

  KEYS[1] slugs  HASH slug -> server id

  ARGV[1] slug
  ARGV[2] the server's id

  Returns 1 when released, 0 when the server did not hold it (nothing changed).
]]
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
return redis.call('HDEL', KEYS[1], ARGV[1])
