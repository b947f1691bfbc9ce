// A day's close, call by call: what bounds the work of each of its script calls (so that no call
// holds Redis long, whatever the server's size), with what it keeps unchanged. The close's
// results are pinned in test/history.test.ts.
import t from 'tap'
import { redisFixture } from './helpers/redis-server.js'
import { boardMember } from '../src/redis/keys.js'
import * as scripts from '../src/redis/write-scripts.js'
import { CloseDayStatus } from '../src/redis/script-status.js'

const GUILD = '1400000000000000001'
const MB = 1_048_576

t.test('the change records\' string grows by at most 1 MB a call (2 MB the first), and ends allocated as if sized at once', async (t) => {
  const { redis, raw, keys } = await redisFixture(t, 'dc')
  const k = keys.guild(GUILD)
  const day = '2026-11-21'
  const changesDay = keys.histChanges(GUILD, day)
  const lease = { lease: k.histLease, token: 'closer', leaseMs: 60_000 }
  await raw.set(k.histLease, 'closer')
  // 400,000 touched members by history index: 5,200,000 bytes of records.
  const N = 400_000
  for (let from = 0; from < N; from += 10_000) {
    await raw.zadd(k.histOrder, ...Array.from({ length: 10_000 }, (_, i) => [from + i, boardMember(String(100_000 + from + i))]).flat())
  }
  const final = 13 * N
  const lengths: number[] = []
  const statuses = new Set<unknown>()
  for (let first = 0; ; first += 5_000) {
    const reply = await scripts.closeDayStep(redis, 'closeDayChanges', {
      ...lease, order: k.histOrder, day: keys.day(GUILD, day), dayGains: keys.dayGains(GUILD, day), dayStart: keys.dayStart(GUILD, day), changesDay, first, count: 5_000
    })
    statuses.add(reply[0])
    lengths.push(await raw.strlen(changesDay))
    if (Number(reply[1]) < 5_000) break
  }
  t.same([...statuses], [CloseDayStatus.done])
  const grown = lengths.map((length, i) => length - (lengths[i - 1] ?? 0))
  t.ok((grown[0] ?? 0) <= 2 * MB, `the first call: ${grown[0]} bytes`)
  t.same(grown.slice(1).filter((bytes) => bytes > MB), [], 'every later call: 1 MB at most')
  t.equal(lengths.at(-1), final, 'a record for each member')
  const records = await raw.getBuffer(changesDay) ?? Buffer.alloc(0)
  t.same([0, 1, N - 1].map((i) => records.readUIntBE(13 * i, 3)), [0, 1, N - 1], 'in order of history index')
  await raw.setrange('sized-at-once', final - 1, '\0')
  const [used, atOnce] = await Promise.all([raw.memory('USAGE', changesDay, 'SAMPLES', 0), raw.memory('USAGE', 'sized-at-once', 'SAMPLES', 0)])
  t.ok(Number(used) <= Number(atOnce) + 64, `${String(used)} bytes of memory, ${String(atOnce)} for the same length sized at once`)
})
