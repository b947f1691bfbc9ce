-- Redis's clock in Unix milliseconds: every instance and writer reads the same time.
local function now_ms ()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
