// Rows out of a leveling bot's leaderboard JSON (src/transfer/import-formats.ts says where each
// bot keeps them), read as a stream: a page, an array of pages, or pages one after another (what
// a loop appending each page of an API to one file makes). Memory stays flat however large the
// file: only the row being read is held, and of it only the fields import uses, each cut at
// MAX_TEXT characters (longer than any valid value, so a value cut short is still as bad as it
// was). Numbers are read as their digits: an id past 2^53 keeps every one, where JSON.parse would
// round 444444444444444444 to 444444444444444400, another user.
import { none } from 'stream-chain/core'
import { jsonParser, type Token } from 'stream-json/core/parser.js'
import { ImportFileError, LeaderboardError } from '../errors.js'
import type { RowSource, SourceRow } from './import-members.js'
import { JSON_FORMATS, type JsonFormat, type JsonImportFormat, type RowFields, type RowList } from './import-formats.js'

/** Characters kept of a key or value: past any valid id, XP, name or avatar URL. */
const MAX_TEXT = 1024

type Parse = (text: string | typeof none) => ReturnType<ReturnType<typeof jsonParser>>

/** The parts of the file a reader reads from (a value nothing is read from is skipped by counting its depth). */
type Role = 'pages' | 'page' | 'list' | 'row' | 'nested' | 'error'

interface Frame {
  role: Role
  /** In an object: the key of the value being read. */
  key: string | undefined
  /** Values read so far. */
  count: number
  /** page, list and row: the page's index, when the file has several. */
  page: number | undefined
  /** page: where its rows are, once seen. list and row: the list they are in. */
  list: RowList | undefined
  /** row, nested: the fields read; page, error: what an error body says. */
  fields: RowFields | undefined
}

export interface JsonSourceOptions {
  /** The input's name in messages (default: "the input"). */
  name?: string
  /** The input's length in bytes, when known: lets `fractionRead` say how far it got. */
  size?: number
}

/** The rows of a bot's leaderboard JSON read from `input` (bytes or text), a read's worth at a time. */
export function jsonSource (input: AsyncIterable<Buffer | string>, format: JsonImportFormat, options: JsonSourceOptions = {}): RowSource {
  const reader = new PageReader(JSON_FORMATS[format], options.name ?? 'the input')
  const { size } = options
  return {
    rows: reader.rows(input),
    fractionRead: () => size === undefined || size === 0 ? 0 : Math.min(1, reader.bytes / size)
  }
}

class PageReader {
  readonly #format: JsonFormat
  readonly #name: string
  /** Bytes read so far. */
  bytes = 0
  readonly #stack: Frame[] = []
  /** The innermost frame (the stack's last), kept apart: it is read for nearly every token. */
  #top: Frame | undefined
  /** Values at the top level so far, and whether the first was an array of pages. */
  #topCount = 0
  #topArray = false
  /** Nesting inside a skipped value. */
  #skipping = 0
  /** Where the characters of the key or value being read go, and whether the value is kept. */
  #text = ''
  #inKey = false
  #keep = false
  #rows: SourceRow[] = []
  /** Another bot's list seen in the page being read, for a hint when the page has none of this bot's. */
  #otherList: string | undefined

  constructor (format: JsonFormat, name: string) {
    this.#format = format
    this.#name = name
  }

  async * rows (input: AsyncIterable<Buffer | string>): AsyncGenerator<SourceRow[]> {
    // Strings, keys and numbers as chunks: a value is held only when it is one to read. The parser
    // is flushed by a call with `none` (stream-chain's flushable), which its type leaves out.
    const parse = jsonParser({ packValues: false, streamValues: true, jsonStreaming: true }) as Parse
    const decoder = new TextDecoder() // drops a byte-order mark; bytes that are not UTF-8 become U+FFFD
    const chunks = input[Symbol.asyncIterator]()
    try {
      for (let first = true; ; first = false) {
        let next: IteratorResult<Buffer | string>
        try {
          next = await chunks.next()
        } catch (err) {
          // A refusal the input itself raised (the write API's body limit, 413) is passed on as it is.
          if (err instanceof LeaderboardError) throw err
          throw new ImportFileError(`cannot read ${this.#name}: ${(err as Error).message}`)
        }
        if (next.done === true) break
        const chunk = next.value
        this.bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length
        const text = typeof chunk !== 'string' ? decoder.decode(chunk, { stream: true }) : first && chunk.charCodeAt(0) === 0xfeff ? chunk.slice(1) : chunk
        this.#read(parse, text, false)
        if (this.#rows.length > 0) {
          const rows = this.#rows
          this.#rows = []
          yield rows
        }
      }
    } finally {
      await chunks.return?.() // a consumer that stopped early, or a fault: the file is closed
    }
    this.#read(parse, decoder.decode(), false)
    this.#read(parse, none, true)
    if (this.#topCount === 0) {
      const { bot } = this.#format
      throw new ImportFileError(`${this.#name} is empty: ${this.#expected(`${article(bot)} ${bot} leaderboard page`)}`)
    }
    if (this.#rows.length > 0) yield this.#rows
  }

  #read (parse: Parse, text: string | typeof none, end: boolean): void {
    if (text === '') return
    let tokens
    try {
      tokens = parse(text)
    } catch (err) {
      const where = end ? 'it ends before its JSON does (cut off?)' : `within its first ${this.bytes} bytes`
      throw new ImportFileError(`${this.#name} is not valid JSON: ${(err as Error).message}; ${where}`)
    }
    if (tokens === none) return
    for (const token of tokens.values) this.#token(token)
  }

