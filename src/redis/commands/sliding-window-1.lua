--[[
  Sliding-window rate limit over a fixed number of buckets. The window is cut into `buckets`
  slices of `width` ms on Redis's clock; a request is admitted when the requests counted in the
  current slice and the `buckets` slices before it number fewer than `limit`. Those slices
  cover at least the last window, so no span of one window ever admits more than `limit`; they
  cover at most window + width, which is the price of bounded memory (one field per slice).
  Refused requests are not counted.

  The hash also keeps the running count of its slices (field `n`) and the oldest slice it holds
  (`lo`), so an admitted request reads two fields and writes two: the slices themselves are read
  only when the oldest one has left the window (once per slice width at most) and on a refusal.

  KEYS[1] HASH slice index -> requests admitted in that slice; `n` and `lo` as above

  ARGV[1] limit    requests admitted per window
  ARGV[2] window   window length, ms
  ARGV[3] buckets  slices per window
  ARGV[4] '1' to peek: say what a request would get, counting nothing and writing nothing
  ARGV[5] hits     requests arriving together (default 1), taken in turn as if sent one by one:
                   as many are admitted as the limit leaves room for, the rest refused

  Returns { admitted, count, reset_ms, now_ms, refused_reset_ms }: how many of the hits were
  admitted (a peek: 1 if one would be, else 0), the count including them, the time until the
  oldest counted slice leaves (the count falls: what an admitted hit is told), Redis's clock, and,
  when a hit was refused (or a peek would be), the time until enough slices leave for one more
  request to be admitted (what a refused hit is told; else 0).
]]
--- @include "clock"

local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local buckets = tonumber(ARGV[3])
local width = math.ceil(window / buckets)     -- ms per slice
local now = now_ms()
local current = math.floor(now / width)       -- the slice `now` falls in
local oldest = current - buckets              -- the oldest slice still counted
local peek = ARGV[4] == '1'
local hits = tonumber(ARGV[5]) or 1

-- All live slices as { slice, count }, oldest first, dropping the ones that left the window
-- (unless peeking).
local function live_slices ()
  local live, stale, count = {}, {}, 0
  local fields = redis.call('HGETALL', KEYS[1])
  for i = 1, #fields, 2 do
    local slice = tonumber(fields[i])
    if slice then                             -- skip `n` and `lo`
      if slice < oldest then
        stale[#stale + 1] = fields[i]
      else
        live[#live + 1] = { slice, tonumber(fields[i + 1]) }
        count = count + live[#live][2]
      end
    end
  end
  table.sort(live, function (a, b) return a[1] < b[1] end)
  if #stale > 0 and not peek then
    redis.call('HDEL', KEYS[1], unpack(stale))
    if #live > 0 then
      redis.call('HSET', KEYS[1], 'n', count, 'lo', live[1][1])
    else
      redis.call('HDEL', KEYS[1], 'n', 'lo')
    end
  end
  return live, count
end

local meta = redis.call('HMGET', KEYS[1], 'n', 'lo')
local count = tonumber(meta[1]) or 0          -- requests in the live slices
local lo = tonumber(meta[2])                  -- the oldest slice held, nil when none
local live
if lo and lo < oldest then
  live, count = live_slices()
  lo = live[1] and live[1][1]
end

-- The time until enough requests leave for one more to be admitted, for a full window.
local function refused_reset ()
  if not live then live, count = live_slices() end
  local must_leave = count - limit + 1
  local leaving = 0
  for _, entry in ipairs(live) do
    leaving = leaving + entry[2]
    if leaving >= must_leave then return (entry[1] + buckets + 1) * width - now end
  end
  return width
end

if peek then
  if count < limit then return { 1, count, lo and (lo + buckets + 1) * width - now or 0, now, 0 } end
  return { 0, count, 0, now, refused_reset() }
end

local admitted = math.min(hits, math.max(0, limit - count))
if admitted > 0 then
  if redis.call('HINCRBY', KEYS[1], current, admitted) == admitted then
    redis.call('PEXPIRE', KEYS[1], (buckets + 1) * width)
    if not lo then
      lo = current
      redis.call('HSET', KEYS[1], 'lo', lo)
    end
  end
  count = redis.call('HINCRBY', KEYS[1], 'n', admitted)
  -- The newest slice, so the list stays oldest first (refused_reset only sums it in order).
  if live then live[#live + 1] = { current, admitted } end
end
-- A slice stops counting when `current` passes slice + buckets.
local reset = lo and (lo + buckets + 1) * width - now or 0
if admitted == hits then return { admitted, count, reset, now, 0 } end
return { admitted, count, reset, now, refused_reset() }
