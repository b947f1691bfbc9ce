// Demo mode's simulated bot: every second it awards some XP to one of the demo server's leading
// members, through the writer library as a real bot would, so the live page has something to show.
import type { LeaderboardReader } from '../reader/leaderboard-reader.js'
import type { LeaderboardWriter } from '../writer/leaderboard-writer.js'

export interface DemoBotOptions {
  reader: LeaderboardReader
  writer: LeaderboardWriter
  guildId: string
  intervalMs?: number
  /** Told of a failed award (Redis away, say); the bot keeps going. */
  onError?: (err: unknown) => void
}

/** Members among whom the bot picks: enough that the top 10 keeps changing. */
const CONTENDERS = 25

export function startDemoBot ({ reader, writer, guildId, intervalMs = 1000, onError }: DemoBotOptions): { stop: () => void } {
  let contenders: string[] = []
  async function award (): Promise<void> {
    if (contenders.length === 0) contenders = (await reader.page(guildId, 1, CONTENDERS)).data.map((entry) => entry.user_id)
    const userId = contenders[Math.floor(Math.random() * contenders.length)]
    if (userId !== undefined) await writer.awardXp({ guildId, userId, xp: 50 + Math.floor(Math.random() * 450) })
  }
  const timer = setInterval(() => { award().catch((err: unknown) => { onError?.(err) }) }, intervalMs)
  return { stop: () => { clearInterval(timer) } }
}
