import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A parsed `Retry-After` header (RFC 9110 §10.2.3): either a number of seconds or an HTTP-date.
public enum RetryAfter: Sendable, Hashable, CustomStringConvertible {
    /// `Retry-After: 120` — wait this many seconds (non-negative).
    case seconds(Int)
    /// `Retry-After: Fri, 31 Dec 1999 23:59:59 GMT` — wait until this instant.
    case date(Date)

    /// Parses a header value; `nil` when it is neither delta-seconds nor an HTTP-date
    /// (RFC 9110 §5.6.7 formats: IMF-fixdate, RFC 850, asctime).
    public init?(headerValue: String) {
        let trimmed = headerValue.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.allSatisfy(\.isASCII), trimmed.allSatisfy(\.isNumber) {
            // An absurdly long number would overflow Int: clamp rather than fail.
            self = .seconds(Int(trimmed) ?? Int.max)
        } else if let date = HTTPDate.parse(trimmed) {
            self = .date(date)
        } else {
            return nil
        }
    }

    /// Reads the `Retry-After` field of `response`, if present and valid.
    /// With several `Retry-After` field lines (or one joined with commas by the transport), the
    /// longest valid wait wins: the client never retries earlier than any of them asked.
    public init?(response: HTTPResponse) {
        let lines = response.headers.values(for: "Retry-After")
        // Seconds never contain a comma; a joined list of numbers is split, an HTTP-date is not.
        let values = lines.flatMap { line -> [String] in
            let parts = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) } ? parts : [line]
        }
        let parsed = values.compactMap(RetryAfter.init(headerValue:))
        let now = Date()
        guard let longest = parsed.max(by: { ($0.delay(from: now) ?? .zero) < ($1.delay(from: now) ?? .zero) })
        else { return nil }
        self = longest
    }

    /// How long to wait from `now`; `nil` when the date is not in the future (a past date gives no
    /// usable hint, so callers fall back to their own backoff rather than retrying at once).
    ///
    /// - Parameter now: The current wall-clock time; injectable for tests.
    public func delay(from now: Date = Date()) -> Duration? {
        switch self {
        case .seconds(let seconds):
            return .seconds(seconds)
        case .date(let date):
            let interval = date.timeIntervalSince(now)
            guard interval > 0 else { return nil }
            return .milliseconds(Int64((interval * 1000).rounded(.up)))
        }
    }

    public var description: String {
        switch self {
        case .seconds(let s): return "\(s)s"
        case .date(let d): return HTTPDate.string(from: d)
        }
    }
}
