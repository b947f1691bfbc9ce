--[[
  Many XP awards to one server in one call, each exactly as award-xp-21.lua applies one
  (includes/award.lua: the rules, the period boards, the season's and the day's), in order. The
  call is one operation (its id remembered with its whole reply, so a resent call is applied
  once); an award may also carry an operation id of its own (a Discord message id, say),
  remembered with its reply as award-xp remembers one, so it is applied once across calls too.
  The aggregates and the data version move once for the call; each award appends the events it
  causes (includes/events.lua).

  KEYS[1] board      ZSET board member -> xp
  KEYS[2] members    HASH board member -> record (see includes/records.lua)
  KEYS[3] stats      HASH aggregates
  KEYS[4] settings   HASH the settings, and their `epoch` (includes/rules.lua reads the rules)
  KEYS[5] version    STRING the server's data version
  KEYS[6] ops        HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[7] ops_prev   HASH the same, the previous bucket
  KEYS[8] week       ZSET board member -> xp gained in the current ISO week
  KEYS[9] month      ZSET board member -> xp gained in the current UTC month
  KEYS[10] event_subscriptions HASH who listens to the server's events (includes/events.lua)
  KEYS[11] events    STREAM the server's events
  KEYS[12] season    ZSET board member -> xp gained in the current season
  KEYS[13] day       ZSET the day's gains as an earlier version kept them (read only, while it exists)
  KEYS[14] day_gains HASH board member -> xp gained in the server's current day (with KEYS[13], the daily cap's count)
  KEYS[15] day_start HASH board member -> visible xp before its first change in the day
  KEYS[16] hist      HASH the server's history (`latest_day`, `since`)
  KEYS[17] cooldowns ZSET board member -> Unix ms of its last award that added XP, as earlier
                     versions kept it (read and written while it exists: includes/cooldowns.lua)
  KEYS[18] hidden    HASH board member -> why the user is hidden (includes/visibility.lua)
  KEYS[19] cooldown_hour HASH board member -> Unix ms of its last award that added XP in the
                     current hour of the window (src/writer/calendar-writes.ts)
  KEYS[20] cooldown_hour_prev HASH the same, the hour before
  KEYS[21] cooldown_hour_old  HASH the same, the hour before that (deleted when the current one begins)

  ARGV[1] the highest XP a member may hold
  ARGV[2] how long a bucket's hash lives, ms
  ARGV[3] ARGV[4] the window [from, until), Unix ms, in which the week's, the month's and the
          day's keys (KEYS[8], KEYS[9], KEYS[13] to KEYS[15]) and the cooldowns' hours (KEYS[19]
          to KEYS[21]) are current and the gains were computed (the boosts running throughout it)
  ARGV[5] ARGV[6] when the week's and the month's boards expire, Unix ms
  ARGV[7] the call's operation id
  ARGV[8] the settings' epoch the gains were computed at
  ARGV[9] when the current season ends, Unix ms, or '' (never by itself)
  ARGV[10] the day's label (YYYY-MM-DD)
  ARGV[11] when the day's keys expire, Unix ms
  then 6 per award i (from 0), at ARGV 12 + 6i to 17 + 6i: board member, gain (an integer from 0:
          the award with its multipliers, src/rules/gain.ts), username ('' to leave it as it is),
          its own operation id or '', display name and avatar URL ('' to leave each as it is,
          "\31" to clear it: includes/profile.lua); at most a few thousand awards (the writer
          sends 250 a call): the call's cooldowns and day's gains are written by one command each

  Returns, for each award in order, 4 values: its status (1 awarded, 3 awarded up to the daily
  cap; not applied, nothing changed: -1 over the XP limit, -4 in the cooldown, -5 at the daily
  cap), XP after it (as it stands, when not applied), XP gained, and 1 when its own operation was
  applied before (these are its first reply's, and nothing was applied now), else 0; then, for
  each award whose XP crossed a role reward's level (includes/rules.lua), 3 values: its position
  (from 1), the roles to add and to remove (comma-separated ids, '' for none). Or, with nothing
  changed, { -2, now_ms } when Redis's clock is outside the window, { -3, epoch } when the
  settings' epoch moved, { -4, now_ms } when the current season is due to end (award-xp-21.lua
  says what the caller does; a reply of two elements is one of these). A call already applied
  returns its first reply and changes nothing.
]]
--- @include "award"
--- @include "version"

local done = replay(KEYS[6], KEYS[7], ARGV[7])
if done then return done end

local rules = load_rules(KEYS[4])
local now, refusal = calendar_check(KEYS[4], ARGV[8], ARGV[3], ARGV[4], ARGV[9], rules.epoch)
if refusal then return refusal end

local k = { board = KEYS[1], members = KEYS[2], settings = KEYS[4], hidden = KEYS[18], week = KEYS[8], month = KEYS[9], season = KEYS[12],
            cooldowns = cooldown_keys(KEYS[19], KEYS[20], KEYS[21], KEYS[17]) }
local events = events_context(KEYS[10], KEYS[11])
if events then events.curve = rules.curve end
local s = { rules = rules, now = now, max_xp = tonumber(ARGV[1]), events = events,
            day = { legacy = KEYS[13], gains = KEYS[14], day_start = KEYS[15], hist = KEYS[16], label = ARGV[10], expire_at = ARGV[11], now = now } }
local deltas = new_deltas()
begin_cooldowns(rules)
begin_day_counts(s.day)
-- Each award's values go straight into the flat reply (a table an award is garbage for Lua's
-- collector, a fifth of Redis's time under awards); the roles come after every award's four.
local replies, roles = {}, {}
local r, o = 0, 0
local any = false
local n = 0
for i = 12, #ARGV, 6 do
  n = n + 1
  local op = ARGV[i + 3]
  local done_before = op ~= '' and replay(KEYS[6], KEYS[7], op)
  local status, xp, gained, add, remove, changed
  local replayed = 0
  if done_before then
    local reply = full_reply(done_before)
    status, xp, gained, add, remove, replayed = reply[1], reply[2], reply[3], reply[4], reply[5], 1
  else
    status, xp, gained, add, remove, changed = award_one(k, ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 4], ARGV[i + 5], s, deltas)
    if op ~= '' then remember(KEYS[6], op, ARGV[2], { status, xp, gained, add, remove }) end
    if changed then any = true end
  end
  replies[r + 1], replies[r + 2], replies[r + 3], replies[r + 4] = status, xp, gained, replayed
  r = r + 4
  if add ~= '' or remove ~= '' then
    roles[o + 1], roles[o + 2], roles[o + 3] = n, add, remove
    o = o + 3
  end
end
for j = 1, o do replies[r + j] = roles[j] end
end_day_counts(s.day)
if any then
  apply_deltas(KEYS[3], deltas)
  if s.periods_grew then expire_periods(k, ARGV[5], ARGV[6]) end
  write_cooldowns(rules, k.cooldowns)
  expire_cooldowns(rules, k.cooldowns, now)
  bump_version(KEYS[5])
  events_done(events)
end
return remember(KEYS[6], ARGV[7], ARGV[2], replies)
