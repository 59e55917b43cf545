#if canImport(OSLog)
import OSLog

/// Writes log entries to Apple's unified logging system through `Logger` (subsystem and
/// category), so they appear in Console.app and Instruments and cost almost nothing when not
/// collected.
///
/// Privacy: the entry's ``NetworkLogEntry/summary`` (method, path template, status, timings,
/// sizes, request ID — Courier's own metadata) is logged `.public`; its
/// ``NetworkLogEntry/details`` (URL, header fields, body previews — already redacted, but still
/// about the user's data) are logged `.private`, so they show while debugging and are hidden in
/// logs collected from devices (sysdiagnose).
///
/// Levels map to `OSLogType`: debug → `.debug`, info → `.info`, notice → `.default`,
/// error → `.error`.
public struct OSLogNetworkLogger: NetworkLogger {
    /// Entries below this level are dropped.
    public let minimumLevel: NetworkLogLevel
    private let logger: Logger

    /// Creates a logger.
    ///
    /// - Parameters:
    ///   - subsystem: Usually the app's bundle identifier, e.g. `com.example.app`.
    ///   - category: The category within the subsystem; `network` by default.
    ///   - minimumLevel: Lowest level written; ``NetworkLogLevel/info`` by default.
    public init(subsystem: String, category: String = "network", minimumLevel: NetworkLogLevel = .info) {
        self.logger = Logger(subsystem: subsystem, category: category)
        self.minimumLevel = minimumLevel
    }

    public func log(_ entry: NetworkLogEntry) {
        guard entry.level >= minimumLevel else { return }
        let type: OSLogType
        switch entry.level {
        case .debug: type = .debug
        case .info: type = .info
        case .notice: type = .default
        case .error: type = .error
        }
        if entry.details.isEmpty {
            logger.log(level: type, "\(entry.summary, privacy: .public)")
        } else {
            let details = entry.details.joined(separator: "\n")
            logger.log(level: type, "\(entry.summary, privacy: .public)\n\(details, privacy: .private)")
        }
    }
}
#endif
