import Courier

/// Why an event stream cannot be read further. `APIClient`'s event streams report these inside
/// `NetworkError.decoding(_:)` (as the `DecodingFailure.underlying` error), so a caller still
/// handles one error type; ``ServerSentEventParser`` throws them directly.
public enum ServerSentEventError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One event (its pending line plus its `data` so far) grew beyond `limit` bytes without a
    /// blank line ending it. The rest of the stream is not read: Courier never holds an unbounded
    /// event in memory.
    case eventTooLarge(limit: Int)
    /// The response is not `text/event-stream` (WHATWG HTML §9.2.3: the connection fails, and is
    /// not re-established). `mediaType` is what the server sent, lower-cased, `nil` when it sent no
    /// `Content-Type`. A captive portal's HTML page looks like this.
    case unexpectedContentType(String?)
    /// The response's status is neither 200 (a feed) nor 204 (no more events): WHATWG HTML §9.2.3
    /// fails the connection for any other status, other 2xx included (a 205, 206 or 299 is no
    /// event stream), and does not re-establish it. Reported with
    /// `DecodingFailure.Kind.unexpectedContentType`: the answer is not a feed at all.
    case unexpectedStatus(Int)

    public var description: String {
        switch self {
        case .eventTooLarge(let limit): return "an event exceeded \(limit) bytes"
        case .unexpectedContentType(let type): return "expected text/event-stream, got \(type ?? "no Content-Type")"
        case .unexpectedStatus(let status): return "expected status 200 for an event stream, got \(status)"
        }
    }
}

extension ServerSentEventError: BodyFormatError {
    /// A failure shows the start of what the server sent instead of a feed (a portal's HTML page).
    package var showsBodySnippet: Bool { true }
}
