-- A member's names in its record (includes/records.lua): the username, and the display name and
-- avatar URL of its extension, each kept, replaced or (the extension's two) cleared by a write.
--- @include "records"

-- What a write passes to clear the display name or the avatar URL ('' keeps it): the record's
-- separator, which no name or URL can hold (validation refuses control characters).
local CLEAR = '\31'

-- Records a member's names: `username` ('' keeps it), `display` and `avatar` ('' keeps each,
-- CLEAR clears it), keeping its daily claim and history index; writes only what changed.
local function set_names (members_key, member, username, display, avatar)
  if username == '' and display == '' and avatar == '' then return end
  local streak, claim, name, extension = read_record(members_key, member)
  local new_name = name
  if username ~= '' then new_name = username end
  local new_extension = extension
  if display ~= '' or avatar ~= '' then
    local index, old_display, old_avatar = extension_parts(extension)
    local new_display, new_avatar = old_display, old_avatar
    if display == CLEAR then new_display = '' elseif display ~= '' then new_display = display end
    if avatar == CLEAR then new_avatar = '' elseif avatar ~= '' then new_avatar = avatar end
    if new_display ~= old_display or new_avatar ~= old_avatar then new_extension = make_extension(index, new_display, new_avatar) end
  end
  if new_name ~= name or new_extension ~= extension then write_record(members_key, member, streak, claim, new_name, new_extension) end
end
