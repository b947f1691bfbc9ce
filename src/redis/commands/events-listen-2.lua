--[[
  A live stream listens to a server's events: the write scripts add them to the stream (for
  every type) until ARGV[1] ms from now, by Redis's clock (includes/events.lua).

  KEYS[1] event_subscriptions HASH who listens to the server's events
  KEYS[2] events        STREAM the server's events

  ARGV[1] how long the listening lasts, ms

  Returns the stream's last event id ('0-0' when it has none): the listener reads what follows.
]]
--- @include "webhooks"

redis.call('HSET', KEYS[1], 'live', string.format('%d', now_ms() + tonumber(ARGV[1])))
return last_event_id(KEYS[2])
