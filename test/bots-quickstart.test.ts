// docs/bots.md's three commands from the demo's banner to a bot's first write (the block between
// the bot-quickstart markers), run as a user runs them: the demo server (what `npm start` runs),
// the token command its banner prints, run by a shell in the repository, then the doc's curl line
// with the banner's write URL and the printed token, answered as the doc shows.
import t from 'tap'
import { exec } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { ROOT } from './helpers/built.js'
import { DEMO_CURL, startServer } from './helpers/server-process.js'

const run = promisify(exec)

const doc = readFileSync(new URL('../docs/bots.md', import.meta.url), 'utf8')
const block = /<!-- bot-quickstart:start -->\n```sh\n([\s\S]*?)```\n<!-- bot-quickstart:end -->/.exec(doc)?.[1] ?? ''
/** The block's commands (a line ending in `\` goes on), and the lines of output it shows (`# …`). */
const commands = block.replace(/\\\n\s*/g, '').split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'))
const shownAnswer = /^# (\{.*\})$/m.exec(block)?.[1] ?? ''

const WRITE_API = /Write API for bots: (http:\/\/127\.0\.0\.1:\d+\/admin\/v1) \(ADMIN_PORT\)\. Make it a token, in another terminal:\n {4}(REDIS_URL=redis:\/\/127\.0\.0\.1:\d+ npm run cli -- tokens create .*)\n/

t.test("docs/bots.md's three commands take a bot from the demo's banner to its first award", async (t) => {
  t.equal(commands.length, 3, `three commands: ${commands.join(' | ')}`)
  const [start = '', makeToken = '', award = ''] = commands
  t.equal(start, 'npm start', 'the demo')

  // `npm start` is the build, then this server; in a directory of its own, for its ./.data.
  const server = startServer(t)
  const [, readKey = '', leaderboardUrl = ''] = await server.waitFor(DEMO_CURL)
  const [, writeUrl = '', bannerLine = ''] = await server.waitFor(WRITE_API)
  t.equal(makeToken.replace(/redis:\/\/127\.0\.0\.1:\d+/, /redis:\/\/127\.0\.0\.1:\d+/.exec(bannerLine)?.[0] ?? ''), bannerLine,
    "the doc's token command is the banner's, but for the Redis port")
  t.ok(server.stdout().includes(shownBanner()), "the doc's banner lines are the demo's, but for its ports")

  // Run from the repository, as the banner says; not with tap's hooks in NODE_OPTIONS.
  const env = { ...process.env, NODE_OPTIONS: '' }
  const created = await run(bannerLine, { cwd: ROOT, env })
  const token = /^ {4}(lba_[0-9a-f]{16}_\S+)$/m.exec(created.stdout)?.[1]
  t.ok(token, `the command prints a token:\n${created.stdout}`)

  t.match(award, /^curl .*http:\/\/127\.0\.0\.1:3001\/admin\/v1\/.*Bearer lba_…/)
  const answer = await run(award.replace('http://127.0.0.1:3001/admin/v1', writeUrl).replace('lba_…', token ?? ''), { env })
  t.same(JSON.parse(answer.stdout), JSON.parse(shownAnswer), 'the award is answered as the doc shows')

  const member = await fetch(leaderboardUrl.replace(/leaderboard$/, 'members/1100000000000000777'), { headers: { 'x-api-key': readKey } })
  t.match(await member.json(), { user_id: '1100000000000000777', username: 'Ada', xp: 150 }, "Ada is on the demo server's board")

  /** The banner lines the doc shows (its `#   ` lines, each a banner line after `# `), with this demo's write URL and Redis port. */
  function shownBanner (): string {
    const lines = block.split('\n').filter((line) => line.startsWith('#   ') && !line.startsWith('#   …')).map((line) => line.slice(2))
    return lines.join('\n').replace('http://127.0.0.1:3001/admin/v1', writeUrl)
      .replace(/redis:\/\/127\.0\.0\.1:\d+/, /redis:\/\/127\.0\.0\.1:\d+/.exec(bannerLine)?.[0] ?? '')
  }
})
