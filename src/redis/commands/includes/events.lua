-- Events out. A write script appends the events its write causes to the server's event stream
-- itself, so an applied write never loses its event and a refused one never emits one. The
-- stream is the webhooks' queue (src/webhooks/) and the stats streams' feed (src/live/).
--
-- A script reads the server's subscriptions once (events_context), passes the context to what
-- it applies, and calls events_done once at its end. A server that no webhook and no live stream
-- listens to costs one HGETALL of a key that does not exist, whatever the script applies.
--- @include "clock"
--- @include "levels"
--- @include "numbers"
--- @include "records"

-- "The top" of member.rank_entered_top: the first TOP ranks of the all-time board.
local TOP = 10
-- How long the events of a server that only live streams listen to are kept (the streams read
-- them each second).
local LIVE_KEEP_MS = 60000
-- A stream no event was added to for this long is dropped whole: its last event is past the
-- 24 h its delivery is tried for.
local EVENTS_TTL_MS = 25 * 3600 * 1000
-- The queue's length when the subscriptions hash names none (WEBHOOK_QUEUE_LIMIT's default).
local DEFAULT_QUEUE_LIMIT = 100000

-- The server's listeners for one script call, or nil when nothing listens.
--   subscriptions_key: HASH, `type:<event>` -> enabled webhooks wanting it, `live` -> Unix ms
--   until which a live stream listens, `limit` -> the queue's length, `notify` -> the channel
--   that wakes the delivery workers, `seq` -> the number of the last event.
local function events_context (subscriptions_key, events_key)
  local flat = redis.call('HGETALL', subscriptions_key)
  if #flat == 0 then return nil end
  local ctx = { key = events_key, subscriptions = subscriptions_key, types = {}, hooked = false,
                live = false, limit = DEFAULT_QUEUE_LIMIT, notify = false, wake = false }
  local live_until = 0
  for i = 1, #flat, 2 do
    local field, value = flat[i], flat[i + 1]
    if string.sub(field, 1, 5) == 'type:' then
      if tonumber(value) > 0 then
        ctx.types[string.sub(field, 6)] = true
        ctx.hooked = true
      end
    elseif field == 'live' then live_until = tonumber(value)
    elseif field == 'limit' then ctx.limit = tonumber(value)
    elseif field == 'notify' then ctx.notify = value
    end
  end
  if live_until > 0 and live_until > now_ms() then ctx.live = true end
  if not ctx.hooked and not ctx.live then return nil end
  return ctx
end

-- Whether an event of this type is wanted by a webhook or a live stream.
local function wants (ctx, event_type)
  return ctx ~= nil and (ctx.live or ctx.types[event_type] == true)
end

-- Appends an event and returns its stream id; `fields` is a flat list of name, value
-- (src/webhooks/events.ts reads them).
-- The queue is kept to `limit` events (approximately: whole nodes of the stream are dropped) while
-- a webhook listens, and to the last minute when only live streams do.
local function emit_event (ctx, event_type, fields)
  local seq = redis.call('HINCRBY', ctx.subscriptions, 'seq', 1)
  local id
  if ctx.hooked then
    id = redis.call('XADD', ctx.key, 'MAXLEN', '~', int(ctx.limit), '*', 'type', event_type, 'seq', seq, unpack(fields))
  else
    id = redis.call('XADD', ctx.key, 'MINID', '~', int(now_ms() - LIVE_KEEP_MS), '*', 'type', event_type, 'seq', seq, unpack(fields))
  end
  redis.call('PEXPIRE', ctx.key, EVENTS_TTL_MS)
  if ctx.types[event_type] then ctx.wake = true end
  return id
end

-- Once per script call, after its events: names the events key on the workers' channel when a
-- webhook has something new (a hint: the workers also sweep, so a lost message delays, never loses).
local function events_done (ctx)
  if ctx ~= nil and ctx.wake and ctx.notify then redis.call('PUBLISH', ctx.notify, ctx.key) end
end

-- The member's 0-based rank when its move from old_xp (it is at its new XP on the board now)
-- took it into the top; nil otherwise. Bounded: one ZREVRANK, and only for a member now in the
-- top a ZCOUNT and at most TOP tied members.
local function entered_top (board, member, was_member, old_xp)
  local rank = redis.call('ZREVRANK', board, member)
  if rank >= TOP then return nil end
  if not was_member then return rank end
  -- Ranked above it before: every member with more than old_xp (itself among them now), and
  -- those tied at old_xp whose board member sorts after its own (a reverse range puts them first).
  local above = redis.call('ZCOUNT', board, '(' .. int(old_xp), '+inf') - 1
  if above < TOP then
    for _, other in ipairs(redis.call('ZREVRANGEBYSCORE', board, int(old_xp), int(old_xp), 'LIMIT', 0, TOP - above)) do
      if other > member then above = above + 1 end
    end
  end
  if above >= TOP then return rank end
  return nil
end

-- A member's XP moved from old_xp to new_xp, already on the board (was_member: it was a member
-- before). k: { board, members, settings }. Emits member.leveled_up (the level under the server's
-- current curve) and member.rank_entered_top as wanted.
-- roles: what the role rewards say the bot must change, { add = { role ids }, remove = { … } },
-- or nil (no role rewards): the leveled-up event carries them as they are given here.
local function member_moved (ctx, k, member, was_member, old_xp, new_xp, roles)
  if ctx == nil or (was_member and new_xp <= old_xp) then return end
  local name
  if wants(ctx, 'member.leveled_up') then
    ctx.curve = ctx.curve or redis.call('HGET', k.settings, 'curve') or DEFAULT_CURVE
    local from, to = level_for_xp(ctx.curve, old_xp), level_for_xp(ctx.curve, new_xp)
    if to > from then
      local _, _, known = read_record(k.members, member)
      name = known
      local add, remove = '', ''
      if roles ~= nil then add, remove = table.concat(roles.add, ','), table.concat(roles.remove, ',') end
      emit_event(ctx, 'member.leveled_up', { 'member', member, 'name', name, 'from', from, 'to', to, 'xp', int(new_xp),
                                              'roles_add', add, 'roles_remove', remove })
    end
  end
  if wants(ctx, 'member.rank_entered_top') then
    local rank = entered_top(k.board, member, was_member, old_xp)
    if rank ~= nil then
      if name == nil then
        local _, _, known = read_record(k.members, member)
        name = known
      end
      emit_event(ctx, 'member.rank_entered_top', { 'member', member, 'name', name, 'rank', rank + 1, 'xp', int(new_xp) })
    end
  end
end

-- A season ended (for the seasons' end script): season = { id, name, started_at, ended_at }
-- (Unix ms), top = its final board's first ranks in order, each { member = board member,
-- xp = season XP, name = username or '' }, at most TOP of them.
local function season_ended (ctx, season, top)
  if not wants(ctx, 'season.ended') then return end
  local rows = {}
  for i, entry in ipairs(top) do rows[i] = { entry.member, int(entry.xp), entry.name } end
  emit_event(ctx, 'season.ended', { 'season', int(season.id), 'name', season.name, 'started_at', int(season.started_at),
                                    'ended_at', int(season.ended_at), 'top', cjson.encode(rows) })
end
