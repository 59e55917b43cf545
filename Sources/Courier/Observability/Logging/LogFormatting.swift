import Foundation

/// Turns snapshots into log entries. Summaries carry only Courier's metadata; everything derived
/// from the request or response goes into details.
enum LogFormatting {
    static func requestEntry(_ snapshot: RequestSnapshot, includesDetails: Bool) -> NetworkLogEntry {
        var summary = "→ \(snapshot.method) \(snapshot.pathTemplate)"
        if snapshot.attempt > 1 { summary += " attempt \(snapshot.attempt)" }
        summary += " [\(shortID(snapshot.requestID))]"
        var details = ["\(snapshot.method) \(snapshot.url)"]
        if includesDetails {
            details += snapshot.headers.map { "\($0.name): \($0.value)" }
            details += bodyLines(snapshot.body, size: snapshot.bodySize)
        }
        return NetworkLogEntry(level: .debug, event: .request, requestID: snapshot.requestID, summary: summary, details: details)
    }

    static func responseEntry(
        _ snapshot: ResponseSnapshot, request: RequestSnapshot, cacheOutcome: CacheOutcome?, includesDetails: Bool
    ) -> NetworkLogEntry {
        var summary = "← \(snapshot.statusCode) \(request.method) \(request.pathTemplate)"
        summary += " \(milliseconds(snapshot.duration)) \(bytes(snapshot.bodySize))"
        if snapshot.attempt > 1 { summary += " after \(snapshot.attempt - 1) \(snapshot.attempt == 2 ? "retry" : "retries")" }
        if let cacheOutcome { summary += " cache=\(cacheOutcome)" }
        summary += " [\(shortID(snapshot.requestID))]"
        var details = ["\(request.method) \(snapshot.url ?? request.url)"]
        if includesDetails {
            details += snapshot.headers.map { "\($0.name): \($0.value)" }
            details += bodyLines(snapshot.body, size: snapshot.bodySize)
        }
        let level: NetworkLogLevel
        switch snapshot.statusCode {
        case 500...: level = .error
        case 400..<500: level = .notice
        default: level = .info
        }
        return NetworkLogEntry(level: level, event: .response, requestID: snapshot.requestID, summary: summary, details: details)
    }

    static func failureEntry(_ snapshot: ErrorSnapshot, request: RequestSnapshot) -> NetworkLogEntry {
        var summary = "✗ \(request.method) \(request.pathTemplate) \(snapshot.kind)"
        if let code = snapshot.code { summary += " (\(code))" }
        summary += " after \(milliseconds(snapshot.duration))"
        if snapshot.attempt > 1 { summary += ", \(snapshot.attempt) attempts" }
        summary += " [\(shortID(snapshot.requestID))]"
        let details = ["\(request.method) \(request.url)", snapshot.message]
        let level: NetworkLogLevel = snapshot.kind == "cancelled" ? .notice : .error
        return NetworkLogEntry(level: level, event: .failure, requestID: snapshot.requestID, summary: summary, details: details)
    }

    private static func bodyLines(_ preview: BodyPreview?, size: Int?) -> [String] {
        if let preview { return ["body: \(preview)"] }
        guard let size else { return ["body: streamed"] }
        return size > 0 ? ["body: \(bytes(size)) (not logged)"] : []
    }

    /// The first 8 hex digits of the request ID — enough to grep for, short enough to read.
    static func shortID(_ id: UUID) -> String {
        String(id.uuidString.lowercased().prefix(8))
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
