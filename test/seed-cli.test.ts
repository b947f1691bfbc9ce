// The seed command as a user runs it (`node dist/cli/main.js seed`, a child process) against a
// redis-server of this file's own: its memory flat in the number of members, its progress on a
// terminal, and what a dropped connection, a refusing Redis and a stalled one do to it.
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { RedisServer } from './helpers/redis-server.js'
import { built, ROOT } from './helpers/built.js'
import { boardOf, statsOf, storedStats } from './helpers/guild-state.js'
import { KeyBuilder, userIdFromBoardMember } from '../src/redis/keys.js'
import { parseRecord } from '../src/redis/records.js'
import { planMembers } from '../src/seed/plan-members.js'

// Half a million members seeded, twice a stall of the command timeout: minutes on a loaded machine.
t.setTimeout(600_000)

const PREFIX = 'seedcli'
const server = await RedisServer.start()
t.teardown(async () => { await server.close() })
const raw = new Redis(server.url)
t.teardown(() => { raw.disconnect() })
const keys = new KeyBuilder(PREFIX)

/** Prints the process's peak resident memory (kB, as getrusage gives it) as it exits; the seeding thread prints it too. */
const REPORT_PEAK_RSS = 'data:text/javascript,' + encodeURIComponent(
  'process.on("exit", () => { process.stderr.write("peak-rss " + process.resourceUsage().maxRSS + "\\n") })')

interface SeedRun { code: number | null, output: string, peakKb: number }

/**
 * `seed` in a child process; on a terminal (util-linux `script`, its output stdout and stderr
 * together) when `terminal`. `whileRunning` is called once it has started, with a check of
 * whether it is still running.
 */
async function seed (args: string[], { terminal = false, whileRunning }: { terminal?: boolean, whileRunning?: (running: () => boolean) => Promise<void> } = {}): Promise<SeedRun> {
  const command = [process.execPath, `--import=${REPORT_PEAK_RSS}`, built('cli/main.js'), 'seed', ...args]
  const quoted = command.map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ')
  const child = terminal
    ? spawn('script', ['-qefc', quoted, '/dev/null'], { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '', REDIS_URL: server.url, REDIS_PREFIX: PREFIX }, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(command[0] as string, command.slice(1), { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '', REDIS_URL: server.url, REDIS_PREFIX: PREFIX }, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { child.kill('SIGKILL') })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve))
  let running = true
  exited.then(() => { running = false }, () => {})
  await whileRunning?.(() => running)
  const code = await exited
  const peaks = [...output.matchAll(/peak-rss (\d+)/g)].map((m) => Number(m[1]))
  return { code, output, peakKb: Math.max(...peaks) }
}

async function bytesReceived (): Promise<number> {
  return Number(/^total_net_input_bytes:(\d+)/m.exec(await raw.info('stats'))?.[1])
}

/** Each seeded member's XP and username, by user id, as the server holds them. */
async function crowdOf (guildId: string): Promise<Map<string, [number, string | null]>> {
  const k = keys.guild(guildId)
  const [board, records] = await Promise.all([raw.zrange(k.board, 0, -1, 'WITHSCORES'), raw.hgetall(k.members)])
  const crowd = new Map<string, [number, string | null]>()
  for (let i = 0; i < board.length; i += 2) {
    const member = board[i] as string
    crowd.set(userIdFromBoardMember(member), [Number(board[i + 1]), parseRecord(records[member] ?? null).username])
  }
  return crowd
}

/** What `members` members of `seed` leave: each planned member's XP (its recent part awarded on top) and username. */
function plannedCrowd (members: number, seed: string): Map<string, [number, string | null]> {
  // XP and names do not depend on the clock, only claims do.
  return new Map(planMembers({ members, seed, now: Date.now() }).map((m) => [m.userId, [m.xp, m.username]]))
}

async function checkExact (t: Test, guildId: string, members: number, seedValue: string): Promise<void> {
  const k = keys.guild(guildId)
  t.same(await crowdOf(guildId), plannedCrowd(members, seedValue), 'every planned member, with its XP and name')
  t.same(await storedStats(raw, k), statsOf([...(await boardOf(raw, k)).values()]), 'the stats hash equals a full recount of the board')
}

