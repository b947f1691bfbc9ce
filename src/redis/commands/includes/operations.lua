-- Writes applied once. Every write names its operation (an id the writer makes, or one the bot
-- passes, such as the Discord message id) and the script keeps its reply in a hash per time
-- bucket (src/writer/operations.ts): when ioredis resends an unanswered command after a
-- reconnect, or a bot retries, the first reply comes back and nothing is applied twice.
-- Replies are kept as JSON: lua-cjson writes numbers with 14 significant digits, which holds
-- every XP (up to 10^12) and every time in ms exactly.

-- The reply an earlier run of operation `op` gave, from the current or the previous bucket.
local function replay (current, previous, op)
  local reply = redis.call('HGET', current, op) or redis.call('HGET', previous, op)
  if reply then return cjson.decode(reply) end
  return nil
end

-- Keeps a reply, already JSON, as operation `op`'s.
local function remember_json (current, op, ttl_ms, json)
  redis.call('HSET', current, op, json)
  redis.call('PEXPIRE', current, ttl_ms, 'NX')
end

-- Keeps `reply` (a table) as operation `op`'s, and returns it.
local function remember (current, op, ttl_ms, reply)
  remember_json(current, op, ttl_ms, cjson.encode(reply))
  return reply
end
