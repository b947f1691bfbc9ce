// Copies the Lua scripts (and the demo's live page) next to the compiled JavaScript (tsc copies
// only .ts output), replacing what an earlier build left there: a renamed script must not linger
// beside its successor.
import { cpSync, mkdirSync, rmSync } from 'node:fs'

rmSync('dist/redis/commands', { recursive: true, force: true })
cpSync('src/redis/commands', 'dist/redis/commands', { recursive: true })
mkdirSync('dist/demo', { recursive: true })
cpSync('src/demo/live-page.html', 'dist/demo/live-page.html')
