--[[
  Adds a webhook to a server. It receives the events added from now on: its cursor starts at
  the stream's last event.

  KEYS[1] webhooks      HASH webhook id -> JSON record (includes/webhooks.lua)
  KEYS[2] webhook_state HASH webhook id -> JSON delivery state
  KEYS[3] event_subscriptions HASH who listens to the server's events (includes/events.lua)
  KEYS[4] events        STREAM the server's events

  ARGV[1] the webhook's id
  ARGV[2] its record, JSON (url, events, secret, created_at)
  ARGV[3] the queue's length (WEBHOOK_QUEUE_LIMIT)
  ARGV[4] the channel that wakes the delivery workers
  ARGV[5] the most webhooks a server may have

  Returns 1, or -1 when the server has ARGV[5] webhooks already (nothing changed).
]]
--- @include "webhooks"

if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[5]) then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local seq = tonumber(redis.call('HGET', KEYS[3], 'seq') or '0')
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode({ cursor = last_event_id(KEYS[4]), seq = seq, failures = 0, retry_at = 0 }))
redis.call('HSET', KEYS[3], 'limit', ARGV[3], 'notify', ARGV[4])
recount_subscriptions(KEYS[1], KEYS[3])
return 1
