import Foundation

/// Severity of a network log entry, lowest first. Maps onto `OSLogType` on Apple platforms.
public enum NetworkLogLevel: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Request lines, header and body details: development only.
    case debug
    /// One line per completed call (1xx–3xx).
    case info
    /// Calls that ended in a 4xx status or were cancelled by the caller.
    case notice
    /// Calls that ended in a 5xx status or without a response.
    case error

    public static func < (lhs: NetworkLogLevel, rhs: NetworkLogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `debug`, `info`, `notice` or `error`.
    public var description: String {
        switch self {
        case .debug: return "debug"
        case .info: return "info"
        case .notice: return "notice"
        case .error: return "error"
        }
    }
}

/// One thing worth logging about a call, already redacted and formatted.
///
/// Split in two by privacy: ``summary`` holds only Courier's own metadata (method, path template,
/// status, duration, sizes, attempt, request ID) and may be published as is; ``details`` holds
/// text derived from the request and response (the redacted URL, header fields, body previews),
/// which the OSLog backend marks `.private`.
public struct NetworkLogEntry: Sendable, Hashable {
    /// What the entry is about.
    public enum Event: String, Sendable, Hashable {
        /// A request is about to be sent.
        case request
        /// A response arrived.
        case response
        /// The call ended without a response.
        case failure
        /// The streamed body of a response ended — read to its end, failed, or let go by its
        /// reader: the bytes read and how long it took after the head.
        case bodyEnd
        /// A WebSocket connection ended (module CourierRealtime): its close code (RFC 6455 §7.4),
        /// how long it was open, and the messages and payload bytes each way. Its opening
        /// handshake is logged as a ``request``, then a ``response`` (101) or a ``failure``.
        case connectionClosed
    }

    /// The severity.
    public var level: NetworkLogLevel
    /// What happened.
    public var event: Event
    /// The call's request ID.
    public var requestID: RequestID
    /// One line of metadata, e.g. `← 200 GET /items/{id} 12.4 ms 512 B [3f2a9c1e]`.
    public var summary: String
    /// Redacted detail lines: the URL, then header fields and the body preview at debug level.
    public var details: [String]

    /// Creates an entry.
    package init(level: NetworkLogLevel, event: Event, requestID: RequestID, summary: String, details: [String] = []) {
        self.level = level
        self.event = event
        self.requestID = requestID
        self.summary = summary
        self.details = details
    }

    /// The summary followed by the indented details, one per line.
    public var text: String {
        ([summary] + details.map { "    " + $0 }).joined(separator: "\n")
    }
}

/// Where network log entries go: ``ConsoleNetworkLogger`` (stderr/stdout, Linux and CLI),
/// `OSLogNetworkLogger` (Apple's unified logging), `CapturingNetworkLogger` (tests, module
/// CourierTesting), or your own.
///
/// Entries reach a logger already redacted by the ``LoggingInterceptor``. A logger is called
/// synchronously on the request's task: it must be thread-safe and quick.
public protocol NetworkLogger: Sendable {
    /// Entries below this level are not built at all (no formatting cost); header and body detail
    /// lines are only built when it is ``NetworkLogLevel/debug``.
    var minimumLevel: NetworkLogLevel { get }
    /// Writes `entry`.
    func log(_ entry: NetworkLogEntry)
}
