import Foundation

/// Phase timings of one HTTP transaction as the transport measured them — on Apple platforms from
/// `URLSessionTaskMetrics` (the last transaction of the task, i.e. after redirects), with
/// `CurlTransport` (module CourierCurl) from libcurl's `CURLINFO_*_TIME_T` values.
///
/// A phase that did not happen or was not measured is `nil`, never zero: a reused connection has
/// no DNS, connect or TLS phase, and with URLSession on Linux (which never delivers task metrics)
/// the whole value is absent. Durations come from wall-clock dates the system recorded.
public struct TaskTimings: Sendable, Hashable {
    /// DNS resolution (`domainLookupStart` → `domainLookupEnd`).
    public var domainLookup: Duration?
    /// Connection set-up including TLS (`connectStart` → `connectEnd`), as URLSession and HAR 1.2
    /// count it.
    public var connect: Duration?
    /// The TLS handshake (`secureConnectionStart` → `secureConnectionEnd`), part of ``connect``.
    public var secureConnection: Duration?
    /// Writing the request (`requestStart` → `requestEnd`).
    public var requestSend: Duration?
    /// Waiting for the first response byte after the request was sent (`requestEnd` →
    /// `responseStart`): server time plus one round trip. HAR's `wait`.
    public var waiting: Duration?
    /// From the start of the fetch to the first response byte (`fetchStart` → `responseStart`):
    /// time to first byte, including any DNS, connect and TLS.
    public var timeToFirstByte: Duration?
    /// Reading the response (`responseStart` → `responseEnd`).
    public var responseReceive: Duration?
    /// The whole task (`taskInterval`), redirects included.
    public var total: Duration?
    /// Whether an existing connection was reused (then DNS/connect/TLS are `nil`).
    public var isReusedConnection: Bool?
    /// The ALPN protocol, e.g. `h2`, `http/1.1`, `h3`, when known.
    public var networkProtocol: String?
    /// Redirects followed by the task.
    public var redirectCount: Int
    /// Bytes of request header fields written, request line included (Apple:
    /// `countOfRequestHeaderBytesSent`), when measured.
    public var requestHeaderBytesSent: Int64?
    /// Bytes of request body written, as sent (Apple: `countOfRequestBodyBytesSent`), when measured.
    public var requestBodyBytesSent: Int64?
    /// Bytes of response header fields received, status line included (Apple:
    /// `countOfResponseHeaderBytesReceived`), when measured.
    public var responseHeaderBytesReceived: Int64?
    /// Bytes of response body received before content decoding, i.e. as on the wire after any
    /// chunked framing is removed (Apple: `countOfResponseBodyBytesReceived`), when measured.
    public var responseBodyBytesReceived: Int64?

    /// Creates timings from phase durations — for a transport of your own that measures them (see
    /// ``TransportReporter``). Leave a phase `nil` when it did not happen or was not measured.
    ///
    /// - Parameters:
    ///   - domainLookup: DNS resolution.
    ///   - connect: TCP connection set-up, TLS included.
    ///   - secureConnection: The TLS handshake.
    ///   - requestSend: Writing the request.
    ///   - waiting: From the last request byte to the first response byte.
    ///   - timeToFirstByte: From the start of the fetch to the first response byte.
    ///   - responseReceive: Reading the response.
    ///   - total: The whole task.
    ///   - isReusedConnection: Whether a kept-alive connection carried it.
    ///   - networkProtocol: The ALPN name, e.g. `h2` or `http/1.1`.
    ///   - redirectCount: Redirects the transport followed itself (Courier's own are not counted).
    public init(
        domainLookup: Duration? = nil, connect: Duration? = nil, secureConnection: Duration? = nil,
        requestSend: Duration? = nil, waiting: Duration? = nil, timeToFirstByte: Duration? = nil,
        responseReceive: Duration? = nil, total: Duration? = nil, isReusedConnection: Bool? = nil,
        networkProtocol: String? = nil, redirectCount: Int = 0
    ) {
        self.domainLookup = domainLookup
        self.connect = connect
        self.secureConnection = secureConnection
        self.requestSend = requestSend
        self.waiting = waiting
        self.timeToFirstByte = timeToFirstByte
        self.responseReceive = responseReceive
        self.total = total
        self.isReusedConnection = isReusedConnection
        self.networkProtocol = networkProtocol
        self.redirectCount = redirectCount
    }

