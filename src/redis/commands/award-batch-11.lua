--[[
  Many XP awards to one server in one call, each exactly as award-xp-11.lua applies one
  (includes/award.lua: the rules, the period and day boards), in order. The call is one operation
  (its id remembered with its whole reply, so a resent call is applied once); an award may also
  carry an operation id of its own (a Discord message id, say), remembered with its reply as
  award-xp remembers one, so it is applied once across calls too. The aggregates and the data
  version move once for the call.

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] members   HASH board member -> record (see includes/records.lua)
  KEYS[3] stats     HASH aggregates
  KEYS[4] settings  HASH the server's settings (includes/rules.lua reads the rules and the epoch)
  KEYS[5] version   STRING the server's data version
  KEYS[6] ops       HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[7] ops_prev  HASH the same, the previous bucket
  KEYS[8] week      ZSET board member -> xp gained in the current ISO week
  KEYS[9] month     ZSET board member -> xp gained in the current UTC month
  KEYS[10] day      ZSET board member -> xp gained in the server's current day (its time zone)
  KEYS[11] cooldowns ZSET board member -> Unix ms of its last award that added XP

  ARGV[1] the highest XP a member may hold
  ARGV[2] how long a bucket's hash lives, ms
  ARGV[3] ARGV[4] the window [from, until), Unix ms, in which KEYS[8] to KEYS[10] are current
          and the gains were computed (the boosts running throughout it)
  ARGV[5] ARGV[6] when the week's and the month's boards expire, Unix ms
  ARGV[7] the call's operation id
  ARGV[8] the settings epoch the gains were computed at
  ARGV[9] when the day's board expires, Unix ms
  then 4 per award i (from 0), at ARGV 10 + 4i to 13 + 4i: board member, gain (an integer from 0:
          the award with its multipliers, src/rules/gain.ts), username ('' to leave it as it is),
          its own operation id or ''

  Returns, for each award in order, 4 values: its status (1 awarded, 3 awarded up to the daily
  cap; not applied, nothing changed: -1 over the XP limit, -4 in the cooldown, -5 at the daily
  cap), XP after it (as it stands, when not applied), XP gained, and 1 when its own operation was
  applied before (these are its first reply's, and nothing was applied now), else 0; then, for
  each award whose level crossed a role reward's (includes/rules.lua), 3 values: its position
  (from 1), the roles to add and to remove (comma-separated ids, '' for none). Or, with nothing
  changed: { -2, now_ms } when Redis's clock is outside the window (the caller retries with the
  calendar of now_ms), { -8, epoch } when the settings' epoch is not ARGV[8] (the caller reads
  the settings again). A call already applied returns its first reply and changes nothing.
]]
--- @include "award"
--- @include "version"

local done = replay(KEYS[6], KEYS[7], ARGV[7])
if done then return done end

local now, current = period_clock(ARGV[3], ARGV[4])
if not current then return { OUTSIDE_PERIOD_WINDOW, now } end
local rules, epoch = load_rules(KEYS[4], ARGV[8])
if not rules then return { SETTINGS_CHANGED, epoch } end

local k = { board = KEYS[1], members = KEYS[2], week = KEYS[8], month = KEYS[9], day = KEYS[10], cooldowns = KEYS[11] }
local s = { rules = rules, now = now, max_xp = tonumber(ARGV[1]) }
local deltas = new_deltas()
local replies, roles = {}, {}
local any, gained_any = false, false
local n = 0
for i = 10, #ARGV, 4 do
  n = n + 1
  local op = ARGV[i + 3]
  local reply, changed = op ~= '' and replay(KEYS[6], KEYS[7], op), false
  local replayed = 0
  if reply then
    reply, replayed = full_reply(reply), 1
  else
    reply, changed = award_one(k, { member = ARGV[i], gained = ARGV[i + 1], username = ARGV[i + 2] }, s, deltas)
    if op ~= '' then remember(KEYS[6], op, ARGV[2], reply) end
  end
  replies[#replies + 1] = reply[1]
  replies[#replies + 1] = reply[2]
  replies[#replies + 1] = reply[3]
  replies[#replies + 1] = replayed
  if reply[4] ~= '' or reply[5] ~= '' then
    roles[#roles + 1] = n
    roles[#roles + 1] = reply[4]
    roles[#roles + 1] = reply[5]
  end
  any = any or changed
  gained_any = gained_any or (changed and reply[3] > 0)
end
for _, value in ipairs(roles) do replies[#replies + 1] = value end
if any then
  apply_deltas(KEYS[3], deltas)
  if gained_any then expire_boards(k, ARGV[5], ARGV[6], ARGV[9]) end
  trim_cooldowns(rules, KEYS[11], now)
  bump_version(KEYS[5])
end
return remember(KEYS[6], ARGV[7], ARGV[2], replies)
