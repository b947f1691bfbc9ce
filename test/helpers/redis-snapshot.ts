// A byte-exact picture of every key under a prefix (type, DUMP payload, TTL), so a test can
// show that a refused write changed nothing at all.
import type { Redis } from 'ioredis'

export type Snapshot = Record<string, { type: string, dump: string | null, expires: boolean }>

export async function allKeys (redis: Redis, match = '*'): Promise<string[]> {
  const keys: string[] = []
  let cursor = '0'
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000)
    keys.push(...batch)
    cursor = next
  } while (cursor !== '0')
  return [...new Set(keys)].sort()
}

export async function snapshot (redis: Redis, match = '*'): Promise<Snapshot> {
  const keys = await allKeys(redis, match)
  const pipeline = redis.pipeline()
  for (const key of keys) pipeline.type(key).dumpBuffer(key).pttl(key)
  const replies = await pipeline.exec() ?? []
  const out: Snapshot = {}
  keys.forEach((key, i) => {
    const [type, dump, ttlMs] = replies.slice(3 * i, 3 * i + 3).map(([err, value]) => {
      if (err !== null) throw err
      return value
    }) as [string, Buffer | null, number]
    out[key] = { type, dump: dump === null ? null : dump.toString('hex'), expires: ttlMs >= 0 }
  })
  return out
}

/**
 * `snapshot` without the writers' operation replies (the `…:ops:<bucket>` hashes of
 * src/writer/operations.ts): a write refused inside Redis keeps its reply there, so that a resend
 * is answered the same, but changes none of the server's data, which is what this compares.
 */
export async function dataSnapshot (redis: Redis, match = '*'): Promise<Snapshot> {
  const all = await snapshot(redis, match)
  return Object.fromEntries(Object.entries(all).filter(([key]) => !/:ops:\d+$/.test(key)))
}
