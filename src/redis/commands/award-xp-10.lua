--[[
  Adds floor(award * multiplier) XP to a member, creating the member if needed, and counts the
  gain into the current week's and month's period boards (includes/periods.lua). The award
  itself is includes/award.lua's, which award-batch-10.lua applies to many.

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] members   HASH board member -> record (see includes/records.lua)
  KEYS[3] stats     HASH aggregates
  KEYS[4] settings  HASH curve, multiplier_hundredths
  KEYS[5] version   STRING the server's data version
  KEYS[6] ops       HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[7] ops_prev  HASH the same, the previous bucket
  KEYS[8] week      ZSET board member -> xp gained in the current ISO week
  KEYS[9] month     ZSET board member -> xp gained in the current UTC month
  KEYS[10] hidden   HASH board member -> why the user is hidden (includes/visibility.lua)

  ARGV[1] board member (complemented, zero-padded user_id)
  ARGV[2] award, a positive integer
  ARGV[3] username, or '' to leave it as it is
  ARGV[4] the highest XP a member may hold
  ARGV[5] operation id
  ARGV[6] how long a bucket's hash lives, ms
  ARGV[7] ARGV[8] the window [from, until), Unix ms, in which KEYS[8] and KEYS[9] are current
  ARGV[9] ARGV[10] when the week's and the month's boards expire, Unix ms
  ARGV[11] display name, '' to leave it as it is, or "\31" to clear it (includes/profile.lua)
  ARGV[12] avatar URL, the same way

  Returns { 1, new_xp, gained } on success,
          { -1, old_xp, gained } when the award would pass the XP limit (nothing changed),
          { -2, now_ms } when Redis's clock is outside the window (nothing changed, nothing
                        remembered: the caller retries with the periods of now_ms);
  an operation already applied returns its first reply and changes nothing.
]]
--- @include "award"
--- @include "version"

local done = replay(KEYS[6], KEYS[7], ARGV[5])
if done then return done end

local now, current = period_clock(ARGV[7], ARGV[8])
if not current then return { OUTSIDE_PERIOD_WINDOW, now } end

local deltas = new_deltas()
local reply, changed = award_one(
  { board = KEYS[1], members = KEYS[2], hidden = KEYS[10], week = KEYS[8], month = KEYS[9] },
  { member = ARGV[1], award = ARGV[2], username = ARGV[3], display = ARGV[11], avatar = ARGV[12] },
  { hundredths = multiplier_hundredths(KEYS[4]), max_xp = tonumber(ARGV[4]), week_expire_at = ARGV[9], month_expire_at = ARGV[10] },
  deltas)
if changed then
  apply_deltas(KEYS[3], deltas)
  bump_version(KEYS[5])
end
return remember(KEYS[6], ARGV[5], ARGV[6], reply)
