// What one update of a board costs Redis by the board's size, with and without ties: the question
// behind an award's Redis CPU (issues 28 and 29), where four of the five sorted sets an award
// updates count gains, on which most members tie. A throwaway redis-server (persistence off);
// for each size N, a sorted set of N board members (the service's complemented ids, of users
// numbered as the award benches number them) scored as a week's gains (10 to 120 XP: twelve
// values, so ties by the ten thousand), the same with every score made distinct by a fraction
// that keeps the members' order (the tie-free format that was considered), and the cooldowns'
// kinds: ZADD at one time a batch (ties), at distinct times, and HSET into a hash. Then U random
// updates of each (ZINCRBY 10, pipelined by 1,000), µs per command inside Redis (INFO
// commandstats), median of R rounds. Then the cooldowns' memory, sorted set against hash, and the
// main thread's time to free each whole (DEL, UNLINK).
//
//   npx tsx scripts/bench-sorted-sets.ts [--sizes 10000,100000,1000000] [--updates U] [--rounds R]
import { parseArgs } from 'node:util'
import { createRedis } from '../src/redis/client.js'
import { boardMember } from '../src/redis/keys.js'
import { benchRedis, type Cleanups, runBenchmark } from './run-benchmark.js'

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,1000000' },
    updates: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' }
  }
})
const SIZES = args.sizes.split(',').map(Number)
const UPDATES = Number(args.updates)
const ROUNDS = Number(args.rounds)
const CHUNK = 1000

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN
/** The award benches' users (scripts/bench-award-scripts.ts). */
const userId = (i: number): string => String(500_000_000_000_000_000n + BigInt(i) * 104_729n)

type Kind = 'gains, ties' | 'gains, no ties' | 'cooldowns, a time a batch' | 'cooldowns, distinct times' | 'cooldowns as a hash'
const KINDS: Kind[] = ['gains, ties', 'gains, no ties', 'cooldowns, a time a batch', 'cooldowns, distinct times', 'cooldowns as a hash']

async function main (cleanups: Cleanups): Promise<void> {
  const { url } = await benchRedis(cleanups, 'sorted-sets')
  const redis = createRedis({ url, offlineQueue: true, commandTimeoutMs: 60_000 })
  cleanups.push(async () => { redis.disconnect() })
  await redis.config('SET', 'appendonly', 'no')
  await redis.config('SET', 'save', '')
  console.log(`| members | ${KINDS.join(' | ')} |`)
  console.log(`|---:|${KINDS.map(() => '---:').join('|')}|`)
  for (const size of SIZES) {
    const members = Array.from({ length: size }, (_, i) => boardMember(userId(i)))
    const cells: string[] = []
    for (const kind of KINDS) {
      const us: number[] = []
      for (let round = 0; round < ROUNDS; round++) {
        await redis.del('set')
        let time = 1_790_000_000_000
        // A score for member i: its gains (the fraction of `no ties` is the member's place in
        // the id order, below 0.5 so it never reaches the next whole XP), or its last award's time.
        const fill = (i: number, j: number): Array<string | number> => {
          const gains = 10 * (1 + Math.floor(Math.random() * 12))
          switch (kind) {
            case 'gains, ties': return [gains, members[i] as string]
            case 'gains, no ties': return [gains + (size - i) / (4 * size), members[i] as string]
            case 'cooldowns, a time a batch': return [time, members[i] as string]
            case 'cooldowns, distinct times': return [time + j / 4096, members[i] as string]
            case 'cooldowns as a hash': return [members[i] as string, time]
          }
        }
        for (let from = 0; from < size; from += CHUNK) {
          time += 30
          const chunk = Array.from({ length: Math.min(CHUNK, size - from) }, (_, j) => fill(from + j, j)).flat()
          if (kind === 'cooldowns as a hash') await redis.hset('set', ...chunk)
          else await redis.zadd('set', ...chunk)
        }
        await redis.config('RESETSTAT')
        for (let done = 0; done < UPDATES; done += CHUNK) {
          time += 30
          const pipeline = redis.pipeline()
          for (let j = 0; j < CHUNK; j++) {
            const member = members[Math.floor(Math.random() * size)] as string
            switch (kind) {
              case 'gains, ties': case 'gains, no ties': pipeline.zincrby('set', 10, member); break
              case 'cooldowns, a time a batch': pipeline.zadd('set', time, member); break
              case 'cooldowns, distinct times': pipeline.zadd('set', time + j / 4096, member); break
              case 'cooldowns as a hash': pipeline.hset('set', member, time); break
            }
          }
          await pipeline.exec()
        }
        const [, calls = '0', usec = '0'] = /^cmdstat_(?:zincrby|zadd|hset):calls=(\d+),usec=(\d+)/m.exec(await redis.info('commandstats')) ?? []
        us.push(Number(usec) / Number(calls))
      }
      cells.push(median(us).toFixed(2))
    }
    console.log(`| ${size.toLocaleString('en-US')} | ${cells.join(' | ')} |`)
  }
  await cooldownsMemory(redis)
}

/**
 * The cooldowns' memory and what freeing them costs, by size: the sorted set (a time a batch) and
 * the hash of an hour, filled as above; MEMORY USAGE (every element counted), then the main
 * thread's time for DEL (freed at once, as an expiry frees it unless lazyfree-lazy-expire is on)
 * and for UNLINK (freed by a background thread), from INFO commandstats, median of R rounds.
 */
async function cooldownsMemory (redis: ReturnType<typeof createRedis>): Promise<void> {
  await redis.del('set')
  console.log('\n| members | sorted set: bytes a member | DEL, ms | UNLINK, ms | hash: bytes a member | DEL, ms | UNLINK, ms |')
  console.log('|---:|---:|---:|---:|---:|---:|---:|')
  for (const size of SIZES) {
    const cells: string[] = []
    for (const hash of [false, true]) {
      const bytes: number[] = []
      const ms: Record<'del' | 'unlink', number[]> = { del: [], unlink: [] }
      for (let round = 0; round < ROUNDS; round++) {
        for (const free of ['del', 'unlink'] as const) {
          let time = 1_790_000_000_000
          for (let from = 0; from < size; from += CHUNK) {
            time += 30
            const chunk = Array.from({ length: Math.min(CHUNK, size - from) }, (_, j) => {
              const member = boardMember(userId(from + j))
              return hash ? [member, time] : [time, member]
            }).flat()
            if (hash) await redis.hset('set', ...chunk)
            else await redis.zadd('set', ...chunk)
          }
          if (free === 'del') bytes.push(Number(await redis.call('MEMORY', 'USAGE', 'set', 'SAMPLES', '0')) / size)
          await redis.config('RESETSTAT')
          await redis[free]('set')
          const [, usec = '0'] = new RegExp(`^cmdstat_${free}:calls=\\d+,usec=(\\d+)`, 'm').exec(await redis.info('commandstats')) ?? []
          ms[free].push(Number(usec) / 1000)
        }
      }
      cells.push(median(bytes).toFixed(0), median(ms.del).toFixed(1), median(ms.unlink).toFixed(2))
    }
    console.log(`| ${size.toLocaleString('en-US')} | ${cells.join(' | ')} |`)
  }
}

await runBenchmark(main)
