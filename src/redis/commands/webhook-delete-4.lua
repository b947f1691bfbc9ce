--[[
  Removes a webhook, its delivery state and its deliveries log.

  KEYS[1] webhooks      HASH webhook id -> JSON record (includes/webhooks.lua)
  KEYS[2] webhook_state HASH webhook id -> JSON delivery state
  KEYS[3] deliveries    LIST the webhook's last delivery attempts
  KEYS[4] event_subscriptions HASH who listens to the server's events (includes/events.lua)

  ARGV[1] the webhook's id

  Returns 1, or 0 when the server has no such webhook.
]]
--- @include "webhooks"

if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
recount_subscriptions(KEYS[1], KEYS[4])
return 1
