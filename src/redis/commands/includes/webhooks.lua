-- A server's webhooks: HASH webhook id -> JSON { url, events = [types], secret, created_at,
-- disabled_at, disabled_reason } (src/webhooks/webhook-store.ts), and their delivery state:
-- HASH webhook id -> JSON { cursor = the last event done with (a stream id), seq = its number,
-- failures = attempts failed in a row, retry_at = Unix ms of the next attempt, 0 for at once }.
--- @include "clock"

-- Counts the event types the enabled webhooks want into the subscriptions hash (its `type:*`
-- fields), which the write scripts read (includes/events.lua); returns the enabled webhooks.
local function recount_subscriptions (webhooks_key, subscriptions_key)
  local counts, enabled = {}, 0
  for _, json in ipairs(redis.call('HVALS', webhooks_key)) do
    local hook = cjson.decode(json)
    if hook.disabled_at == nil then
      enabled = enabled + 1
      for _, event_type in ipairs(hook.events) do counts[event_type] = (counts[event_type] or 0) + 1 end
    end
  end
  for _, field in ipairs(redis.call('HKEYS', subscriptions_key)) do
    if string.sub(field, 1, 5) == 'type:' and counts[string.sub(field, 6)] == nil then redis.call('HDEL', subscriptions_key, field) end
  end
  for event_type, n in pairs(counts) do redis.call('HSET', subscriptions_key, 'type:' .. event_type, n) end
  return enabled
end

-- Stream ids ("<ms>-<n>") as two numbers, compared in order.
local function stream_id_parts (id)
  local ms, n = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(n)
end

local function stream_id_before (a, b)
  local a_ms, a_n = stream_id_parts(a)
  local b_ms, b_n = stream_id_parts(b)
  return a_ms < b_ms or (a_ms == b_ms and a_n < b_n)
end

-- The stream's last entry id, or '0-0' when it has none.
local function last_event_id (events_key)
  local last = redis.call('XREVRANGE', events_key, '+', '-', 'COUNT', 1)[1]
  if last == nil then return '0-0' end
  return last[1]
end
