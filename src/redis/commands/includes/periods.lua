-- Period boards: per ISO week and UTC month, board member -> XP awarded in that period. The
-- caller names the current period's keys from its estimate of Redis's clock, with the window
-- [from, until) of times at which they are the current ones (src/periods/periods.ts); a script
-- checks Redis's clock against that window, so Redis time, not the caller's, decides the period.
--- @include "clock"
--- @include "numbers"
--- @include "visibility"

-- A writer's reply when Redis's clock is outside the window (src/redis/script-status.ts).
local OUTSIDE_PERIOD_WINDOW = -2

-- Redis's clock in ms, and whether it is inside [from, to).
local function period_clock (from, to)
  local now = now_ms()
  return now, now >= tonumber(from) and now < tonumber(to)
end

-- Counts `gained` (> 0) XP into a period board, for a member shown or `hidden` (`digits`: as
-- add_gain of includes/visibility.lua takes it); returns whether
-- the member is new to it. The board's expiry is the caller's to set, once per script call that
-- added a member to it (expire_periods in includes/award.lua): only a new member can be the
-- key's first, so a call that adds none leaves the expiry as the key has it.
local function count_in_period (key, member, gained, hidden, digits)
  return add_gain(key, member, gained, hidden, digits)
end
