// GET /api/v1/servers/{guild_id}/role-rewards: the roles a server gives at each level, for dashboards.
import { Type } from 'typebox'
import { named } from './common.js'
import { ROLE_REWARDS_MODES } from '../settings/settings.js'

export const RoleRewards = named('RoleRewards', Type.Object({
  mode: Type.Enum([...ROLE_REWARDS_MODES], { type: 'string', description: '`stack`: a member holds every reward of its level and below; `replace`: only those of the highest reward level it reached' }),
  data: Type.Array(Type.Object({
    level: Type.Integer({ minimum: 1 }),
    role_id: Type.String({ description: 'The role (a Discord role id, as a string)' }),
    xp: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: "The XP that reaches the level under the server's curve; null for a level past a custom curve's last" })
  }), { description: 'By level, then role id' })
}, { description: "The server's role rewards" }))
