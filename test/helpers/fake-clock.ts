// A wall clock a test moves, for redis-server: the shim in fake-clock.c, built once per source
// with the system's C compiler and loaded with LD_PRELOAD, offsets Redis's clock (TIME, and so
// every script's `now`) by what the test writes to a file. The test process's own clock is left
// alone: the service takes its time from Redis, which is what these tests pin.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { RedisServer } from './redis-server.js'

const SOURCE = new URL('./fake-clock.c', import.meta.url)

/** The shim's shared object, built from fake-clock.c when this version of it is not built yet. */
function sharedObject (): string {
  const source = readFileSync(SOURCE)
  const dir = join(tmpdir(), 'lb-fake-clock')
  const file = join(dir, `fake-clock-${createHash('sha256').update(source).digest('hex').slice(0, 16)}.so`)
  if (existsSync(file)) return file
  mkdirSync(dir, { recursive: true })
  const building = `${file}.${process.pid}`
  execFileSync('cc', ['-O2', '-shared', '-fPIC', '-o', building, SOURCE.pathname, '-ldl'])
  renameSync(building, file) // whole, even with other test processes building it too
  return file
}

export class FakeClock {
  readonly file: string
  #offsetMs = 0

  private constructor (file: string) {
    this.file = file
  }

  static create (t: Test): FakeClock {
    const dir = mkdtempSync(join(tmpdir(), 'lb-clock-'))
    t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
    return FakeClock.inDirectory(dir)
  }

  /** A clock kept in `dir` (which the caller removes), at the real time until moved; for the benches. */
  static inDirectory (dir: string): FakeClock {
    const clock = new FakeClock(join(dir, 'offset'))
    clock.setOffset(0)
    return clock
  }

  /** The environment a process runs under this clock with. */
  env (): NodeJS.ProcessEnv {
    return { ...process.env, LD_PRELOAD: sharedObject(), FAKE_CLOCK_FILE: this.file }
  }

  setOffset (ms: number): void {
    const bytes = Buffer.alloc(8)
    bytes.writeBigInt64LE(BigInt(Math.round(ms)))
    const fd = openSync(this.file, existsSync(this.file) ? 'r+' : 'w')
    try { writeSync(fd, bytes, 0, 8, 0) } finally { closeSync(fd) }
    this.#offsetMs = Math.round(ms)
  }

  /** Moves the clock so that it reads `ms` (Unix ms) now. */
  set (ms: number): void {
    this.setOffset(ms - Date.now())
  }

  /** The time the clock reads now. */
  now (): number {
    return Date.now() + this.#offsetMs
  }
}

/** A redis-server whose clock `clock` moves; stopped in teardown. */
export async function fakeClockRedis (t: Test, clock: FakeClock): Promise<RedisServer> {
  const server = await RedisServer.start([], clock.env())
  t.teardown(async () => { await server.close() })
  return server
}
