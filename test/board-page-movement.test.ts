// The public page (/p/{slug}) after a closed day, as HTML with no JavaScript: the rank column
// marks members who moved since the last closed day's end (up or down, by how many places, with
// its words for assistive technology) and nothing for those who did not move or had no rank then;
// and in a browser, the page's live script marks the rows it redraws as the HTML does. Redis's
// clock is moved by the test (test/helpers/fake-clock.ts), and the instance's calendar ticker
// closes the day.
import t, { type Test } from 'tap'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { setTimeout as sleep } from 'node:timers/promises'
import puppeteer from 'puppeteer-core'
import { FakeClock, fakeClockRedis } from './helpers/fake-clock.js'
import { buildTestApp, type TestApp } from './helpers/app.js'

const CHROMIUM = '/usr/bin/chromium'
const noBrowser = existsSync(CHROMIUM) ? false : `no ${CHROMIUM} (apt-get install chromium)`
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

const GUILD = '1740000000000000001'
const SLUG = 'moving-board'
/** 00:00 UTC of a November 2026 day, plus `ms`. */
const utc = (day: number, ms = 0): number => Date.UTC(2026, 10, day) + ms

/** The page's rows: each member's user id and the text and markup of its rank cell. */
function rankCells (html: string): Map<string, { text: string, markup: string }> {
  const cells = new Map<string, { text: string, markup: string }>()
  for (const [, user, markup] of html.matchAll(/<tr data-user="(\d+)"[^>]*><td class="rank">(.*?)<\/td>/g)) {
    cells.set(user as string, { markup: markup as string, text: (markup as string).replace(/<[^>]*>/g, '') })
  }
  return cells
}

/**
 * A public board whose 21st (UTC) has closed with members 1, 2, 3, 4, 9 ranked in that order;
 * since then 4 jumped to first, 3 passed 2, 9 kept fifth and 5 joined sixth.
 */
async function movedSinceClose (t: Test): Promise<TestApp & { page: () => Promise<string> }> {
  const clock = FakeClock.create(t)
  clock.set(utc(20, 10 * 3_600_000))
  const redis = await fakeClockRedis(t, clock)
  const ctx = await buildTestApp(t, redis.url, { redisPrefix: 'mv', calendarTickMs: 50, apiKeyCacheTtlMs: 0 })
  const { app, writer } = ctx
  await writer.configureGuild(GUILD, { name: 'Moving', public: { enabled: true, slug: SLUG } })
  const page = async (): Promise<string> => {
    const res = await app.inject({ url: `/p/${SLUG}` })
    t.equal(res.statusCode, 200)
    return res.body
  }
  // History starts on the 20th; the 21st is its first whole day.
  await writer.awardXp({ guildId: GUILD, userId: '9', xp: 50 })
  clock.set(utc(21, 1000))
  for (const [user, xp] of [['1', 400], ['2', 300], ['3', 200], ['4', 100]] as const) await writer.awardXp({ guildId: GUILD, userId: user, xp, username: `member ${user}` })
  t.same([...rankCells(await page()).values()].map((c) => c.text), ['1', '2', '3', '4', '5'], 'no day closed yet: ranks alone')

  clock.set(utc(22, 1000))
  // The 21st closes by the instance's ticker, on Redis's clock.
  const rankChangeOf1 = async (): Promise<unknown> => (await app.inject({ url: `/public/v1/${SLUG}/members/1` })).json().rank_change
  for (let waited = 0; await rankChangeOf1() === null; waited += 50) {
    if (waited > 60_000) throw new Error('the 21st was not closed')
    await sleep(50)
  }
  await writer.awardXp({ guildId: GUILD, userId: '4', xp: 1000 }) // 1100
  await writer.awardXp({ guildId: GUILD, userId: '3', xp: 150 }) // 350
  await writer.awardXp({ guildId: GUILD, userId: '5', xp: 1 })
  return { ...ctx, page }
}

t.test('after a closed day the page marks who moved up or down, and by how much; no mark for who stayed or is new', async (t) => {
  const { page } = await movedSinceClose(t)
  const after = rankCells(await page())
  t.same([...after.keys()], ['4', '1', '3', '2', '9', '5'])
  t.same([...after.values()].map((c) => c.text), [
    '1▲3up 3 places since yesterday', '2▼1down 1 place since yesterday', '3', '4▼2down 2 places since yesterday', '5', '6'
  ], 'moved up and down by their places; 3 and 9 kept their ranks, 5 had none: no mark')
  t.match(after.get('4')?.markup, /^1<span class="move up"><span aria-hidden="true">▲3<\/span><span class="sr">up 3 places since yesterday<\/span><\/span>$/,
    'the arrow hidden from assistive technology, which reads the words')
  t.match(after.get('2')?.markup, /class="move down"/)
})

t.test('in a browser, the rows the live script redraws carry the same marks as the HTML; no serious accessibility violation', { skip: noBrowser }, async (t) => {
  const { app, writer, page } = await movedSinceClose(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const dir = mkdtempSync(join(tmpdir(), 'lb-chromium-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', `--user-data-dir=${dir}`]
  })
  t.teardown(async () => { await browser.close() })
  const tab = await browser.newPage()
  const problems: string[] = []
  tab.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()) })
  tab.on('pageerror', (error) => { problems.push(String(error)) })
  await tab.goto(`${base}/p/${SLUG}`)
  await tab.waitForFunction("document.getElementById('live').classList.contains('on')", { timeout: 20_000 })
  // 2 (fourth now, second at the close) climbs to first: the script redraws the rows.
  await writer.awardXp({ guildId: GUILD, userId: '2', xp: 5000 })
  await tab.waitForFunction("document.querySelector('#board tbody tr')?.dataset.user === '2'", { timeout: 20_000 })
  const drawn = await tab.$$eval('#board tbody tr', (trs) => trs.map((tr) => [tr.getAttribute('data-user'), tr.querySelector('td.rank')?.innerHTML]))
  const served = [...rankCells(await page()).entries()].map(([user, cell]) => [user, cell.markup])
  t.same(drawn, served, 'each rank cell as the HTML of the same board has it')
  t.match(Object.fromEntries(served), { 2: /^1<span class="move up"><span aria-hidden="true">▲1<\/span><span class="sr">up 1 place since yesterday/ })
  await tab.evaluate(AXE)
  const result = await tab.evaluate('axe.run(document, { resultTypes: ["violations"] })') as { violations: Array<{ id: string, impact: string }> }
  t.same(result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id), [], 'axe')
  t.same(problems, [], 'no console errors')
})
