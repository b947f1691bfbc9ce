--[[
  Sliding-window rate limit over a fixed number of buckets. The window is cut into `buckets`
  slices of `width` ms on Redis's clock; a request is admitted when the requests counted in the
  current slice and the `buckets` slices before it number fewer than `limit`. Those slices
  cover at least the last window, so no span of one window ever admits more than `limit`; they
  cover at most window + width, which is the price of bounded memory (one field per slice).
  Refused requests are not counted.

  KEYS[1] HASH slice index -> requests admitted in that slice

  ARGV[1] limit    requests admitted per window
  ARGV[2] window   window length, ms
  ARGV[3] buckets  slices per window

  Returns { admitted (1|0), count (including this request if admitted), reset_ms } where
  reset_ms is, when admitted, the time until the oldest counted slice leaves (the count falls),
  and when refused, the time until enough slices leave for one more request to be admitted.
]]
--- @include "clock"

local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local buckets = tonumber(ARGV[3])
local width = math.ceil(window / buckets)     -- ms per slice
local now = now_ms()
local current = math.floor(now / width)       -- the slice `now` falls in
local oldest = current - buckets              -- the oldest slice still counted

local live = {}                               -- { slice, count } still counted, any order
local stale = {}                              -- fields of slices that no longer count
local count = 0                               -- requests in the live slices
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local slice = tonumber(fields[i])
  if slice < oldest then
    stale[#stale + 1] = fields[i]
  else
    local n = tonumber(fields[i + 1])
    live[#live + 1] = { slice, n }
    count = count + n
  end
end
if #stale > 0 then redis.call('HDEL', KEYS[1], unpack(stale)) end

local admitted = count < limit
if admitted then
  redis.call('HINCRBY', KEYS[1], current, 1)
  redis.call('PEXPIRE', KEYS[1], (buckets + 1) * width)
  live[#live + 1] = { current, 1 }
  count = count + 1
end

-- A slice stops counting when `current` passes slice + buckets.
table.sort(live, function (a, b) return a[1] < b[1] end)
local must_leave = admitted and 1 or (count - limit + 1)  -- requests that must leave the window
local leaving = 0
local reset = 0
for _, entry in ipairs(live) do
  leaving = leaving + entry[2]
  if leaving >= must_leave then
    reset = (entry[1] + buckets + 1) * width - now
    break
  end
end
return { admitted and 1 or 0, count, reset }