  #token (token: Token): void {
    if (this.#skipping > 0) {
      if (token.name === 'startObject' || token.name === 'startArray') this.#skipping++
      else if ((token.name === 'endObject' || token.name === 'endArray') && --this.#skipping === 0) this.#valueRead()
      return
    }
    switch (token.name) {
      case 'startObject':
      case 'startArray':
        this.#open(token.name === 'startObject')
        break
      case 'endObject':
      case 'endArray':
        this.#close()
        break
      case 'startKey':
        this.#text = ''
        this.#inKey = true
        break
      case 'endKey': {
        const top = this.#top
        if (top !== undefined) top.key = this.#text
        this.#inKey = false
        break
      }
      case 'startString':
      case 'startNumber':
        this.#text = ''
        this.#keep = this.#keeps()
        break
      case 'stringChunk':
      case 'numberChunk':
        if ((this.#inKey || this.#keep) && this.#text.length < MAX_TEXT) this.#text += token.value.slice(0, MAX_TEXT - this.#text.length)
        break
      case 'endString':
        this.#primitive(this.#keep ? own(this.#text) : undefined)
        break
      case 'endNumber':
        this.#primitive(this.#isId() ? own(this.#text) : Number(this.#text))
        break
      case 'nullValue':
      case 'trueValue':
      case 'falseValue':
        this.#keep = this.#keeps()
        this.#primitive(token.value)
        break
    }
  }

  /** Whether the value starting now is one to read (or, if it cannot be in its place, says so). */
  #keeps (): boolean {
    const top = this.#top
    if (top === undefined) throw this.#notALeaderboard()
    switch (top.role) {
      case 'pages': throw this.#notAPage(top.count, 'it is not an object')
      case 'page': return top.key === 'message' || top.key === 'error'
      case 'row': return this.#format.fields.has(top.key ?? '')
      case 'nested': return true
      case 'error': return top.key === 'message'
      default: return false
    }
  }

  #isId (): boolean {
    const top = this.#top
    return top?.role === 'row' && this.#format.ids.has(top.key ?? '')
  }

