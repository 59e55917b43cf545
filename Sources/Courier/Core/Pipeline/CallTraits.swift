import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a call is, beyond its method, URL and policy — fixed when its ``RequestContext`` is made,
/// never changed while the pipeline runs. `package`: Courier's own modules set it (the client for a
/// streamed call, CourierGraphQL for a query); the built-in layers only read it.
///
/// This is one of the two ways state reaches the layers of a call besides the request itself (the
/// other is the transport's report of progress and timings, ``TransportReporter``); every other
/// fact travels as an argument or a return value.
package struct CallTraits: Sendable {
    /// The body options of a streamed call (``APIClient/stream(_:options:)``): the pipeline's last
    /// step asks the transport for a streamed response, de-duplication passes the call through and
    /// validators do not read its body. `nil` for a buffered call.
    package var streaming: StreamingOptions?

    /// Whether the call is safe — read-only (RFC 9110 §9.2.1) — by the API's own semantics although
    /// its method is not, such as a GraphQL query sent as `POST`. Safe implies idempotent
    /// (§9.2.2), so ``RetryInterceptor`` repeats it like a `GET`, and ``DeduplicationInterceptor``
    /// shares identical in-flight calls (method, URL, header fields and body bytes equal).
    package var isDeclaredSafe: Bool

    /// A check for responses that reject the access token although their status is not 401 — a
    /// GraphQL `UNAUTHENTICATED` error in a 200. ``AuthInterceptor`` treats a response for which it
    /// returns `true` like a 401: refresh once, send again. `nil`: only 401 counts.
    package var rejectsAccessToken: (@Sendable (HTTPResponse) -> Bool)?

    /// Where the transport reports this call's body bytes (an upload's progress); bound around each
    /// send by the pipeline's last step only, so a token refresh made on the side never reports
    /// into it.
    package var transferProgress: TransferProgressReporter?

    /// A buffered call that is neither declared safe nor checks its responses for token rejection.
    package init(
        streaming: StreamingOptions? = nil, isDeclaredSafe: Bool = false,
        rejectsAccessToken: (@Sendable (HTTPResponse) -> Bool)? = nil,
        transferProgress: TransferProgressReporter? = nil
    ) {
        self.streaming = streaming
        self.isDeclaredSafe = isDeclaredSafe
        self.rejectsAccessToken = rejectsAccessToken
        self.transferProgress = transferProgress
    }
}
