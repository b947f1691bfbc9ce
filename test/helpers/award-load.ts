// Writers awarding XP to one server while a test makes Redis move or forget things: bots over
// the write API (each batch under its own Idempotency-Key, sent again on a 503 as its
// retry-after says, sooner) and bots with the library (each awardMany under its own operation
// id, called again with it while its outcome is unknown). It sums the gains the writers were
// told of, so a test can hold the board to it: nothing lost, nothing applied twice.
import { setTimeout as sleep } from 'node:timers/promises'
import type { buildAdminApp } from '../../src/admin/admin-app.js'
import type { LeaderboardWriter } from '../../src/writer/leaderboard-writer.js'
import type { RedisClient } from '../../src/redis/client.js'
import type { KeyBuilder } from '../../src/redis/keys.js'
import { WriteOutcomeUnknownError } from '../../src/errors.js'

export interface AwardLoadOptions {
  admin: ReturnType<typeof buildAdminApp>
  /** A write-API token's plaintext, with scope `write` on the server. */
  token: string
  writer: LeaderboardWriter
  guildId: string
  overHttp?: number
  withLibrary?: number
}

export interface AwardLoadSummary {
  /** XP the writers were told was added (the sum of `gained`). */
  acknowledged: number
  /** Anything but a 200 or a 503 over HTTP, any error but WriteOutcomeUnknownError from the library. */
  failures: string[]
  /** e.g. `812 requests {"200":806,"503":6}, 6 sent again` */
  counted: string
}

/** Ten awards to members of a pool of 200, as a bot's batch of messages; ids as strings, as the API wants them. */
function batch (writerIndex: number, i: number): Array<{ user_id: string, xp: number }> {
  return Array.from({ length: 10 }, (_, j) => ({ user_id: String(3000 + (writerIndex * 37 + i * 11 + j * 7) % 200), xp: 1 + (i + j) % 20 }))
}

/** Starts the writers; stop() lets each finish the batch it is on (answered), then sums up. */
export function awardLoad ({ admin, token, writer, guildId, overHttp = 4, withLibrary = 2 }: AwardLoadOptions): { stop: () => Promise<AwardLoadSummary> } {
  const state = { writing: true }
  const failures: string[] = []
  const statuses = new Map<number, number>()
  let acknowledged = 0
  let retried = 0
  const httpWriters = Array.from({ length: overHttp }, async (_, w) => {
    for (let i = 0; state.writing; i++) {
      const request = {
        method: 'POST' as const,
        url: `/admin/v1/servers/${guildId}/awards`,
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': `http-${w}-${i}` },
        payload: { awards: batch(w, i) }
      }
      for (;;) {
        const res = await admin.inject(request)
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
        if (res.statusCode === 200) {
          acknowledged += (res.json() as { results: Array<{ gained: number }> }).results.reduce((sum, r) => sum + r.gained, 0)
          break
        }
        if (res.statusCode !== 503) { failures.push(`POST awards: ${res.statusCode} ${res.body}`); break }
        retried++
        await sleep(10)
      }
    }
  })
  const libraryWriters = Array.from({ length: withLibrary }, async (_, w) => {
    for (let i = 0; state.writing; i++) {
      const awards = batch(overHttp + w, i).map((a) => ({ userId: a.user_id, xp: a.xp }))
      for (;;) {
        try {
          const results = await writer.awardMany(guildId, awards, { opId: `library-${w}-${i}` })
          acknowledged += results.reduce((sum, r) => sum + r.gained, 0)
          break
        } catch (err) {
          if (!(err instanceof WriteOutcomeUnknownError)) { failures.push(`awardMany: ${String(err)}`); break }
          retried++
          await sleep(10)
        }
      }
    }
  })
  return {
    async stop () {
      state.writing = false
      await Promise.all([...httpWriters, ...libraryWriters])
      const requests = [...statuses.values()].reduce((a, b) => a + b, 0)
      return { acknowledged, failures, counted: `${requests} requests ${JSON.stringify(Object.fromEntries(statuses))}, ${retried} sent again` }
    }
  }
}

/** The XP on the server's board, summed. */
export async function xpOnBoard (redis: RedisClient, keys: KeyBuilder, guildId: string): Promise<number> {
  const board = await redis.zrange(keys.guild(guildId).board, 0, -1, 'WITHSCORES')
  return board.reduce((sum, value, i) => i % 2 === 1 ? sum + Number(value) : sum, 0)
}
