--[[
  Queues a `ping` event for one webhook (the others pass over it), in order behind the events
  queued before it.

  KEYS[1] webhooks      HASH webhook id -> JSON record (includes/webhooks.lua)
  KEYS[2] event_subscriptions HASH who listens to the server's events (includes/events.lua)
  KEYS[3] events        STREAM the server's events

  ARGV[1] the webhook's id

  Returns { 1, the event's stream id }, { 0 } when there is no such webhook, { -1, disabled_at
  (Unix ms) } when it is disabled.
]]
--- @include "events"

local json = redis.call('HGET', KEYS[1], ARGV[1])
if not json then return { 0 } end
local hook = cjson.decode(json)
if hook.disabled_at ~= nil then return { -1, hook.disabled_at } end
local ctx = events_context(KEYS[2], KEYS[3])
-- An enabled webhook wants at least one type, so ctx is set and webhooks are listening.
local id = emit_event(ctx, 'ping', { 'webhook', ARGV[1] })
ctx.wake = true
events_done(ctx)
return { 1, id }
