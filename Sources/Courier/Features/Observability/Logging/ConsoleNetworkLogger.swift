import Foundation

/// Writes log entries as text lines to standard error (default) or standard output — the backend
/// for Linux, command-line tools and the demo, where there is no unified logging.
///
/// Each entry becomes one summary line with a timestamp and level, followed by its indented detail
/// lines; an entry is written with one `write` call under a lock, so entries from concurrent
/// calls never interleave. An entry the stream refuses (a log file on a full disk, an I/O error)
/// is dropped: logging never ends the app.
///
/// ```
/// 2026-05-25T22:46:27.580Z info   ← 200 GET /items/{id} 12.4 ms 512 B [3f2a9c1e]
///     GET http://127.0.0.1:8080/items/42?token=<redacted>
/// ```
public struct ConsoleNetworkLogger: NetworkLogger {
    /// The stream to write to.
    public enum Stream: Sendable, Hashable {
        /// Standard error: logs stay out of a program's regular output.
        case standardError
        /// Standard output.
        case standardOutput
        /// An open file, e.g. from `FileHandle(forWritingTo:)`; the caller owns and closes it.
        case file(FileHandle)
    }

    /// Entries below this level are dropped.
    public let minimumLevel: NetworkLogLevel
    /// The stream entries go to.
    package let stream: Stream
    /// Whether each summary line starts with an ISO 8601 timestamp.
    package let includesTimestamps: Bool
    /// Whether the indented detail lines (redacted URL, headers, body preview) follow each summary
    /// line; `false` writes one line per entry.
    package let includesDetails: Bool
    private let lock = Locked(())

    /// Creates a console logger.
    ///
    /// - Parameters:
    ///   - stream: Where to write; standard error by default.
    ///   - minimumLevel: Lowest level written; ``NetworkLogLevel/info`` by default.
    ///   - includesTimestamps: Whether lines start with a timestamp; `true` by default.
    ///   - includesDetails: Whether detail lines follow each summary; `true` by default.
    public init(
        stream: Stream = .standardError, minimumLevel: NetworkLogLevel = .info,
        includesTimestamps: Bool = true, includesDetails: Bool = true
    ) {
        self.stream = stream
        self.minimumLevel = minimumLevel
        self.includesTimestamps = includesTimestamps
        self.includesDetails = includesDetails
    }

    public func log(_ entry: NetworkLogEntry) {
        guard entry.level >= minimumLevel else { return }
        let level = entry.level.description.padding(toLength: 6, withPad: " ", startingAt: 0)
        var line = includesTimestamps ? Self.timestamp(Date()) + " " : ""
        line += level + " " + (includesDetails ? entry.text : entry.summary) + "\n"
        let data = Data(line.utf8)
        lock.withLock { _ in
            let handle: FileHandle
            switch stream {
            case .standardError:
                handle = FileHandle.standardError
            case .standardOutput:
                // Flush what `print` has buffered first, so log entries and the program's own
                // output appear in the order they were produced, also when stdout is a pipe.
                fflush(nil)
                handle = FileHandle.standardOutput
            case .file(let file):
                handle = file
            }
            // The throwing write: `write(_:)` traps (Linux) or raises (Apple platforms) when the
            // write fails (a full disk, an I/O error), and a log line must never end the app.
            // The entry is lost then; nothing else can be done with it.
            _ = Result { try handle.write(contentsOf: data) }
        }
    }

    /// `2026-05-25T22:46:27.580Z`: UTC with milliseconds.
    static func timestamp(_ date: Date) -> String {
        ISO8601Parsing.string(from: date, fractionalDigits: 3) ?? "-"
    }
}
