--[[
  Adds an award's gain to a member, creating the member if needed, as the server's rules allow
  (includes/rules.lua: cooldown, daily cap), and counts it into the current week's, month's and
  day's boards. The award itself is includes/award.lua's, which award-batch-11.lua applies to many.

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

  ARGV[1] board member (complemented, zero-padded user_id)
  ARGV[2] gain, an integer from 0 (the award with its multipliers, src/rules/gain.ts)
  ARGV[3] username, or '' to leave it as it is
  ARGV[4] the highest XP a member may hold
  ARGV[5] operation id
  ARGV[6] how long a bucket's hash lives, ms
  ARGV[7] ARGV[8] the window [from, until), Unix ms, in which KEYS[8] to KEYS[10] are current
          and the gain was computed
  ARGV[9] ARGV[10] when the week's and the month's boards expire, Unix ms
  ARGV[11] the settings epoch the gain was computed at
  ARGV[12] when the day's board expires, Unix ms

  Returns { status, xp, gained, roles to add, roles to remove } (status 1 or 3 applied; -1, -4,
  -5 not applied, nothing changed: as award-batch-11.lua says; roles as comma-separated ids, ''
  for none); or, with nothing changed and nothing remembered, { -2, now_ms } when Redis's clock is
  outside the window, { -8, epoch } when the settings' epoch is not ARGV[11]. An operation already
  applied returns its first reply and changes nothing.
]]
--- @include "award"
--- @include "version"

local done = replay(KEYS[6], KEYS[7], ARGV[5])
if done then return full_reply(done) end

local now, current = period_clock(ARGV[7], ARGV[8])
if not current then return { OUTSIDE_PERIOD_WINDOW, now } end
local rules, epoch = load_rules(KEYS[4], ARGV[11])
if not rules then return { SETTINGS_CHANGED, epoch } end

local deltas = new_deltas()
local k = { board = KEYS[1], members = KEYS[2], week = KEYS[8], month = KEYS[9], day = KEYS[10], cooldowns = KEYS[11] }
local reply, changed = award_one(k, { member = ARGV[1], gained = ARGV[2], username = ARGV[3] }, { rules = rules, now = now, max_xp = tonumber(ARGV[4]) }, deltas)
if changed then
  apply_deltas(KEYS[3], deltas)
  if reply[3] > 0 then expire_boards(k, ARGV[9], ARGV[10], ARGV[12]) end
  trim_cooldowns(rules, KEYS[11], now)
  bump_version(KEYS[5])
end
return remember(KEYS[6], ARGV[5], ARGV[6], reply)
