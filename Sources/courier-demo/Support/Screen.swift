import Foundation
import Courier
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The demo's standard output: whole lines, and at most one line redrawn in place (a progress
/// bar). Any whole line first ends a line left open by a bar, so the next output never lands on
/// the bar's line; lines from concurrent tasks are written one at a time, in the order they come.
final class Screen: Sendable {
    /// The one screen of the run.
    static let shared = Screen()

    /// Whether standard output is a terminal (bars redraw in place) or a pipe or file (bars print
    /// a line now and then).
    let isInteractive = isatty(STDOUT_FILENO) != 0
    /// Whether a bar's line is open (written without its newline).
    private let open = Locked(false)

    /// Writes `text` and a newline, after ending an open bar line.
    func line(_ text: String) {
        open.withLock { open in
            write((open ? "\n" : "") + text + "\n")
            open = false
        }
    }

    /// Redraws the open line with `text` (a terminal), leaving it open.
    func redraw(_ text: String) {
        open.withLock { open in
            write("\r" + text + "\u{1B}[K")
            open = true
        }
    }

    /// Ends an open bar line, if any.
    func endLine() {
        open.withLock { open in
            if open { write("\n") }
            open = false
        }
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// The inline request log of `--verbose`: one summary line per log entry, written through the
/// ``Screen`` so it never lands on a progress bar's line.
struct ScreenLogger: NetworkLogger {
    let minimumLevel: NetworkLogLevel = .debug

    func log(_ entry: NetworkLogEntry) {
        let level = entry.level.description.padding(toLength: 6, withPad: " ", startingAt: 0)
        Screen.shared.line("    \(level) \(entry.summary)")
    }
}
