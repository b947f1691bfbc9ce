-- One XP award, shared by award-xp (one award) and award-batch (many), for an operation not
-- applied before (the caller checks with replay first, and remembers the reply): the award
-- applied (board, name, period boards, the season's board, the day's) with its change to the
-- aggregates added to `deltas`, which the caller applies (once per call: a batch moves the stats
-- hash with a handful of HINCRBYs, not a handful per award).
--- @include "aggregates"
--- @include "profile"
--- @include "operations"
--- @include "periods"
--- @include "events"
--- @include "calendar-counting"
--- @include "visibility"

-- Statuses, as src/redis/script-status.ts names them.
local AWARDED, OVER_XP_LIMIT = 1, -1

-- k: { board, members, settings, hidden, week, month, season }; a: { member, award, username,
-- display, avatar (includes/profile.lua: '' keeps each) };
-- s: { hundredths, max_xp, week_expire_at, month_expire_at, events (includes/events.lua's context, or nil),
--      day (calendar-counting's day keys) }.
-- A hidden member's award counts into its encoded scores (includes/visibility.lua), not into the
-- aggregates, and causes no public event. Returns the reply { status, xp, gained } and whether
-- anything changed.
local function award_one (k, a, s, deltas)
  local product = tonumber(a.award) * s.hundredths -- exact: both are integers well below 2^53
  local gained = (product - product % 100) / 100
  local score = redis.call('ZSCORE', k.board, a.member)
  local old_xp, hidden = 0, false
  if score then old_xp, hidden = decode_score(score) else hidden = hidden_user(k.hidden, a.member) end
  local new_xp = old_xp + gained
  if new_xp > s.max_xp then
    return { OVER_XP_LIMIT, old_xp, gained }, false
  end
  redis.call('ZADD', k.board, int(encode_score(new_xp, hidden)), a.member)
  set_names(k.members, a.member, a.username, a.display, a.avatar)
  if not hidden then add_xp_change(deltas, old_xp, new_xp) end
  if gained > 0 then
    count_in_period(k.week, a.member, gained, s.week_expire_at, hidden)
    count_in_period(k.month, a.member, gained, s.month_expire_at, hidden)
  end
  count_in_season(k.season, a.member, gained, hidden)
  touch_day(s.day, a.member, gained, score)
  if not hidden then member_moved(s.events, k, a.member, score ~= false, old_xp, new_xp, nil) end
  return { AWARDED, new_xp, gained }, true
end
