--[[
  Close, the day's changes: a chunk of the members the day touched (its day-start hash, final
  once the day ended), put in order of history index for the change records; and the day's
  activity, counted over the members on the visible board at its end that gained XP (the day's
  gains hold only those). A member `order` holds already is skipped: the ranks step put in those
  it gave an index, with their activity (close-day-ranks-11.lua), and HSCAN may give a member
  twice (when the hash is resized during the walk). So a member without a history index goes in
  too, below every index (NO_INDEX), where the changes step skips it. `order` holds only members
  of the day-start hash, so when it holds as many as the hash, the walk has nothing to add (a
  day that touched only members without an index): the first call says it is done. So it does
  in a server's first close (`from` in `fresh` is 0), where no member had an index before it:
  the ranks step has counted the activity of every member on the visible board at the day's end
  and kept the records of those with an index (close-day-ranks-11.lua), and a member it could
  not give one (hidden, or removed since) would go in below every index, to be skipped.

  KEYS[1] lease     STRING the closing lease
  KEYS[2] day_start HASH board member -> visible xp before its first change in the day
  KEYS[3] day       ZSET the day's gains as an earlier version kept them (read where it exists)
  KEYS[4] day_gains HASH board member -> xp gained in the day
  KEYS[5] members   HASH board member -> record
  KEYS[6] snapshot  ZSET the board at the day's end
  KEYS[7] order     ZSET the touched members by history index, being built
  KEYS[8] fresh     HASH the close's own (`from`: close-day-begin-7.lua)

  ARGV[1] the caller's lease token
  ARGV[2] the lease's length, ms
  ARGV[3] the HSCAN cursor ('0' to start)
  ARGV[4] how many fields to read

  Returns { 1, next cursor ('0': done), how many of them gained XP, the XP they gained }, or
  { -6 } when the lease was lost.
]]
--- @include "history"

if not hold_lease(KEYS[1], ARGV[1], ARGV[2]) then return { LEASE_LOST } end
if ARGV[3] == '0' and (is_first_close(KEYS[8]) or redis.call('ZCARD', KEYS[7]) >= redis.call('HLEN', KEYS[2])) then
  return { CLOSE_DONE, '0', 0, 0 }
end
local scan = redis.call('HSCAN', KEYS[2], ARGV[3], 'COUNT', ARGV[4])
local fields = scan[2]
local found, f = {}, 0
for i = 1, #fields, 2 do
  f = f + 1
  found[f] = fields[i]
end
if f == 0 then return { CLOSE_DONE, scan[1], 0, 0 } end
local seen = redis.call('ZMSCORE', KEYS[7], unpack(found, 1, f))
local members, m = missing_from(seen, found, f)
if m == 0 then return { CLOSE_DONE, scan[1], 0, 0 } end
local records = redis.call('HMGET', KEYS[5], unpack(members, 1, m))
local gains = gains_of(KEYS[4], KEYS[3], members, m)
local visible = redis.call('ZMSCORE', KEYS[6], unpack(members, 1, m))
local order, n = {}, 0
local active, gained = 0, 0
for i = 1, m do
  order[n + 1] = records[i] and record_index(records[i]) or NO_INDEX
  order[n + 2] = members[i]
  n = n + 2
  local xp = gains[i] and tonumber(gains[i]) or 0
  if visible[i] and xp > 0 then
    active = active + 1
    gained = gained + xp
  end
end
redis.call('ZADD', KEYS[7], unpack(order, 1, n))
return { CLOSE_DONE, scan[1], active, int(gained) }
