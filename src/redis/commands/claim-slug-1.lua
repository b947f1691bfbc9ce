--[[
  Claims a public board's slug for a server in the installation's registry of slugs, which keeps
  each slug to one server (src/settings/public-slugs.ts). A slug held by a server whose settings
  no longer name it (a change that never finished, or was moved away from) is stale: the caller
  checks that server's settings and names it, and the claim takes the slug over only from it.

  KEYS[1] slugs  HASH slug -> server id

  ARGV[1] slug
  ARGV[2] the claiming server's id
  ARGV[3] the server the caller found holding the slug stale, or ''

  Returns { 1 } when the slug is the server's now (or was already), { 0, holder } when another
  server holds it (nothing changed).
]]
local holder = redis.call('HGET', KEYS[1], ARGV[1])
if holder and holder ~= ARGV[2] and holder ~= ARGV[3] then return { 0, holder } end
if holder ~= ARGV[2] then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return { 1 }
