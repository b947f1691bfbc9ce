// A busy machine on demand: one process spinning on each core (or `perCore` each), each killed by
// its own pid in teardown.
import type { Test } from 'tap'
import { spawn } from 'node:child_process'
import { availableParallelism } from 'node:os'

export function burnEveryCore (t: Test, perCore = 1): void {
  const burners = Array.from({ length: availableParallelism() * perCore }, () =>
    spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore', env: { PATH: process.env.PATH } }))
  t.teardown(async () => {
    await Promise.all(burners.map(async (burner) => {
      if (burner.exitCode !== null || burner.signalCode !== null) return
      const exited = new Promise((resolve) => burner.once('exit', resolve))
      burner.kill('SIGKILL')
      await exited
    }))
  })
}
