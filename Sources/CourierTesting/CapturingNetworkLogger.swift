import Foundation
import Courier

/// A `NetworkLogger` that keeps every entry in memory, for tests: assert on what was logged and,
/// above all, on what was *not* (no secret in any line).
///
/// ```swift
/// let logger = CapturingNetworkLogger()          // debug: the most verbose level
/// let client = APIClient(environment: env) {
///     $0.interceptors = [RequestIDInterceptor(), LoggingInterceptor(logger: logger)]
/// }
/// _ = try await client.send(Login(password: "SECRET-PW"))
/// #expect(!logger.text.contains("SECRET-"))
/// ```
public final class CapturingNetworkLogger: NetworkLogger {
    /// Entries below this level are dropped.
    public let minimumLevel: NetworkLogLevel
    private let storage = Locked<[NetworkLogEntry]>([])

    /// Creates a logger; `NetworkLogLevel.debug` (everything, with headers and bodies) by default.
    public init(minimumLevel: NetworkLogLevel = .debug) {
        self.minimumLevel = minimumLevel
    }

    public func log(_ entry: NetworkLogEntry) {
        guard entry.level >= minimumLevel else { return }
        storage.withLock { $0.append(entry) }
    }

    /// Every entry, in the order logged.
    public var entries: [NetworkLogEntry] { storage.current }

    /// Every line of every entry (summaries and details).
    public var lines: [String] { entries.flatMap { [$0.summary] + $0.details } }

    /// All entries as one text, each entry's `NetworkLogEntry.text` on its own lines.
    public var text: String { entries.map(\.text).joined(separator: "\n") }

    /// Forgets every entry.
    public func removeAll() { storage.set([]) }
}
