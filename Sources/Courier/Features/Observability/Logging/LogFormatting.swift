import Foundation

/// Turns records into log entries. Summaries carry only Courier's metadata; everything derived
/// from the request or response goes into details.
package enum LogFormatting {
    static func requestEntry(_ record: RequestRecord, includesDetails: Bool) -> NetworkLogEntry {
        var summary = "→ \(record.method) \(record.pathTemplate)"
        if record.attempt > 1 { summary += " attempt \(record.attempt)" }
        summary += " [\(shortID(record.requestID))]"
        var details = ["\(record.method) \(record.url)"]
        if includesDetails {
            details += record.headers.map { "\($0.name): \($0.value)" }
            details += bodyLines(record.body, size: record.bodySize)
        }
        return NetworkLogEntry(level: .debug, event: .request, requestID: record.requestID, summary: summary, details: details)
    }

    /// `summary`: the path template and the URL to show (the response's, or else its request's),
    /// scrubbed of everything learned up to the response (``RecordJournal/summary(at:request:)``);
    /// the request record's, scrubbed of what the request taught, when not given.
    static func responseEntry(
        _ record: ResponseRecord, request: RequestRecord, summary: (url: String, pathTemplate: String)? = nil,
        cacheOutcome: CacheOutcome?, redirects: Int = 0, includesDetails: Bool, streamed: Bool = false,
        transportDuration: Duration? = nil
    ) -> NetworkLogEntry {
        var entry = responseEntry(
            ResponseLine(
                statusCode: record.statusCode, method: request.method,
                pathTemplate: summary?.pathTemplate ?? request.pathTemplate,
                duration: record.duration, bodySize: streamed ? nil : record.bodySize, attempt: record.attempt,
                requestID: record.requestID, url: record.url ?? summary?.url ?? request.url, transportDuration: transportDuration),
            cacheOutcome: cacheOutcome, redirects: redirects)
        if includesDetails {
            entry.details += record.headers.map { "\($0.name): \($0.value)" }
            entry.details += bodyLines(streamed ? nil : record.body, size: streamed ? nil : record.bodySize)
        }
        return entry
    }

    /// What a response's summary line and its URL detail are made of: plain values, the URL
    /// already redacted — so an info line needs no header redaction.
    struct ResponseLine {
        var statusCode: Int
        var method: HTTPMethod
        var pathTemplate: String
        var duration: Duration
        /// The body size; `nil` for a streamed body, whose size comes in its ``bodyEndEntry(_:)``.
        var bodySize: Int?
        var attempt: Int
        var requestID: RequestID
        var url: String
        /// The transport's own measure of the attempt (``TaskTimings/total``), when it has one.
        var transportDuration: Duration? = nil
    }

    /// The response entry without header and body lines.
    static func responseEntry(_ line: ResponseLine, cacheOutcome: CacheOutcome?, redirects: Int) -> NetworkLogEntry {
        var summary = "← \(line.statusCode) \(line.method) \(line.pathTemplate)"
        summary += " \(milliseconds(line.duration))"
        if let transport = line.transportDuration { summary += " " + timingComparison(line.duration, transport) }
        summary += " \(line.bodySize.map(bytes) ?? "streaming")"
        if line.attempt > 1 { summary += " after \(line.attempt - 1) \(line.attempt == 2 ? "retry" : "retries")" }
        if redirects > 0 { summary += " via \(redirects) \(redirects == 1 ? "redirect" : "redirects")" }
        if let cacheOutcome { summary += " cache=\(cacheOutcome)" }
        summary += " [\(shortID(line.requestID))]"
        return NetworkLogEntry(
            level: level(ofStatus: line.statusCode), event: .response, requestID: line.requestID, summary: summary,
            details: ["\(line.method) \(line.url)"])
    }

    static func failureEntry(_ record: ErrorRecord, request: RequestRecord) -> NetworkLogEntry {
        var summary = "✗ \(request.method) \(request.pathTemplate) \(record.kind)"
        if let code = record.code { summary += " (\(code))" }
        summary += " after \(milliseconds(record.duration))"
        if record.attempt > 1 { summary += ", \(record.attempt) attempts" }
        summary += " [\(shortID(record.requestID))]"
        let details = ["\(request.method) \(request.url)", record.message]
        let level: NetworkLogLevel = record.kind == cancelledKind ? .notice : .error
        return NetworkLogEntry(level: level, event: .failure, requestID: record.requestID, summary: summary, details: details)
    }

    /// The level of a response entry: 5xx error, 4xx notice, anything else info.
    static func level(ofStatus statusCode: Int) -> NetworkLogLevel {
        switch statusCode {
        case 500...: return .error
        case 400..<500: return .notice
        default: return .info
        }
    }

    /// The level of a failure entry for `error`, known before any record is built: notice for a
    /// cancellation, error otherwise.
    static func level(ofFailure error: any Error) -> NetworkLogLevel {
        ErrorRecord.kind(of: error) == cancelledKind ? .notice : .error
    }

    private static let cancelledKind = "cancelled"

    private static func bodyLines(_ preview: BodyPreview?, size: Int?) -> [String] {
        if let preview { return ["body: \(preview)"] }
        guard let size else { return ["body: streamed"] }
        return size > 0 ? ["body: \(bytes(size)) (not logged)"] : []
    }

    /// The first 8 hex digits of the request ID — enough to grep for, short enough to read.
    package static func shortID(_ id: RequestID) -> String {
        String(id.description.prefix(8))
    }

    /// `12.4 ms`, `1.52 s`.
    package static func milliseconds(_ duration: Duration) -> String {
        let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        if ms >= 1000 { return fixed(ms / 1000, digits: 2) + " s" }
        return fixed(ms, digits: 1) + " ms"
    }

    /// Courier's measure next to the transport's: `(transport 41.2 ms, +1.3 ms)` — the transport's
    /// total and the time outside it (signed: the clocks differ).
    static func timingComparison(_ courier: Duration, _ transport: Duration) -> String {
        let difference = courier - transport
        let sign = difference < .zero ? "-" : "+"
        return
            "(transport \(milliseconds(transport)), \(sign)\(milliseconds(difference < .zero ? .zero - difference : difference)))"
    }

    /// `512 B`, `1.5 KiB`, `3.2 MiB`.
    package static func bytes(_ count: Int) -> String {
        if count < 1024 { return "\(count) B" }
        if count < 1024 * 1024 { return fixed(Double(count) / 1024, digits: 1) + " KiB" }
        return fixed(Double(count) / (1024 * 1024), digits: 1) + " MiB"
    }

    /// `value` rounded to `digits` (1 or 2) decimals like `%.1f` / `%.2f` — without `String(format:)`,
    /// which costs microseconds per call on Linux. Rounds half away from zero (printf rounds the
    /// binary value, so an exact tie such as 0.25 may print differently — never seen in a duration
    /// measured in attoseconds).
    static func fixed(_ value: Double, digits: Int) -> String {
        guard value.isFinite, value >= 0, value < 1e15 else { return "\(value)" }
        let scale = digits == 2 ? 100.0 : 10.0
        let scaled = Int64((value * scale).rounded())
        let whole = scaled / Int64(scale)
        let fraction = String(scaled % Int64(scale))
        let padded = digits == 2 && fraction.count == 1 ? "0" + fraction : fraction
        return "\(whole).\(padded)"
    }
}
