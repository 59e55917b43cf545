import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Per-call facts that a protocol layered on HTTP knows and the method and status code do not
/// say — set by Courier's own modules (CourierGraphQL) on the context they create, read by the
/// built-in interceptors. `package`: not part of the public API.
extension RequestContext {
    /// Whether the call is safe — read-only (RFC 9110 §9.2.1) — by the API's own semantics although
    /// its method is not, such as a GraphQL query sent as `POST`. Safe implies idempotent
    /// (§9.2.2), so ``RetryInterceptor`` repeats it like a `GET`, and ``DeduplicationInterceptor``
    /// shares identical in-flight calls (method, URL, header fields and body bytes equal).
    /// `false` by default.
    package var isDeclaredSafe: Bool {
        get { self[DeclaredSafeKey.self] ?? false }
        set { self[DeclaredSafeKey.self] = newValue }
    }

    /// A check for responses that reject the access token although their status is not 401 —
    /// a GraphQL `UNAUTHENTICATED` error in a 200. ``AuthInterceptor`` treats a response for which
    /// it returns `true` like a 401: refresh once, send again. `nil` by default (only 401 counts).
    package var rejectsAccessToken: (@Sendable (HTTPResponse) -> Bool)? {
        get { self[AccessTokenRejectionKey.self] }
        set { self[AccessTokenRejectionKey.self] = newValue }
    }
}

extension RequestContext {
    /// The call's streamed request body, attached afresh to every send by the pipeline's last
    /// step; `nil` for in-memory bodies (`URLRequest.httpBody`), which are re-sent as they are.
    package var bodyStream: BodyStream? {
        get { self[BodyStreamKey.self] }
        set { self[BodyStreamKey.self] = newValue }
    }

    /// Whether the request may be sent again — by a retry, a redirect that keeps the body or a
    /// resend after a token refresh: `false` once a one-shot body stream was sent.
    package var canResendBody: Bool {
        guard let stream = bodyStream else { return true }
        return stream.iterationBehavior == .multiple || attempt == 0
    }
}

private enum BodyStreamKey: RequestContextKey {
    typealias Value = BodyStream
}

private enum DeclaredSafeKey: RequestContextKey {
    typealias Value = Bool
}

private enum AccessTokenRejectionKey: RequestContextKey {
    typealias Value = @Sendable (HTTPResponse) -> Bool
}

extension RequestContext {
    /// The body options of a streamed call (``APIClient/stream(_:options:)``); `nil` for a buffered
    /// one. The pipeline's last step then asks the transport for a streamed response.
    package var streaming: StreamingOptions? {
        get { self[StreamingKey.self] }
        set { self[StreamingKey.self] = newValue }
    }
}

private enum StreamingKey: RequestContextKey {
    typealias Value = StreamingOptions
}