    /// The instants of one transaction, as `URLSessionTaskTransactionMetrics` reports them; any
    /// may be missing.
    package struct Instants: Sendable, Hashable {
        /// The task began fetching the resource.
        package var fetchStart: Date?
        /// DNS lookup began.
        package var domainLookupStart: Date?
        /// DNS lookup ended.
        package var domainLookupEnd: Date?
        /// Connection set-up began.
        package var connectStart: Date?
        /// The connection (including TLS) was established.
        package var connectEnd: Date?
        /// The TLS handshake began.
        package var secureConnectionStart: Date?
        /// The TLS handshake ended.
        package var secureConnectionEnd: Date?
        /// Writing the request began.
        package var requestStart: Date?
        /// The last request byte was written.
        package var requestEnd: Date?
        /// The first response byte arrived.
        package var responseStart: Date?
        /// The last response byte arrived.
        package var responseEnd: Date?

        /// Creates a set of instants; all `nil` by default.
        package init(
            fetchStart: Date? = nil, domainLookupStart: Date? = nil, domainLookupEnd: Date? = nil,
            connectStart: Date? = nil, connectEnd: Date? = nil, secureConnectionStart: Date? = nil,
            secureConnectionEnd: Date? = nil, requestStart: Date? = nil, requestEnd: Date? = nil,
            responseStart: Date? = nil, responseEnd: Date? = nil
        ) {
            self.fetchStart = fetchStart
            self.domainLookupStart = domainLookupStart
            self.domainLookupEnd = domainLookupEnd
            self.connectStart = connectStart
            self.connectEnd = connectEnd
            self.secureConnectionStart = secureConnectionStart
            self.secureConnectionEnd = secureConnectionEnd
            self.requestStart = requestStart
            self.requestEnd = requestEnd
            self.responseStart = responseStart
            self.responseEnd = responseEnd
        }
    }

    /// Derives the phases from a transaction's instants. A phase is `nil` when either end is
    /// missing or the end precedes the start.
    ///
    /// - Parameters:
    ///   - instants: The transaction's instants.
    ///   - total: The task's whole duration, when known.
    ///   - isReusedConnection: Whether the connection was reused.
    ///   - networkProtocol: The ALPN protocol name.
    ///   - redirectCount: Redirects followed.
    package init(
        instants: Instants, total: Duration? = nil, isReusedConnection: Bool? = nil,
        networkProtocol: String? = nil, redirectCount: Int = 0
    ) {
        func span(_ start: Date?, _ end: Date?) -> Duration? {
            guard let start, let end, end >= start else { return nil }
            return .seconds(end.timeIntervalSince(start))
        }
        self.init(
            domainLookup: span(instants.domainLookupStart, instants.domainLookupEnd),
            connect: span(instants.connectStart, instants.connectEnd),
            secureConnection: span(instants.secureConnectionStart, instants.secureConnectionEnd),
            requestSend: span(instants.requestStart, instants.requestEnd),
            waiting: span(instants.requestEnd, instants.responseStart),
            timeToFirstByte: span(instants.fetchStart, instants.responseStart),
            responseReceive: span(instants.responseStart, instants.responseEnd),
            total: total,
            isReusedConnection: isReusedConnection,
            networkProtocol: networkProtocol,
            redirectCount: redirectCount)
    }
}

/// The ``RequestContext`` slot holding the ``TaskTimings`` of the call's last attempt.
package enum TaskTimingsKey: RequestContextKey {
    /// The stored type.
    package typealias Value = TaskTimings
}

extension RequestContext {
    /// Phase timings of the last attempt, when the transport measured them (Apple platforms);
    /// `nil` when the transport measures none (URLSession on Linux).
    public var taskTimings: TaskTimings? {
        get { self[TaskTimingsKey.self] }
        set { self[TaskTimingsKey.self] = newValue }
    }
}
