import Foundation

/// Keeps the most recent exchanges a ``LoggingInterceptor`` records and exports them as a HAR 1.2
/// file (``HARLog``) — attach it to a bug report, or open it in a browser's network panel or a HAR
/// viewer.
///
/// ```swift
/// let har = HARRecorder()
/// let client = APIClient(environment: env) {
///     $0.interceptors = [RequestIDInterceptor(), LoggingInterceptor(logger: nil, recorders: [har])]
/// }
/// _ = try await client.send(GetItem(id: 42))
/// try har.write(to: URL(fileURLWithPath: "session.har"))
/// ```
///
/// Memory is bounded: beyond `maximumEntries` the oldest exchanges are dropped. Everything
/// stored is already redacted.
public final class HARRecorder: NetworkExchangeRecorder {
    /// Most exchanges kept; older ones are dropped first.
    public let maximumEntries: Int
    /// Written into the file's `creator`.
    public let creator: HARLog.Creator
    private let storage = Locked<[NetworkExchange]>([])

    /// Creates a recorder.
    ///
    /// - Parameters:
    ///   - maximumEntries: Most exchanges kept (at least 1); 1000 by default.
    ///   - creator: The `creator` written to the file; Courier by default.
    public init(maximumEntries: Int = 1000, creator: HARLog.Creator = .courier) {
        self.maximumEntries = max(1, maximumEntries)
        self.creator = creator
    }

    public func record(_ exchange: NetworkExchange) {
        storage.withLock { exchanges in
            exchanges.append(exchange)
            if exchanges.count > maximumEntries { exchanges.removeFirst(exchanges.count - maximumEntries) }
        }
    }

    /// The exchanges kept, in the order recorded.
    public var exchanges: [NetworkExchange] { storage.current }

    /// Forgets every exchange. Not part of ``APIClient/resetSession(also:)`` by default — a HAR
    /// file is a developer's record of the whole run — add
    /// `SessionResetAction("network log") { har.removeAll() }` to clear it at logout.
    public func removeAll() { storage.set([]) }

    /// The archive of the exchanges kept.
    public func archive() -> HARLog { HARLog(exchanges: exchanges, creator: creator) }

    /// The archive as JSON.
    /// - Throws: `EncodingError` (not expected).
    public func jsonData() throws -> Data { try archive().jsonData() }

    /// Writes the archive to `url` atomically, replacing any file there. The file is its owner's
    /// alone (mode 0600: the exchanges' URLs and bodies are the user's), and a missing folder is
    /// created 0700.
    /// - Throws: The file system's error when the file cannot be written.
    public func write(to url: URL) throws {
        try AtomicFile.write(try jsonData(), to: url)
    }
}
