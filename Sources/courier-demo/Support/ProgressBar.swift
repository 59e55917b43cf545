import Foundation
import Courier

/// A progress bar drawn by the demo (the library only reports numbers): redrawn in place on a
/// terminal, one line per quarter otherwise (a pipe, CI). ``finish()`` ends its line.
final class ProgressBar: Sendable {
    private let lastQuarter = Locked(-1)

    /// Draws `progress`.
    func draw(_ progress: TransferProgress) {
        let screen = Screen.shared
        let done = mebibytes(progress.completedBytes)
        guard let fraction = progress.fractionCompleted, let total = progress.totalBytes else {
            if screen.isInteractive { screen.redraw("  \(done) MiB (total unknown)") }
            return
        }
        let width = 30
        let filled = max(0, min(width, Int(fraction * Double(width))))
        let line =
            "  [" + String(repeating: "#", count: filled) + String(repeating: "·", count: width - filled) + "] "
            + "\(Int(fraction * 100))%".leftPadded(to: 4) + "  \(done)/\(mebibytes(total)) MiB"
        if screen.isInteractive {
            screen.redraw(line)
        } else {
            let quarter = Int(fraction * 4)
            let due = lastQuarter.withLock { last in
                defer { last = max(last, quarter) }
                return quarter > last
            }
            if due { screen.line(line) }
        }
    }

    /// Follows `progress` to its end, then ends the bar's line.
    func follow(_ progress: AsyncStream<TransferProgress>) async {
        for await step in progress { draw(step) }
        finish()
    }

    /// Ends the bar's line (before whatever is printed next).
    func finish() { Screen.shared.endLine() }
}

/// `12.3` (MiB, one decimal).
func mebibytes(_ bytes: Int64) -> String {
    let tenths = (bytes * 10 + 524_288) / 1_048_576
    return "\(tenths / 10).\(tenths % 10)"
}

extension String {
    /// The string right-aligned in `width` columns.
    func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}
