import Foundation

extension LogFormatting {
    /// What a streamed body's end entry is made of.
    struct BodyEnd {
        var statusCode: Int
        var method: HTTPMethod
        var pathTemplate: String
        /// From the head to the end of the body.
        var duration: Duration
        var bytes: Int64
        var outcome: BodyReadOutcome
        var requestID: RequestID
        var url: String
    }

    /// The level of a body-end entry: the status's level when the body was read to its end, the
    /// failure's when it failed (notice for a cancellation), notice when its reader let it go.
    static func level(ofBodyEnd outcome: BodyReadOutcome, statusCode: Int) -> NetworkLogLevel {
        switch outcome {
        case .completed: return level(ofStatus: statusCode)
        case .failed(let error): return level(ofFailure: error)
        case .abandoned: return .notice
        }
    }

    /// The entry written when a streamed body ends, e.g.
    /// `⇤ 200 GET /feed body 2.0 MiB in 1.52 s [3f2a9c1e]`: the bytes its consumer read, and how
    /// the reading ended.
    static func bodyEndEntry(_ end: BodyEnd) -> NetworkLogEntry {
        var summary = "⇤ \(end.statusCode) \(end.method) \(end.pathTemplate) body"
        let size = bytes(Int(clamping: end.bytes))
        switch end.outcome {
        case .completed:
            summary += " \(size) in \(milliseconds(end.duration))"
        case .failed(let error):
            summary += " failed (\(ErrorRecord.kind(of: error))) after \(size) in \(milliseconds(end.duration))"
        case .abandoned:
            summary += " let go by its reader after \(size) in \(milliseconds(end.duration))"
        }
        summary += " [\(shortID(end.requestID))]"
        return NetworkLogEntry(
            level: level(ofBodyEnd: end.outcome, statusCode: end.statusCode), event: .bodyEnd, requestID: end.requestID,
            summary: summary, details: ["\(end.method) \(end.url)"])
    }
}
