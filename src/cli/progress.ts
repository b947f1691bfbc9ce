// Progress of a long command on stderr: a bar on a terminal; elsewhere (logs, pipes) a plain line
// every few seconds at most, or nothing for commands whose output is already on stderr.
import cliProgress from 'cli-progress'

export interface Progress {
  /** `detail` replaces the default "<done>/<total> <unit>" beside the bar. */
  update: (done: number, total: number, detail?: string) => void
  stop: () => void
}

export interface ProgressOptions {
  /** What is counted: "members". */
  unit: string
  /** Say nothing unless stderr is a terminal. */
  terminalOnly?: boolean
}

export function progressReporter (label: string, { unit, terminalOnly = false }: ProgressOptions): Progress {
  const describe = (done: number, total: number, detail?: string): string => detail ?? `${done}/${total} ${unit}`
  if (process.stderr.isTTY) {
    let bar: cliProgress.SingleBar | undefined
    return {
      update: (done, total, detail) => {
        if (bar === undefined) {
          bar = new cliProgress.SingleBar({
            format: `${label} {bar} {percentage}% | {detail} | {eta_formatted} left`,
            stream: process.stderr,
            // A hidden cursor would stay hidden if the command is interrupted with Ctrl-C.
            hideCursor: false,
            clearOnComplete: true
          }, cliProgress.Presets.shades_classic)
          bar.start(total, 0, { detail: describe(0, total, detail) })
        }
        bar.setTotal(total)
        bar.update(done, { detail: describe(done, total, detail) })
      },
      stop: () => {
        bar?.stop()
        bar = undefined
      }
    }
  }
  if (terminalOnly) return { update: () => {}, stop: () => {} }
  let last = performance.now()
  return {
    update: (done, total, detail) => {
      if (done < total && performance.now() - last >= 2000) {
        last = performance.now()
        process.stderr.write(`${label}: ${describe(done, total, detail)}\n`)
      }
    },
    stop: () => {}
  }
}
