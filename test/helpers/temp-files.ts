// A test file's own temporary folder, removed in its teardown, and a writer of files into it whose
// names never collide (each is numbered), so that side-by-side tests may use the same names.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'

export interface TempFiles {
  dir: string
  /** Writes `content` to a new file named after `name`, and gives its path. */
  file: (name: string, content: string) => string
}

export function tempFiles (t: Test, prefix: string): TempFiles {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  let last = 0
  return {
    dir,
    file: (name, content) => {
      const path = join(dir, `${++last}-${name}`)
      writeFileSync(path, content)
      return path
    }
  }
}
