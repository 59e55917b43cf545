import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a request sends as its body. The client encodes it when building the `URLRequest` and sets
/// `Content-Type` unless the endpoint already did.
public enum RequestBody: Sendable {
    /// No body.
    case none
    /// JSON from the client's `JSONEncoder` (or the request's override); `application/json`.
    case json(any Encodable & Sendable)
    /// `application/x-www-form-urlencoded` fields, in order (RFC 1866 / WHATWG URL).
    case form([URLQueryItem])
    /// `application/x-www-form-urlencoded` from an `Encodable`, keys sorted.
    case formEncodable(any Encodable & Sendable)
    /// Raw bytes with the given content type, e.g. `image/jpeg`.
    case data(Data, contentType: String)
    /// Bytes read from a stream with the given content type: a file, a factory that makes a new
    /// stream for every send, or a one-shot stream that is never re-sent (see ``BodyStream``).
    case stream(BodyStream, contentType: String)

    /// Whether the body can be produced again for a retry, a 307/308 redirect or a resend after a
    /// token refresh: ``MessageBody/IterationBehavior-swift.enum/single`` only for a one-shot
    /// ``BodyStream``; every other body is ``MessageBody/IterationBehavior-swift.enum/multiple``.
    public var iterationBehavior: MessageBody.IterationBehavior {
        if case .stream(let stream, _) = self { return stream.iterationBehavior }
        return .multiple
    }

    /// `true` for ``none``.
    public var isEmpty: Bool {
        if case .none = self { return true }
        return false
    }

    /// `.json(value)`, or ``none`` without a value: the body of the calls that take an optional
    /// `Encodable` (`post(_:body:…)`, `put`, `patch`).
    init(jsonOrNone value: (any Encodable & Sendable)?) { self = value.map { .json($0) } ?? .none }
}
