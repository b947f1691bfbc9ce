--[[
  Checks a presented API key against its stored record and, when it is valid, stamps its last use.

  KEYS[1] HASH the key's record: hash, guild_id (a one-server key) or servers (a list or '*'),
          plan, created_at, expires_at, revoked_at, ...

  ARGV[1] SHA-256 (hex) of the presented key

  Returns { status, now_ms, guild_id|false, plan|false, expires_at|false, servers|false } where
  status is 'ok', 'unknown' (no record, or the hash differs), 'revoked' or 'expired', and
  servers is the comma-separated list of a key for several servers, or '*' for every server.
]]
--- @include "clock"

local now = now_ms()
local record = redis.call('HMGET', KEYS[1], 'hash', 'guild_id', 'plan', 'expires_at', 'revoked_at', 'servers')
local hash, guild_id, plan, expires_at, revoked_at, servers = record[1], record[2], record[3], record[4], record[5], record[6]
if not hash or hash ~= ARGV[1] then
  return { 'unknown', now, false, false, false, false }
end
if revoked_at then
  return { 'revoked', now, guild_id, plan, expires_at, servers }
end
if expires_at and tonumber(expires_at) <= now then
  return { 'expired', now, guild_id, plan, expires_at, servers }
end
redis.call('HSET', KEYS[1], 'last_used_at', string.format('%d', now))
return { 'ok', now, guild_id, plan, expires_at, servers }
