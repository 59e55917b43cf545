import Courier
import Foundation

/// Writes a ``WebSocketClient``'s log entries and metrics events: the handshake as a `request`
/// entry, its outcome as a `response` (101) or `failure` entry, the end of an open connection as
/// a `connectionClosed` entry; one `WebSocketMetricsEvent` per attempt. URLs, header fields,
/// error texts and close reasons pass through the configuration's `Redactor` first. With no
/// logger and no sink it builds nothing.
struct ConnectionReporter: Sendable {
    let logger: (any NetworkLogger)?
    let sinks: [any NetworkMetricsSink]
    let redactor: Redactor
    /// `wss://host:port/path`: the URL without user info, query or fragment.
    let endpoint: String
    /// The URL's path, for summaries.
    let path: String

    init(configuration: WebSocketClient.Configuration) {
        logger = configuration.logger
        sinks = configuration.metrics
        redactor = configuration.redactor
        endpoint = Self.endpoint(of: configuration.url)
        let path = configuration.url.path
        self.path = path.isEmpty ? "/" : path
    }

    static func endpoint(of url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "" }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? ""
    }

    /// Whether entries of `level` are built at all.
    private func logs(_ level: NetworkLogLevel) -> Bool {
        guard let logger else { return false }
        return level >= logger.minimumLevel
    }

    /// A meter for a new attempt; logs the handshake request at debug level.
    func startAttempt(_ request: WebSocketRequest, started: Duration, isReconnect: Bool) -> ConnectionMeter {
        let handshake = logger.map { _ in
            redactor.redactHandshake(
                url: request.url, headers: HTTPHeaders(request.headers.map { HTTPHeaders.Field(name: $0.name, value: $0.value) }),
                subprotocols: request.subprotocols)
        }
        let meter = ConnectionMeter(started: started, isReconnect: isReconnect, handshake: handshake)
        if logs(.debug), let handshake {
            var summary = "→ WS \(summaryPath(meter))"
            if isReconnect { summary += " reconnect" }
            summary += " [\(LogFormatting.shortID(meter.id))]"
            let details = ["GET \(handshake.url)"] + handshake.headers.map { "\($0.name): \($0.value)" }
            logger?.log(NetworkLogEntry(level: .debug, event: .request, requestID: meter.id, summary: summary, details: details))
        }
        return meter
    }

    /// The handshake succeeded after `duration`.
    func opened(_ meter: ConnectionMeter, after duration: Duration, subprotocol: String?, extensions: [String]) {
        guard logs(.info), let handshake = meter.handshake else { return }
        let summary =
            "← 101 WS \(summaryPath(meter)) \(LogFormatting.milliseconds(duration)) [\(LogFormatting.shortID(meter.id))]"
        var details = ["GET \(handshake.url)"]
        if let subprotocol { details.append("Sec-WebSocket-Protocol: \(handshake.scrub(subprotocol))") }
        details += extensions.map { "Sec-WebSocket-Extensions: \($0)" }
        logger?.log(NetworkLogEntry(level: .info, event: .response, requestID: meter.id, summary: summary, details: details))
    }

    /// The handshake failed with `error` after `duration`.
    func handshakeFailed(_ meter: ConnectionMeter, error: WebSocketError, after duration: Duration) {
        let status: Int? =
            switch error {
            case .handshakeRejected(let status), .handshakeRedirected(let status, _): status
            default: nil
            }
        if logs(.error), let handshake = meter.handshake {
            var summary = "✗ WS \(summaryPath(meter)) \(error.kind)"
            if let status { summary += " (\(status))" }
            summary += " after \(LogFormatting.milliseconds(duration)) [\(LogFormatting.shortID(meter.id))]"
            let details = ["GET \(handshake.url)", redactedDescription(of: error, handshake: handshake)]
            logger?.log(NetworkLogEntry(level: .error, event: .failure, requestID: meter.id, summary: summary, details: details))
        }
        guard !sinks.isEmpty else { return }
        let event = WebSocketMetricsEvent(
            connectionID: meter.id, endpoint: endpoint, isReconnect: meter.isReconnect, startedAt: meter.startedAt,
            handshakeDuration: duration, handshakeFailure: error.kind, handshakeStatus: status)
        for sink in sinks { sink.record(event) }
    }

    /// The open connection ended with `code` and `reason` after being open for `openDuration`.
    func closed(
        _ meter: ConnectionMeter, code: WebSocketCloseCode, reason: String, handshakeDuration: Duration,
        openDuration: Duration, wire: WireTraffic?
    ) {
        let traffic = meter.current
        let level: NetworkLogLevel =
            switch code {
            case .normalClosure, .goingAway: .info
            case .abnormalClosure: .error
            default: .notice
            }
        if logs(level), let handshake = meter.handshake {
            let summary =
                "⇵ WS \(summaryPath(meter)) closed \(code) after \(LogFormatting.milliseconds(openDuration)),"
                + " sent \(traffic.messagesSent) \(traffic.messagesSent == 1 ? "message" : "messages")"
                + " \(LogFormatting.bytes(traffic.bytesSent)),"
                + " received \(traffic.messagesReceived) \(traffic.messagesReceived == 1 ? "message" : "messages")"
                + " \(LogFormatting.bytes(traffic.bytesReceived)) [\(LogFormatting.shortID(meter.id))]"
            var details = ["GET \(handshake.url)"]
            if !reason.isEmpty { details.append("reason: \(handshake.scrub(reason))") }
            logger?.log(
                NetworkLogEntry(level: level, event: .connectionClosed, requestID: meter.id, summary: summary, details: details))
        }
        guard !sinks.isEmpty else { return }
        let event = WebSocketMetricsEvent(
            connectionID: meter.id, endpoint: endpoint, isReconnect: meter.isReconnect, startedAt: meter.startedAt,
            handshakeDuration: handshakeDuration, openDuration: openDuration, messagesSent: traffic.messagesSent,
            bytesSent: traffic.bytesSent, messagesReceived: traffic.messagesReceived, bytesReceived: traffic.bytesReceived,
            wireBytesSent: wire?.sent, wireBytesReceived: wire?.received,
            closeCode: Int(code.rawValue), pingsSent: traffic.pingsSent, pongsReceived: traffic.pongsReceived,
            lastRoundTripTime: traffic.lastRoundTripTime)
        for sink in sinks { sink.record(event) }
    }

    /// The path, scrubbed of the handshake's secrets (a token in a path segment that also appears
    /// in the query or a header).
    private func summaryPath(_ meter: ConnectionMeter) -> String {
        meter.handshake?.scrub(path) ?? path
    }

    /// The error's text with every URL in it redacted and every learned secret scrubbed.
    private func redactedDescription(of error: WebSocketError, handshake: RedactedHandshake) -> String {
        switch error {
        case .invalidURL:
            return "not a ws:// or wss:// URL: \(handshake.url)"
        case .handshakeRedirected(let status, let location):
            let redacted = location.map { URL(string: $0).map(redactor.redact(url:)) ?? redactor.marker }
            return handshake.scrub(WebSocketError.handshakeRedirected(status: status, location: redacted).description)
        default:
            return handshake.scrub(error.description)
        }
    }
}

extension WebSocketError {
    /// The case's name, a low-cardinality label for logs and metrics (`handshakeRejected`,
    /// `connectionFailed`…).
    var kind: String {
        switch self {
        case .invalidURL: "invalidURL"
        case .connectionFailed: "connectionFailed"
        case .handshakeRejected: "handshakeRejected"
        case .handshakeRedirected: "handshakeRedirected"
        case .invalidHandshake: "invalidHandshake"
        case .negotiationFailed: "negotiationFailed"
        case .protocolError: "protocolError"
        case .invalidUTF8: "invalidUTF8"
        case .messageTooBig: "messageTooBig"
        case .pongTimeout: "pongTimeout"
        case .writeTimeout: "writeTimeout"
        case .notConnected: "notConnected"
        case .closed: "closed"
        case .unsupported: "unsupported"
        }
    }
}
