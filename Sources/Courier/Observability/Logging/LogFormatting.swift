import Foundation

/// Turns records into log entries. Summaries carry only Courier's metadata; everything derived
/// from the request or response goes into details.
enum LogFormatting {
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

    static func responseEntry(
        _ record: ResponseRecord, request: RequestRecord, cacheOutcome: CacheOutcome?, redirects: Int = 0,
        includesDetails: Bool
    ) -> NetworkLogEntry {
        var summary = "← \(record.statusCode) \(request.method) \(request.pathTemplate)"
        summary += " \(milliseconds(record.duration)) \(bytes(record.bodySize))"
        if record.attempt > 1 { summary += " after \(record.attempt - 1) \(record.attempt == 2 ? "retry" : "retries")" }
        if redirects > 0 { summary += " via \(redirects) \(redirects == 1 ? "redirect" : "redirects")" }
        if let cacheOutcome { summary += " cache=\(cacheOutcome)" }
        summary += " [\(shortID(record.requestID))]"
        var details = ["\(request.method) \(record.url ?? request.url)"]
        if includesDetails {
            details += record.headers.map { "\($0.name): \($0.value)" }
            details += bodyLines(record.body, size: record.bodySize)
        }
        let level: NetworkLogLevel
        switch record.statusCode {
        case 500...: level = .error
        case 400..<500: level = .notice
        default: level = .info
        }
        return NetworkLogEntry(level: level, event: .response, requestID: record.requestID, summary: summary, details: details)
    }

    static func failureEntry(_ record: ErrorRecord, request: RequestRecord) -> NetworkLogEntry {
        var summary = "✗ \(request.method) \(request.pathTemplate) \(record.kind)"
        if let code = record.code { summary += " (\(code))" }
        summary += " after \(milliseconds(record.duration))"
        if record.attempt > 1 { summary += ", \(record.attempt) attempts" }
        summary += " [\(shortID(record.requestID))]"
        let details = ["\(request.method) \(request.url)", record.message]
        let level: NetworkLogLevel = record.kind == "cancelled" ? .notice : .error
        return NetworkLogEntry(level: level, event: .failure, requestID: record.requestID, summary: summary, details: details)
    }

    private static func bodyLines(_ preview: BodyPreview?, size: Int?) -> [String] {
        if let preview { return ["body: \(preview)"] }
        guard let size else { return ["body: streamed"] }
        return size > 0 ? ["body: \(bytes(size)) (not logged)"] : []
    }

    /// The first 8 hex digits of the request ID — enough to grep for, short enough to read.
    static func shortID(_ id: RequestID) -> String {
        String(id.description.prefix(8))
    }

    /// `12.4 ms`, `1.52 s`.
    static func milliseconds(_ duration: Duration) -> String {
        let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        if ms >= 1000 { return String(format: "%.2f s", ms / 1000) }
        return String(format: "%.1f ms", ms)
    }

    /// `512 B`, `1.5 KiB`, `3.2 MiB`.
    static func bytes(_ count: Int) -> String {
        if count < 1024 { return "\(count) B" }
        if count < 1024 * 1024 { return String(format: "%.1f KiB", Double(count) / 1024) }
        return String(format: "%.1f MiB", Double(count) / (1024 * 1024))
    }
}
