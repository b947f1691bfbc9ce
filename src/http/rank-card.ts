// A member's rank card (GET /public/v1/{slug}/members/{user_id}/card.svg): one SVG image, 600 ×
// 160, of the member's name, rank, level and way through it, and XP, for a bot to post or a
// site to show with <img>. Styled by presentation attributes only (the API's CSP allows no
// style), every text escaped, names cut to fit (an SVG text does not wrap or clip by itself).
import type { GuildStats, MemberRecord } from '../reader/leaderboard-reader.js'
import { escapeHtml } from './board-page.js'

const WIDTH = 600
const HEIGHT = 160
const BAR = { x: 150, y: 104, width: 420, height: 14 }
const FONT = 'system-ui, -apple-system, Segoe UI, Roboto, sans-serif'
const number = new Intl.NumberFormat('en')

/** `text` cut to `max` code points, with an ellipsis when cut. */
function fit (text: string, max: number): string {
  const points = Array.from(text)
  return points.length <= max ? text : `${points.slice(0, max - 1).join('')}…`
}

export function renderRankCard (member: MemberRecord, stats: GuildStats): string {
  const name = member.display_name ?? member.username
  const server = stats.name ?? 'Leaderboard'
  const handle = member.display_name !== null && member.display_name !== member.username ? ` · @${member.username}` : ''
  const { xp, required } = member.level_progress
  const filled = Math.round(BAR.width * Math.min(1, required > 0 ? xp / required : 1))
  const label = `${name}: rank ${member.rank} in ${server}, level ${member.level}, ${number.format(member.xp)} XP`
  const text = (x: number, y: number, size: number, fill: string, content: string, extra = ''): string =>
    `<text x="${x}" y="${y}" font-family="${FONT}" font-size="${size}" fill="${fill}"${extra}>${escapeHtml(content)}</text>`
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="title">` +
    `<title id="title">${escapeHtml(label)}</title>` +
    `<rect width="${WIDTH}" height="${HEIGHT}" rx="16" fill="#1c2026"/>` +
    '<circle cx="80" cy="80" r="48" fill="#343a42"/>' +
    text(80, 96, 44, '#eceff3', Array.from(name)[0] ?? '?', ' text-anchor="middle" font-weight="700"') +
    text(150, 58, 28, '#eceff3', fit(name, 22), ' font-weight="700"') +
    text(150, 84, 16, '#b6bec9', fit(`${server}${handle}`, 44)) +
    text(570, 58, 30, '#8ab4f8', `#${number.format(member.rank)}`, ' text-anchor="end" font-weight="700"') +
    text(570, 84, 16, '#b6bec9', `Level ${member.level}`, ' text-anchor="end"') +
    `<rect x="${BAR.x}" y="${BAR.y}" width="${BAR.width}" height="${BAR.height}" rx="7" fill="#343a42"/>` +
    (filled > 0 ? `<rect x="${BAR.x}" y="${BAR.y}" width="${filled}" height="${BAR.height}" rx="7" fill="#8ab4f8"/>` : '') +
    text(150, 142, 14, '#b6bec9', `${number.format(xp)} / ${number.format(required)} XP to level ${member.level + 1}`) +
    text(570, 142, 14, '#b6bec9', `${number.format(member.xp)} XP`, ' text-anchor="end"') +
    '</svg>\n'
}
