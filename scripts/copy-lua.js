// Copies the Lua scripts next to the compiled JavaScript (tsc copies only .ts output), replacing
// what an earlier build left there: a renamed script must not linger beside its successor.
import { cpSync, rmSync } from 'node:fs'

rmSync('dist/redis/commands', { recursive: true, force: true })
cpSync('src/redis/commands', 'dist/redis/commands', { recursive: true })
rmSync('dist/demo/live-page.html', { force: true }) // the demo's page before it was the public board's
