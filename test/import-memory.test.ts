// Import streams a bot's JSON: the CLI, its V8 heap held to HEAP_MB (--max-old-space-size, which
// ends the process if the heap outgrows it), imports from standard input a file larger than that
// heap in each bot's shape, every member landing on the right id, past 2^53 included; a value
// larger than the heap, in a field import reads, is read only so far. A reader that held the file,
// or anything that keeps a view of what it read (an id kept to catch repeats, say), ends the child.
import t from 'tap'
import { spawn } from 'node:child_process'
import { redisFixture } from './helpers/redis-server.js'
import { built, ROOT } from './helpers/built.js'
import { pageOf, rowOf, toJson } from './helpers/bot-json.js'
import { boardMember } from '../src/redis/keys.js'
import { JSON_IMPORT_FORMATS, type JsonImportFormat } from '../src/transfer/import-formats.js'

// Each run parses some 100 MB (180 MB with the long value): 3 to 5 s on an idle 2-core machine.
t.setTimeout(600_000)

const PREFIX = 'importmem'
const { server, raw, keys } = await redisFixture(t, PREFIX)

const MB = 1024 * 1024
/** The child's heap: the CLI and a chunk of rows being written take about 30 MB of it. */
const HEAP_MB = 64
const PAGES = 12
const PAGE_ROWS = 1000
/** Bytes of a field import does not read, in each row: the file is about PAGES * PAGE_ROWS * PAD. */
const PAD = 8000
/** A name longer than the heap, in a field import reads. */
const LONG_NAME = 80 * MB
const BIG = '444444444444444444'
const NEAR = '444444444444444400'

/** The file, a piece at a time: pages of rows (the first two ids past 2^53, one of them a bare number), then, if asked, a row with a name of LONG_NAME bytes. */
function * file (format: JsonImportFormat, longName: boolean): Generator<string> {
  yield '['
  for (let p = 0; p < PAGES; p++) {
    const rows = Array.from({ length: PAGE_ROWS }, (_, i) => {
      const n = p * PAGE_ROWS + i
      const id = n === 0 ? `NUM:${BIG}` : n === 1 ? NEAR : String(1_000_000_000_000 + n)
      return rowOf(format, { id, xp: n === 0 ? 777 : n, pad: 'p'.repeat(PAD) }, n + 1)
    })
    yield (p === 0 ? '' : ',') + toJson(pageOf(format, rows, p))
  }
  if (longName) {
    const [before, after] = toJson(pageOf(format, [rowOf(format, { id: '61', xp: 1, name: 'NAME' })], PAGES)).split('NAME')
    yield `,${before ?? ''}`
    const piece = 'n'.repeat(MB)
    for (let sent = 0; sent < LONG_NAME; sent += MB) yield piece
    yield after ?? ''
  }
  yield ']'
}

interface Run { code: number | null, stdout: string, stderr: string, bytes: number }

/** `import --file - --format F --json` with its heap held to HEAP_MB, fed `pieces` as they are taken. */
async function importFed (guild: string, format: JsonImportFormat, pieces: Iterable<string>): Promise<Run> {
  const child = spawn(process.execPath, [`--max-old-space-size=${HEAP_MB}`, built('cli/main.js'), 'import', '--guild', guild, '--file', '-', '--format', format, '--json'], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', REDIS_URL: server.url, REDIS_PREFIX: PREFIX },
    stdio: 'pipe'
  })
  t.teardown(() => { child.kill('SIGKILL') })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve))
  let bytes = 0
  let gone = false
  child.stdin.on('error', () => { gone = true }) // a child that died of its heap stops reading
  for (const piece of pieces) {
    if (gone) break
    bytes += Buffer.byteLength(piece)
    if (!child.stdin.write(piece)) {
      await new Promise<void>((resolve) => {
        const done = (): void => { child.stdin.off('drain', done).off('close', done); resolve() }
        child.stdin.on('drain', done).on('close', done)
      })
    }
  }
  child.stdin.end()
  return { code: await closed, stdout, stderr, bytes }
}

let lastGuild = 9100
for (const format of JSON_IMPORT_FORMATS) {
  const longName = format === 'amari' // a bot that gives names; one such run is enough
  t.test(`${format}: a file of ${PAGES * PAGE_ROWS} rows and ${longName ? 'a name of 80 MB, ' : ''}over ${HEAP_MB} MB is imported with a heap of ${HEAP_MB} MB`, async (t) => {
    const g = String(++lastGuild)
    const run = await importFed(g, format, file(format, longName))
    t.ok(run.bytes > 1.4 * HEAP_MB * MB, `the file was ${(run.bytes / MB).toFixed(0)} MB`)
    t.equal(run.code, 0, `the import finished (${run.stderr.split('\n').slice(0, 3).join(' ')})`)
    const summary = JSON.parse(run.stdout === '' ? '{}' : run.stdout) as { imported?: number, skipped?: number, problems?: Array<{ where: string, message: string }> }
    t.same([summary.imported, summary.skipped], [PAGES * PAGE_ROWS, longName ? 1 : 0])
    if (longName) {
      t.same(summary.problems?.map((p) => `${p.where}: ${p.message}`),
        [`[${PAGES}].data[0]: username must be 1 to 100 characters without control characters (got "${'n'.repeat(38)}…)`])
    }
    const board = keys.guild(g).board
    t.equal(await raw.zcard(board), PAGES * PAGE_ROWS)
    t.same([await raw.zscore(board, boardMember(BIG)), await raw.zscore(board, boardMember(NEAR))], ['777', '1'], 'the id past 2^53, a bare number, on its own member')
  })
}
