--[[
  Records what became of a webhook's next event, for the instance that holds the server's
  lease: delivered or given up (the cursor moves past it), failed (the cursor stays; the next
  attempt is at retry_at), or the receiver gone (`410`: the webhook is disabled). The attempts go
  to the webhook's deliveries log (the last 100 kept). Events every enabled webhook is done with,
  and older than a minute (the live streams read them each second), are trimmed from the stream.

  KEYS[1] lease         STRING the instance that delivers the server's events
  KEYS[2] webhooks      HASH webhook id -> JSON record (includes/webhooks.lua)
  KEYS[3] webhook_state HASH webhook id -> JSON delivery state
  KEYS[4] deliveries    LIST the webhook's last delivery attempts, newest first
  KEYS[5] event_subscriptions HASH who listens to the server's events (includes/events.lua)
  KEYS[6] events        STREAM the server's events

  ARGV[1] the lease holder's id
  ARGV[2] the webhook's id
  ARGV[3] the cursor the holder read (the state must still hold it)
  ARGV[4] the new cursor (a stream id), and ARGV[5] its event's number
  ARGV[6] failures in a row (0 after a delivery), and ARGV[7] when to try next (Unix ms, 0: at once)
  ARGV[8] why the webhook is disabled ('' to leave it enabled)
  then    the attempts to log, JSON each, oldest first

  Returns 1 when recorded; 0 when the lease is not held (nothing changed), -1 when the webhook
  is gone, -2 when its cursor moved on meanwhile.
]]
--- @include "webhooks"

if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local json = redis.call('HGET', KEYS[2], ARGV[2])
if not json then return -1 end
local state = cjson.decode(redis.call('HGET', KEYS[3], ARGV[2]) or '{}')
if state.cursor ~= ARGV[3] then return -2 end

local now = now_ms()
redis.call('HSET', KEYS[3], ARGV[2], cjson.encode({ cursor = ARGV[4], seq = tonumber(ARGV[5]), failures = tonumber(ARGV[6]), retry_at = tonumber(ARGV[7]) }))
if #ARGV > 8 then
  redis.call('LPUSH', KEYS[4], unpack(ARGV, 9))
  redis.call('LTRIM', KEYS[4], 0, 99)
end
if ARGV[8] ~= '' then
  local hook = cjson.decode(json)
  hook.disabled_at = now
  hook.disabled_reason = ARGV[8]
  redis.call('HSET', KEYS[2], ARGV[2], cjson.encode(hook))
  recount_subscriptions(KEYS[2], KEYS[5])
end

if ARGV[4] ~= ARGV[3] then
  local keep = string.format('%d-0', now - 60000)
  local hooks = redis.call('HGETALL', KEYS[2])
  for i = 1, #hooks, 2 do
    if cjson.decode(hooks[i + 1]).disabled_at == nil then
      local other = cjson.decode(redis.call('HGET', KEYS[3], hooks[i]) or '{}')
      if other.cursor ~= nil and stream_id_before(other.cursor, keep) then keep = other.cursor end
    end
  end
  redis.call('XTRIM', KEYS[6], 'MINID', '~', keep)
end
return 1
