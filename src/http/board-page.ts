// A public board's page (/p/{slug}): HTML rendered here from the same reads the JSON serves, so
// it reads without JavaScript; its one inline script follows the board's live-update stream and
// redraws the rows in place, writing text, never markup. Its Content-Security-Policy allows the
// inline style and script by their hashes, connections to its own origin and https images
// (avatars and icons are the URLs a bot recorded): nothing else.
import { createHash } from 'node:crypto'
import type { GuildStats, LeaderboardPage } from '../reader/leaderboard-reader.js'
import type { Period } from '../periods/periods.js'

/** Rows on a page unless the link asks for another number (1 to 100). */
export const PAGE_ROWS = 25

export interface BoardView {
  slug: string
  stats: GuildStats
  board: LeaderboardPage
  period: Period
  limit: number
  /** Framed by another site: no header links, no footer. */
  embed: boolean
  /** The current season's name, when the server has seasons (one ended, or a schedule started one); else null. */
  season: string | null
}

/** Text as HTML: the five characters that could open markup or close an attribute. */
export function escapeHtml (text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

const number = new Intl.NumberFormat('en')

const PERIODS: ReadonlyArray<[Period, string]> = [['all', 'All time'], ['week', 'This week'], ['month', 'This month']]
const PERIOD_CAPTIONS: Record<Period, string> = {
  all: 'all time', week: 'XP this week', month: 'XP this month', last_week: 'XP last week', last_month: 'XP last month'
}

type Entry = LeaderboardPage['data'][number]

const CSS = `
:root { color-scheme: light; --text: #1a1a1a; --muted: #4d4d4d; --line: #dfe3e8; --bg: #ffffff; --soft: #f4f6f8;
  --accent: #0b57d0; --up: #0a6b2c; --down: #b3261e; --track: #dfe3e8; --flash: #fff3bf; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--text); background: var(--soft); }
main { max-width: 56rem; margin: 0 auto; padding: 1.25rem 1rem 2rem; }
body.embed main { padding: 0.5rem; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; border-radius: 4px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: 0.5rem; z-index: 2; }
header.board { display: flex; align-items: center; gap: 0.9rem; margin-bottom: 1rem; }
header.board img { width: 56px; height: 56px; border-radius: 16px; flex: none; background: var(--line); }
h1 { font-size: 1.5rem; line-height: 1.2; margin: 0; overflow-wrap: anywhere; }
.sub { margin: 0.15rem 0 0; color: var(--muted); font-size: 0.95rem; }
nav.periods { display: flex; gap: 0.4rem; margin: 0 0 0.75rem; flex-wrap: wrap; }
nav.periods a { text-decoration: none; padding: 0.3rem 0.8rem; border-radius: 999px; border: 1px solid var(--line); background: var(--bg); color: var(--text); }
nav.periods a[aria-current="page"] { background: var(--accent); border-color: var(--accent); color: #fff; }
.card { background: var(--bg); border: 1px solid var(--line); border-radius: 12px; overflow: hidden; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; }
caption { text-align: left; padding: 0.7rem 1rem; color: var(--muted); font-size: 0.9rem; border-bottom: 1px solid var(--line); }
th, td { padding: 0.55rem 0.6rem; border-bottom: 1px solid var(--line); vertical-align: middle; text-align: left; }
tbody tr:last-child td { border-bottom: 0; }
th { font-size: 0.8rem; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); font-weight: 600; }
th.rank, td.rank { width: 4.6rem; padding-left: 1rem; }
th.level, td.level { width: 8.5rem; }
th.xp, td.xp { width: 7.5rem; text-align: right; padding-right: 1rem; font-variant-numeric: tabular-nums; }
td.rank { font-weight: 700; font-variant-numeric: tabular-nums; white-space: nowrap; }
.move { display: inline-block; font-size: 0.75rem; font-weight: 600; margin-left: 0.2rem; }
.move.up { color: var(--up); } .move.down { color: var(--down); }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.who { display: flex; align-items: center; gap: 0.6rem; min-width: 0; }
.avatar { width: 36px; height: 36px; border-radius: 50%; flex: none; background: var(--line); object-fit: cover;
  display: inline-flex; align-items: center; justify-content: center; font-weight: 700; color: var(--muted); }
.names { min-width: 0; display: flex; flex-direction: column; }
.name, .handle { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.name { font-weight: 600; }
.handle { color: var(--muted); font-size: 0.85rem; }
.lv { font-weight: 600; font-variant-numeric: tabular-nums; }
progress { display: block; width: 100%; max-width: 7rem; height: 0.45rem; margin-top: 0.3rem; border: 0; border-radius: 999px;
  background: var(--track); appearance: none; -webkit-appearance: none; overflow: hidden; }
progress::-webkit-progress-bar { background: var(--track); border-radius: 999px; }
progress::-webkit-progress-value { background: var(--accent); border-radius: 999px; }
progress::-moz-progress-bar { background: var(--accent); border-radius: 999px; }
tr.changed td { background: var(--flash); transition: background 1.5s; }
.empty { padding: 2rem 1rem; text-align: center; color: var(--muted); }
nav.pages { display: flex; flex-wrap: wrap; align-items: center; gap: 0.35rem; margin: 0.9rem 0 0; }
nav.pages a, nav.pages span { min-width: 2.2rem; text-align: center; padding: 0.3rem 0.55rem; border-radius: 8px; }
nav.pages a { text-decoration: none; border: 1px solid var(--line); background: var(--bg); }
nav.pages [aria-current="page"] { background: var(--accent); color: #fff; font-weight: 700; }
footer { margin-top: 1.25rem; color: var(--muted); font-size: 0.85rem; display: flex; justify-content: space-between; gap: 1rem; flex-wrap: wrap; }
.live::before { content: ""; display: inline-block; width: 0.55rem; height: 0.55rem; border-radius: 50%; background: var(--muted); margin-right: 0.4rem; }
.live.on::before { background: var(--up); }
@media (max-width: 560px) {
  main { padding: 0.75rem 0.5rem 1.5rem; }
  th.rank, td.rank { width: 3.6rem; padding-left: 0.6rem; }
  th.level, td.level { width: 4.8rem; }
  th.xp, td.xp { width: 5.6rem; padding-right: 0.6rem; }
  th, td { padding: 0.5rem 0.35rem; }
  .handle { display: none; }
  .avatar { width: 30px; height: 30px; }
  h1 { font-size: 1.25rem; }
}
@media (prefers-color-scheme: dark) {
  :root { color-scheme: dark; --text: #eceff3; --muted: #b6bec9; --line: #343a42; --bg: #1c2026; --soft: #14171b;
    --accent: #8ab4f8; --up: #6fdc8c; --down: #ff8a80; --track: #343a42; --flash: #4a4020; }
  nav.periods a[aria-current="page"], nav.pages [aria-current="page"] { color: #10131a; }
}
`

// Runs only in the browser (a string the page inlines). It opens the board's public stream with
// EventSource (no header is needed) and redraws the rows as the server renders them.
const SCRIPT = `
(() => {
  const table = document.getElementById('board')
  const status = document.getElementById('live')
  if (table === null || !('EventSource' in window)) return
  const { slug, period, page, limit } = table.dataset
  const number = new Intl.NumberFormat('en')
  const query = new URLSearchParams({ limit, page })
  if (period !== 'all') query.set('period', period)
  const shown = new Map([...table.tBodies[0].rows].map((row) => [row.dataset.user, row.dataset.xp]))
  const el = (tag, className, text) => {
    const node = document.createElement(tag)
    if (className) node.className = className
    if (text !== undefined) node.textContent = text
    return node
  }
  const row = (e) => {
    const tr = el('tr')
    tr.dataset.user = e.user_id
    tr.dataset.xp = String(e.xp)
    if (shown.size > 0 && shown.get(e.user_id) !== String(e.xp)) tr.className = 'changed'
    const rank = el('td', 'rank', String(e.rank))
    if (typeof e.rank_change === 'number' && e.rank_change !== 0) {
      const up = e.rank_change > 0
      const places = Math.abs(e.rank_change)
      const move = el('span', 'move ' + (up ? 'up' : 'down'))
      const arrow = el('span', '', (up ? '▲' : '▼') + places)
      arrow.setAttribute('aria-hidden', 'true')
      move.append(arrow, el('span', 'sr', (up ? 'up ' : 'down ') + places + (places === 1 ? ' place' : ' places') + ' since yesterday'))
      rank.append(move)
    }
    const who = el('div', 'who')
    const name = e.display_name ?? e.username
    if (e.avatar_url) {
      const img = el('img', 'avatar')
      img.src = e.avatar_url
      img.alt = ''
      img.width = 36
      img.height = 36
      img.loading = 'lazy'
      who.append(img)
    } else {
      const initial = el('span', 'avatar', Array.from(name)[0] ?? '?')
      initial.setAttribute('aria-hidden', 'true')
      who.append(initial)
    }
    const names = el('div', 'names')
    names.append(el('span', 'name', name))
    if (e.display_name !== null && e.display_name !== e.username) names.append(el('span', 'handle', e.username))
    who.append(names)
    const member = el('td', 'member')
    member.append(who)
    const level = el('td', 'level')
    level.append(el('span', 'lv', 'Level ' + e.level))
    const bar = el('progress')
    bar.max = e.level_progress.required
    bar.value = e.level_progress.xp
    bar.setAttribute('aria-label', number.format(e.level_progress.xp) + ' of ' + number.format(e.level_progress.required) + ' XP to level ' + (e.level + 1))
    level.append(bar)
    tr.append(rank, member, level, el('td', 'xp', number.format(e.xp)))
    return tr
  }
  const source = new EventSource('/public/v1/' + encodeURIComponent(slug) + '/leaderboard/stream?' + query)
  source.addEventListener('leaderboard', (event) => {
    const body = JSON.parse(event.data)
    table.tBodies[0].replaceChildren(...body.data.map(row))
    shown.clear()
    for (const e of body.data) shown.set(e.user_id, String(e.xp))
    const total = document.getElementById('total')
    if (total !== null) total.textContent = number.format(body.total)
    document.body.dataset.updates = String(Number(document.body.dataset.updates ?? '0') + 1)
  })
  source.addEventListener('open', () => { status.textContent = 'Live'; status.classList.add('on') })
  source.addEventListener('error', () => { status.textContent = 'Reconnecting…'; status.classList.remove('on') })
})()
`

const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`
const STYLE_HASH = hash(CSS)
const SCRIPT_HASH = hash(SCRIPT)

/**
 * The page's Content-Security-Policy: its style and script by hash, its stream, https images;
 * framed by any site only when embedded.
 */
export function boardPagePolicy (embed: boolean): string {
  return `default-src 'none'; script-src ${SCRIPT_HASH}; style-src ${STYLE_HASH}; connect-src 'self'; img-src https: data:; ` +
    `base-uri 'none'; form-action 'none'; frame-ancestors ${embed ? '*' : "'none'"}`
}

/** A link to another page of the same board. */
function pageLink (view: BoardView, changes: { page?: number, period?: Period }): string {
  const query = new URLSearchParams()
  const period = changes.period ?? view.period
  const page = changes.page ?? 1
  if (period !== 'all') query.set('period', period)
  if (page !== 1) query.set('page', String(page))
  if (view.limit !== PAGE_ROWS) query.set('limit', String(view.limit))
  if (view.embed) query.set('embed', '1')
  const text = query.toString()
  return escapeHtml(`/p/${view.slug}${text === '' ? '' : `?${text}`}`)
}

// No mark for null: a member without a rank at the last closed day's end, and every member
// while no day has closed, which would mark a whole page.
// The arrow is hidden from assistive technology, which reads the words instead (a title is not
// read by every screen reader, and "black up-pointing triangle 3" says little).
function rankChange (change: number | null | undefined): string {
  if (change === undefined || change === null || change === 0) return ''
  const up = change > 0
  const places = Math.abs(change)
  return `<span class="move ${up ? 'up' : 'down'}"><span aria-hidden="true">${up ? '▲' : '▼'}${places}</span>` +
    `<span class="sr">${up ? 'up' : 'down'} ${places} ${places === 1 ? 'place' : 'places'} since yesterday</span></span>`
}

/** One row, as the page's script makes it too. */
function row (e: Entry): string {
  const name = e.display_name ?? e.username
  const avatar = e.avatar_url === null
    ? `<span class="avatar" aria-hidden="true">${escapeHtml(Array.from(name)[0] ?? '?')}</span>`
    : `<img class="avatar" src="${escapeHtml(e.avatar_url)}" alt="" width="36" height="36" loading="lazy">`
  const handle = e.display_name !== null && e.display_name !== e.username ? `<span class="handle">${escapeHtml(e.username)}</span>` : ''
  const { xp, required } = e.level_progress
  return `<tr data-user="${e.user_id}" data-xp="${e.xp}"><td class="rank">${e.rank}${rankChange(e.rank_change)}</td>` +
    `<td class="member"><div class="who">${avatar}<div class="names"><span class="name">${escapeHtml(name)}</span>${handle}</div></div></td>` +
    `<td class="level"><span class="lv">Level ${e.level}</span><progress max="${required}" value="${xp}" ` +
    `aria-label="${number.format(xp)} of ${number.format(required)} XP to level ${e.level + 1}"></progress></td>` +
    `<td class="xp">${number.format(e.xp)}</td></tr>`
}

/** Links to the pages around the current one, the first and the last. */
function pages (view: BoardView): string {
  const last = Math.max(1, Math.ceil(view.board.total / view.limit))
  const current = view.board.page
  if (last === 1 && current === 1) return ''
  const shown = new Set([1, last, current - 2, current - 1, current, current + 1, current + 2].filter((p) => p >= 1 && p <= last))
  const parts: string[] = []
  if (current > 1) parts.push(`<a href="${pageLink(view, { page: Math.min(current - 1, last) })}" rel="prev">Previous</a>`)
  let previous = 0
  for (const p of [...shown].sort((a, b) => a - b)) {
    if (p > previous + 1) parts.push('<span aria-hidden="true">…</span>')
    parts.push(p === current
      ? `<span aria-current="page">${p}</span>`
      : `<a href="${pageLink(view, { page: p })}" aria-label="Page ${p}">${p}</a>`)
    previous = p
  }
  if (current < last) parts.push(`<a href="${pageLink(view, { page: current + 1 })}" rel="next">Next</a>`)
  return `<nav class="pages" aria-label="Pages">${parts.join('')}</nav>`
}

export function renderBoardPage (view: BoardView): string {
  const { stats } = view
  const name = stats.name ?? 'Leaderboard'
  const { board } = view
  const first = (board.page - 1) * view.limit + 1
  const last = Math.min(board.total, board.page * view.limit)
  const season = view.season === null ? '' : ` · ${escapeHtml(view.season)}`
  const icon = stats.icon_url === null ? '' : `<img src="${escapeHtml(stats.icon_url)}" alt="" width="56" height="56">`
  const tabs = view.embed
    ? ''
    : `<nav class="periods" aria-label="Period">${PERIODS.map(([period, label]) =>
        `<a href="${pageLink(view, { period })}"${period === view.period ? ' aria-current="page"' : ''}>${label}</a>`).join('')}</nav>`
  const range = board.data.length === 0 ? 'no members on this page' : `ranks ${number.format(first)} to ${number.format(last)} of <span id="total">${number.format(board.total)}</span>`
  const rows = board.data.length === 0
    ? '<tr><td colspan="4" class="empty">Nobody here yet.</td></tr>'
    : board.data.map(row).join('')
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(name)}: leaderboard</title>
<link rel="icon" href="${stats.icon_url === null ? 'data:,' : escapeHtml(stats.icon_url)}">
<style>${CSS}</style>
</head>
<body${view.embed ? ' class="embed"' : ''}>
<a class="skip" href="#board">Skip to the leaderboard</a>
<main>
<header class="board">${icon}<div><h1>${escapeHtml(name)}</h1>
<p class="sub">${number.format(stats.total_members)} members with XP · ${number.format(stats.total_xp)} XP in all${season}</p></div></header>
${tabs}<div class="card">
<table id="board" data-slug="${escapeHtml(view.slug)}" data-period="${view.period}" data-page="${board.page}" data-limit="${view.limit}">
<caption>${escapeHtml(name)}, ${PERIOD_CAPTIONS[view.period]}: ${range}</caption>
<thead><tr><th scope="col" class="rank">Rank</th><th scope="col" class="member">Member</th><th scope="col" class="level">Level</th><th scope="col" class="xp">XP</th></tr></thead>
<tbody>${rows}</tbody>
</table>
</div>
${pages(view)}
<footer><span id="live" class="live">Not live (reload for the latest)</span>${view.embed ? '' : '<span>Ranks by XP; ties by member id.</span>'}</footer>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`
}
