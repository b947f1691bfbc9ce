// The demo's page in a real browser: `npm start` without REDIS_URL prints the address of the demo
// server's public board, where `/` leads too; headless Chromium (Debian's, driven by
// puppeteer-core) shows its rows as served, then a change the simulated bot made, without a
// reload, under the page's own Content-Security-Policy. With REDIS_URL set there is no page and
// no bot.
import t from 'tap'
import { existsSync } from 'node:fs'
import puppeteer from 'puppeteer-core'
import { RedisServer } from './helpers/redis-server.js'
import { startServer, tempDir } from './helpers/server-process.js'

const CHROMIUM = '/usr/bin/chromium'

t.test('the demo page is the demo server\'s public board, live, and / leads to it', { skip: existsSync(CHROMIUM) ? false : `no ${CHROMIUM} (apt-get install chromium)` }, async (t) => {
  const server = startServer(t)
  const [, pageUrl = '', base = ''] = await server.waitFor(/Live leaderboard page[^:]*: ((http:\/\/127\.0\.0\.1:\d+)\/p\/demo)\s/)

  const root = await fetch(`${base}/`, { redirect: 'manual' })
  t.equal(root.status, 302, '/ leads to the page')
  t.equal(root.headers.get('location'), '/p/demo')

  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', `--user-data-dir=${tempDir(t, 'lb-chromium-')}`]
  })
  t.teardown(async () => { await browser.close() })
  const page = await browser.newPage()
  const problems: string[] = []
  page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()) })
  page.on('pageerror', (error) => { problems.push(String(error)) })
  const response = await page.goto(`${base}/`)
  t.equal(response?.status(), 200, 'the page is served')
  t.equal(page.url(), pageUrl, 'at the printed address')
  t.match(response?.headers()['content-security-policy'], /script-src 'sha256-/, 'with its own CSP, allowing its script by hash')
  t.equal(await page.$eval('h1', (h) => h.textContent), 'Demo server', 'the server\'s name, not its id')

  // (Strings: they run in the page, and this project's TypeScript has no DOM types.)
  const rows = async (): Promise<string[]> => await page.$$eval('#board tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''))
  const first = await rows()
  t.equal(first.length, 25, 'a page of rows, as served')
  t.match(first[0], /^1/, 'rank 1 first')

  // The bot awards XP every second: a later update changes the rows, in the same page.
  await page.evaluate("window.marker = 'same page'")
  await page.waitForFunction(`(() => {
    const now = [...document.querySelectorAll('#board tbody tr')].map((tr) => tr.textContent)
    return now.length === 25 && now.join('|') !== ${JSON.stringify(first.join('|'))}
  })()`, { timeout: 0 }) // as long as the machine takes (the file's guard bounds it)
  t.not((await rows()).join('|'), first.join('|'), 'a change arrived')
  t.equal(await page.evaluate('window.marker'), 'same page', 'without a reload')
  t.same(problems, [], 'no console errors (no CSP violation)')
})

t.test('with REDIS_URL set there is no demo page and no bot', async (t) => {
  const redis = await RedisServer.start()
  t.teardown(async () => { await redis.close() })
  const server = startServer(t, { env: { REDIS_URL: redis.url } })
  const [, address = ''] = await server.waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/)
  const response = await fetch(`${address}/`)
  t.equal(response.status, 404, '/ is not served')
  t.notMatch(server.stdout(), /Live leaderboard page/, 'no page in the banner')
})
