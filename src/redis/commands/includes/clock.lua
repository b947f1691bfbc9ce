-- Redis's clock: every instance and writer reads the same time.
--- @include "numbers"

-- Redis's clock in Unix milliseconds, and in microseconds (a data version's, includes/version.lua).
local function clock_now ()
  local time = redis.call('TIME')
  local seconds, micros = num(time[1]), num(time[2])
  return seconds * 1000 + math.floor(micros / 1000), seconds * 1000000 + micros
end

-- Redis's clock in Unix milliseconds.
local function now_ms ()
  return (clock_now())
end