t.test('memory: seeding four times the members grows the command by less than the bytes it sends per member, so it holds none; progress shows on a terminal', async (t) => {
  const N = 100_000
  const runs: Array<{ members: number, run: SeedRun, sentPerMember: number }> = []
  for (const [members, guildId] of [[N, '10'], [4 * N, '11']] as const) {
    const before = await bytesReceived()
    const run = await seed(['--guild', guildId, '--members', String(members), '--seed', 'flat'], { terminal: true })
    t.equal(run.code, 0, `${members} members: exit 0`)
    runs.push({ members, run, sentPerMember: (await bytesReceived() - before) / members })
    t.equal(await raw.zcard(keys.guild(guildId).board), members, `${members} members on the board`)
  }
  const [small, large] = runs as [typeof runs[0], typeof runs[0]]
  const grownPerMember = (large.run.peakKb - small.run.peakKb) * 1024 / (large.members - small.members)
  t.ok(grownPerMember < small.sentPerMember,
    `peak resident memory ${Math.round(small.run.peakKb / 1024)} MB for ${small.members} members, ${Math.round(large.run.peakKb / 1024)} MB for ${large.members}: ` +
    `${grownPerMember.toFixed(1)} bytes more per member, against ${small.sentPerMember.toFixed(0)} bytes sent to Redis for each`)

  // The bar, as cli-progress draws it: "seeding ███░░░ 40% | 160000/400000 members | 2s left".
  const frames = [...large.run.output.matchAll(/seeding \S+ (\d+)% \| (\d+)\/(\d+) members/g)].map((m) => ({ done: Number(m[2]), total: Number(m[3]) }))
  t.ok(frames.some((f) => f.done > 0 && f.done < f.total), `the bar was drawn while members were written (${frames.length} frames)`)
  t.ok(frames.every((f, i) => f.total === large.members && (i === 0 || f.done >= (frames[i - 1]?.done ?? 0))), 'out of the whole crowd, never going back')
  t.match(large.run.output, new RegExp(`seeded ${large.members} members into 11 in `), 'then the summary')
})

t.test('a connection dropped while seeding (again and again): the client sends the unanswered batches again, and the crowd is whole and exact', async (t) => {
  const members = 60_000
  const board = keys.guild('20').board
  let kills = 0
  const run = await seed(['--guild', '20', '--members', String(members), '--seed', 'drops'], {
    whileRunning: async (running) => {
      // Each time another tenth of the crowd is in, the command's connections are cut.
      for (let next = members / 10; running() && next < members; await sleep(5)) {
        if (await raw.zcard(board) < next) continue
        next += members / 10
        const killed = Number(await raw.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes'))
        if (killed > 0 && running()) kills++
      }
    }
  })
  t.equal(run.code, 0, `exit 0 after ${kills} cuts`)
  t.ok(kills > 0, 'its connection was cut while it seeded')
  await checkExact(t, '20', members, 'drops')
})

t.test('a Redis that refuses writes (out of memory): exit 1 and Redis\'s reason in one line; the batches before stay, and the same seed again completes the crowd', async (t) => {
  const members = 20_000
  const used = Number(/^used_memory:(\d+)/m.exec(await raw.info('memory'))?.[1])
  // Room for part of the crowd only.
  await raw.config('SET', 'maxmemory', String(used + 2 * 1024 * 1024))
  const refused = await seed(['--guild', '30', '--members', String(members), '--seed', 'full'])
  await raw.config('SET', 'maxmemory', '0')
  t.equal(refused.code, 1)
  t.match(refused.output, /^error: Redis refused the command: OOM command not allowed when used memory > 'maxmemory'/m)
  t.equal(refused.output.split('\n').filter((line) => line.startsWith('error:')).length, 1, 'one error line')
  const partial = await raw.zcard(keys.guild('30').board)
  t.ok(partial > 0 && partial < members, `${partial} members were written before Redis refused`)
  t.same(await storedStats(raw, keys.guild('30')), statsOf([...(await boardOf(raw, keys.guild('30'))).values()]), 'the stats hash equals a recount of what was written')

  const again = await seed(['--guild', '30', '--members', String(members), '--seed', 'full'])
  t.equal(again.code, 0)
  await checkExact(t, '30', members, 'full')
})

t.test('a stalled Redis: the command gives up after its command timeout with one line saying the change may be partial; the same seed again completes it', async (t) => {
  const members = 60_000
  const board = keys.guild('40').board
  t.teardown(() => { process.kill(server.pid, 'SIGCONT') })
  const stalled = await seed(['--guild', '40', '--members', String(members), '--seed', 'stall'], {
    whileRunning: async (running) => {
      while (running() && await raw.zcard(board) === 0) await sleep(5)
      process.kill(server.pid, 'SIGSTOP')
    }
  })
  process.kill(server.pid, 'SIGCONT')
  t.equal(stalled.code, 1)
  t.match(stalled.output, /^error: lost Redis while working \(Command timed out\); the change may or may not have been made$/m)
  const again = await seed(['--guild', '40', '--members', String(members), '--seed', 'stall'])
  t.equal(again.code, 0)
  await checkExact(t, '40', members, 'stall')
})
