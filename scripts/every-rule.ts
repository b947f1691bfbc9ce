// The rules' benchmarks' server (scripts/bench-rules.ts, scripts/bench-award-scripts.ts): every
// rule on, and the role and channel ids an award names to meet its multipliers.
import type { GuildSettingsInput } from '../src/writer/leaderboard-writer.js'

export const [ROLE_A, ROLE_B, ROLE_C, CHANNEL] = ['900000000000000001', '900000000000000002', '900000000000000003', '900000000000000009']

/**
 * A minute's cooldown, a daily cap no member reaches (still counted and checked), roles ×1.5 and
 * ×2 and a channel ×1.25 multiplied, a ×2 boost running from an hour before `nowMs` for a day,
 * ten role rewards.
 */
export function everyRule (nowMs: number): GuildSettingsInput {
  return {
    cooldownSeconds: 60,
    dailyXpCap: 1_000_000,
    multipliers: { roles: { [ROLE_A]: 1.5, [ROLE_B]: 2 }, channels: { [CHANNEL]: 1.25 }, stacking: 'multiply' },
    boosts: [{ multiplier: 2, startsAt: new Date(nowMs - 3600_000), endsAt: new Date(nowMs + 86_400_000) }],
    roleRewards: Array.from({ length: 10 }, (_, i) => ({ level: i + 1, roleId: String(910_000_000_000_000_000n + BigInt(i)) })),
    roleRewardsMode: 'stack'
  }
}
