// The write scripts' typed calls (src/redis/write-scripts.ts) against the scripts themselves: the
// KEYS each call names, in its order, are the ones the .lua header lists; it gives as many ARGV as
// the header documents; and a call's object goes out in that order.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { scriptArgs, WRITE_SCRIPTS, type WriteScript } from '../src/redis/write-scripts.js'

const COMMANDS = new URL('../src/redis/commands/', import.meta.url)
const camel = (name: string): string => name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase())

/** A script's file, its KEYS as its header names them, and the highest ARGV index the header documents. */
function header (script: WriteScript): { file: string, numberOfKeys: number | null, keys: string[], argv: number } {
  const kebab = script.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
  const file = readdirSync(COMMANDS).find((f) => new RegExp(`^${kebab}-(\\d+|n)\\.lua$`).test(f)) ?? ''
  const text = readFileSync(new URL(file, COMMANDS), 'utf8')
  const head = text.slice(0, text.indexOf(']]'))
  const keys = [...head.matchAll(/^\s*KEYS\[(\d+)\]\s+(\w+)/gm)].map((m) => ({ i: Number(m[1]), name: camel(m[2] ?? '') }))
  const argv = Math.max(0, ...[...head.matchAll(/ARGV\[(\d+)\]/g)].map((m) => Number(m[1])))
  return {
    file,
    numberOfKeys: file.endsWith('-n.lua') ? null : Number(/-(\d+)\.lua$/.exec(file)?.[1]),
    keys: keys.sort((a, b) => a.i - b.i).map((k) => k.name),
    argv
  }
}

t.test('each typed call names the KEYS of its script\'s header, in order, and as many ARGV', async (t) => {
  for (const [script, { keys, argv }] of Object.entries(WRITE_SCRIPTS) as Array<[WriteScript, { keys: readonly string[], argv: readonly string[] }]>) {
    const lua = header(script)
    t.not(lua.file, '', `${script}: its .lua file`)
    t.same(keys, lua.keys, `${script}: KEYS as ${lua.file} lists them`)
    // A script whose calls give their number of keys (-n.lua) names its fixed ones, then more.
    if (lua.numberOfKeys !== null) t.equal(keys.length, lua.numberOfKeys, `${script}: as many keys as its file name says`)
    t.equal(argv.length, lua.argv, `${script}: ${lua.argv} ARGV, as its header documents`)
    t.equal(new Set([...keys, ...argv]).size, keys.length + argv.length, `${script}: no name twice`)
  }
})

t.test('a call\'s object goes out as its keys, then its ARGV, in the listed order; other fields are left out', async (t) => {
  t.same(scriptArgs('configureGuild', { settings: 's', version: 'v', seasons: 'e', expectedEpoch: 3, fieldCount: 1, ...{ board: 'not sent' } }),
    ['s', 'v', 'e', 3, 1])
})
