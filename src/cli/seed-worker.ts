// The seed command's work, in a worker thread with small heap limits (seedInWorker). The crowd is
// streamed to Redis, so what lives at any time is a few batches and the plan's 12 bytes a member,
// whatever the crowd's size; but V8 sizes a heap by how much is allocated, not by what lives: left
// to itself it grew the young generation to its maximum and let dead batches pile up in the old
// one for longer the longer the seed ran. Bounded, the command takes the same memory for a
// thousand members as for a million (docs/benchmarks.md).
import { extname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import type { Curve } from '../levels/curves.js'
import { seedGuild, type SeedSummary } from '../seed/seed-guild.js'
import { LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { CliError, withRedis } from './connection.js'
import { describeError } from './output.js'

export interface SeedRequest {
  guildId: string
  members: number
  curve?: Curve
  seed?: string
}

type WorkerMessage = { progress: [done: number, total: number] } | { summary: SeedSummary } | { error: string }

/**
 * In MB. What lives in the heap is about 10 MB (the batches in flight are under 1 MB; the plan's
 * arrays are outside it), so the old generation has room to spare: reaching it would end the seed
 * with V8's out-of-memory error.
 */
const HEAP_LIMITS = { maxYoungGenerationSizeMb: 12, maxOldGenerationSizeMb: 48 }
/** A bar is redrawn ten times a second at most: a message per batch would cost more than that. */
const PROGRESS_EVERY_MS = 100

/** Seeds as seedGuild does, through a Redis connection of the worker's own; errors come back as CliError lines. */
export async function seedInWorker (request: SeedRequest, onProgress: (done: number, total: number) => void): Promise<SeedSummary> {
  // The same extension as this module's: .ts under tsx, .js once built.
  const worker = new Worker(new URL(`./seed-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url), {
    workerData: request,
    resourceLimits: HEAP_LIMITS
  })
  return await new Promise((resolve, reject) => {
    let settled = false
    const settle = (outcome: () => void): void => {
      if (settled) return
      settled = true
      outcome()
      // Its work is done (or failed): nothing it may still hold open keeps the command waiting.
      worker.terminate().catch(() => {})
    }
    worker.on('message', (message: WorkerMessage) => {
      if ('progress' in message) onProgress(...message.progress)
      else if ('summary' in message) settle(() => { resolve(message.summary) })
      else settle(() => { reject(new CliError(message.error)) })
    })
    worker.once('error', (err) => { settle(() => { reject(err) }) })
    worker.once('exit', (code) => { settle(() => { reject(new CliError(`the seeding thread stopped (exit code ${code})`)) }) })
  })
}

if (!isMainThread && parentPort !== null) {
  const port = parentPort
  const request = workerData as SeedRequest
  let lastProgressAt = -Infinity
  try {
    await withRedis(async ({ redis, keys }) => {
      const summary = await seedGuild(new LeaderboardWriter(redis, keys), {
        ...request,
        onProgress: (done, total) => {
          const now = performance.now()
          if (now - lastProgressAt < PROGRESS_EVERY_MS && done < total) return
          lastProgressAt = now
          port.postMessage({ progress: [done, total] } satisfies WorkerMessage)
        }
      })
      port.postMessage({ summary } satisfies WorkerMessage)
    })
  } catch (err) {
    port.postMessage({ error: describeError(err) } satisfies WorkerMessage)
  }
}