  #primitive (value: unknown): void {
    const top = this.#top
    if (top !== undefined && this.#keep) {
      if (top.role === 'page' || top.role === 'error') {
        if (typeof value === 'string') top.fields = { says: value }
      } else {
        top.fields ??= Object.create(null) as RowFields // a key such as "__proto__" is then only a key
        top.fields[top.key ?? ''] = value
      }
    } else if (top?.role === 'list') {
      this.#rows.push({ at: this.#position(top), userId: undefined, username: undefined, xp: undefined, problem: `not a ${this.#format.row} object` })
    }
    this.#keep = false
    this.#valueRead()
  }

  #open (object: boolean): void {
    const top = this.#top
    const frame = (role: Role, page?: number, list?: RowList): void => {
      this.#top = { role, key: undefined, count: 0, page, list, fields: undefined }
      this.#stack.push(this.#top)
    }
    if (top === undefined) {
      if (this.#topArray) throw new ImportFileError(`${this.#name} goes on after its array of pages: give one page, an array of pages, or pages one after another`)
      if (!object && this.#topCount === 0) {
        this.#topArray = true
        frame('pages')
      } else if (object) {
        this.#otherList = undefined
        frame('page', this.#topCount === 0 ? undefined : this.#topCount)
      } else {
        throw this.#notAPage(this.#topCount, 'it is not an object')
      }
      return
    }
    switch (top.role) {
      case 'pages':
        if (!object) throw this.#notAPage(top.count, 'it is not an object')
        this.#otherList = undefined
        frame('page', top.count)
        return
      case 'page': {
        const list = top.list === undefined ? this.#format.lists.find((l) => l.key === top.key) : undefined
        if (list !== undefined) {
          if (object !== (list.byId === true)) throw this.#notAPage(top.page, `its "${list.key}" is not ${list.byId === true ? 'an object' : 'an array'}`)
          top.list = list
          frame('list', top.page, list)
          return
        }
        this.#otherList ??= otherList(this.#format, top.key)
        if (object && top.key === 'error') return frame('error')
        break
      }
      case 'list':
        if (object) return frame('row', top.page, top.list)
        this.#rows.push({ at: this.#position(top), userId: undefined, username: undefined, xp: undefined, problem: `not a ${this.#format.row} object` })
        break
      case 'row':
        if (object && this.#format.nested.has(top.key ?? '')) return frame('nested')
        break
    }
    this.#skipping = 1
  }

  #close (): void {
    const closed = this.#stack.pop()
    if (closed === undefined) return
    const top = this.#top = this.#stack.at(-1)
    if (closed.role === 'row' && top !== undefined) {
      const fields = closed.fields ?? {}
      const key = top.list?.byId === true ? top.key : undefined
      const member = this.#format.member(fields, key)
      const row: SourceRow = { at: this.#position(top), userId: member.userId, username: member.username, xp: member.xp }
      if (member.displayName !== undefined) row.displayName = member.displayName
      if (member.avatarUrl !== undefined) row.avatarUrl = member.avatarUrl
      this.#rows.push(row)
    } else if (closed.role === 'nested' && top !== undefined) {
      top.fields ??= Object.create(null) as RowFields
      top.fields[top.key ?? ''] = closed.fields ?? {}
    } else if (closed.role === 'error' && top !== undefined && closed.fields !== undefined) {
      top.fields = closed.fields
    } else if (closed.role === 'page' && closed.list === undefined) {
      const says = typeof closed.fields?.says === 'string' ? `; it says ${JSON.stringify(closed.fields.says.slice(0, 200))}` : ''
      const hint = this.#otherList === undefined ? '' : `; its ${this.#otherList}`
      if (closed.page === undefined && top === undefined) throw this.#notALeaderboard(says + hint)
      throw this.#notAPage(closed.page, `it has no ${listsText(this.#format)}${says}${hint}`)
    }
    this.#valueRead()
  }

  /** A value of the innermost container (or of the top level) has been read whole. */
  #valueRead (): void {
    const top = this.#top
    if (top === undefined) this.#topCount++
    else top.count++
  }

  /** The position of the list's next row (a list frame) or of a row in it (the list, the row's frame being closed). */
  #position (list: Frame): SourceRow['at'] {
    const index = list.count
    const key = list.list?.byId === true && list.key !== undefined ? own(list.key) : undefined
    const at: { page?: number, index: number, list?: string, key?: string } = { index, list: list.list?.key }
    if (list.page !== undefined) at.page = list.page
    if (key !== undefined) at.key = key
    return at
  }

  /** `expected a page, {"players": [...]}, or an array of pages` */
  #expected (page = 'a page'): string {
    const list = this.#format.lists[0]
    return `expected ${page}, {"${list?.key ?? ''}": ${list?.byId === true ? '{...}' : '[...]'}}, or an array of pages`
  }

  #notALeaderboard (detail = ''): ImportFileError {
    const { bot } = this.#format
    return new ImportFileError(`not ${article(bot)} ${bot} leaderboard: ${this.#expected()}${detail}`)
  }

  #notAPage (page: number | undefined, why: string): ImportFileError {
    const { bot } = this.#format
    return new ImportFileError(`${page === undefined ? 'not' : `[${page}] is not`} ${article(bot)} ${bot} leaderboard page: ${why}`)
  }
}

/**
 * The text as a string of its own. The parser hands out pieces of what it read as slices, and V8
 * keeps a slice of 13 characters or more as a view of the whole: an id kept to catch repeats
 * would keep the 64 KiB read it came from, and so every read of the file. Flattening a
 * concatenation copies the characters.
 */
function own (text: string): string {
  return text.length < 13 ? text : (' ' + text).slice(1)
}

/** `"players" array`, `"leaderboard" array or "users" object`. */
function listsText (format: JsonFormat): string {
  return format.lists.map((l) => `"${l.key}" ${l.byId === true ? 'object' : 'array'}`).join(' or ')
}

function article (bot: string): string {
  return /^[AEIOU]/.test(bot) ? 'an' : 'a'
}

/** For a key of a page: a hint that the file is another bot's, when the key is where that bot keeps its rows. */
function otherList (format: JsonFormat, key: string | undefined): string | undefined {
  for (const [name, other] of Object.entries(JSON_FORMATS)) {
    if (other !== format && other.lists.some((l) => l.key === key)) return `"${key ?? ''}" is where ${other.bot} keeps its rows: is it format ${name}?`
  }
  return undefined
}
