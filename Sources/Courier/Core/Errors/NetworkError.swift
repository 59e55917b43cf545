import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every way a Courier call can fail, one case per thing the UI does next.
///
/// | case | what the UI typically does |
/// |---|---|
/// | ``offline(_:)`` | show "you are offline", offer retry when connectivity returns |
/// | ``networkUnavailable(_:)`` | the endpoint's ``NetworkAccess`` refused this network: wait for Wi-Fi, or ask |
/// | ``timedOut(_:)`` | "this is taking too long", offer retry |
/// | ``cancelled`` | nothing — the user or the system walked away; never show as a failure |
/// | ``unauthorized(_:)`` | refresh or ask to sign in |
/// | ``signedOut`` | the endpoint needs a signed-in user and nobody is: route to sign-in |
/// | ``sessionExpired`` | the refresh token is gone: route to sign-in |
/// | ``tokenStoreFailed(_:)`` | the stored tokens cannot be read now (a locked Keychain): try again later; corrupted: route to sign-in |
/// | ``forbidden(_:)`` | "you don't have access" |
/// | ``notFound(_:)`` | empty/removed state |
/// | ``conflict(_:)`` | reload and let the user resolve |
/// | ``unprocessable(_:)`` | show the server's field messages next to the fields |
/// | ``rateLimited(retryAfter:response:)`` | back off; tell the user when to try again |
/// | ``server(_:)`` | "something went wrong on our side" |
/// | ``client(_:)`` | a bug or an unsupported request: report it |
/// | ``rejected(_:)`` | the server said no inside a 2xx body (error envelope): show its message |
/// | ``decoding(_:)`` | a contract mismatch: report it, show a generic error |
/// | ``invalidRequest(_:)`` | a programming error building the request |
/// | ``missingInterceptor(_:)`` | a programming error: the client's pipeline cannot keep the endpoint's policy |
/// | ``transport(_:)`` | other network failure (TLS, connection reset, truncated body) |
/// | ``undecodableResponse(_:)`` | the body's content or transfer coding cannot be undone: report it, show a generic error |
/// | ``notCached`` | `onlyIfCached` found nothing stored: show the "not available offline" state |
/// | ``streamBufferOverflow(limit:)`` | a streamed body's reader fell behind a transport that cannot pause: read faster, raise the limit, or use a transport that pauses |
/// | ``responseTooLarge(limit:)`` | the server sent more than a buffered call holds: report it, or stream the body |
/// | ``redirectRefused(_:)`` | the app's redirect rule refused a hop: report it |
/// | ``backendUnavailable(host:retryAfter:)`` | "our servers are having trouble"; nothing was sent |
///
/// Each case keeps what is needed for logs: the response summary, the `URLError` or the
/// underlying decoding error. Compare errors by ``kind`` (`error.kind == .notFound`) or with `==`.
/// ``userMessage`` (also `localizedDescription`) is English by default; an app replaces the
/// messages with ``messages``.
public enum NetworkError: Error, Sendable, CustomStringConvertible {
    /// No network path: `URLError.notConnectedToInternet`, `.dataNotAllowed`, `.internationalRoamingOff`.
    case offline(URLError)
    /// The endpoint's ``EndpointPolicy/networkAccess`` forbids the network in use (expensive,
    /// constrained): refused before sending by the client's ``NetworkPathMonitoring``, or by the
    /// system on Apple platforms (`URLError.notConnectedToInternet` with that
    /// `networkUnavailableReason`). Nothing reached a server.
    case networkUnavailable(NetworkUnavailableReason)
    /// The call's total deadline (``EndpointPolicy/deadline``) passed, or the transport reported
    /// `URLError.timedOut` (idle timeout). The `URLError` is `nil` for Courier's own deadline.
    case timedOut(URLError?)
    /// The calling task was cancelled (`CancellationError` or `URLError.cancelled`). Not a failure.
    case cancelled
    /// 401 (RFC 9110 §15.5.2), after any token refresh the pipeline attempted.
    case unauthorized(FailedResponse)
    /// The endpoint requires a signed-in user (``AuthRequirement/required``) and nobody is signed
    /// in: no token is stored (the call failed locally and nothing was sent), or the user signed
    /// out or switched accounts while a transfer of several requests ran (a tus upload, a queued
    /// upload of `UploadManager`): what was in flight may have reached the server, nothing more
    /// was sent.
    case signedOut
    /// The refresh token was rejected (`invalid_grant`): the user must sign in again.
    case sessionExpired
    /// The stored tokens could not be read or written (``TokenStoreError``); nothing was sent.
    /// ``TokenStoreError/corrupted(_:)`` needs a new sign-in (``TokenManager/signIn(_:)`` replaces
    /// what is stored). A Keychain that cannot be read yet (before the first unlock after a
    /// restart) or a failing file system may pass: try again later rather than signing the user
    /// out. Not retried by the call.
    case tokenStoreFailed(TokenStoreError)
    /// 403 (RFC 9110 §15.5.4).
    case forbidden(FailedResponse)
    /// 404 or 410 (RFC 9110 §15.5.5, §15.5.11).
    case notFound(FailedResponse)
    /// 409 (RFC 9110 §15.5.10).
    case conflict(FailedResponse)
    /// 422 (RFC 9110 §15.5.21) with the server's validation messages.
    case unprocessable(ValidationProblem)
    /// 429 (RFC 6585 §4), with the parsed `Retry-After` when the server sent one (also on the
    /// response as ``FailedResponse/retryAfter``).
    case rateLimited(retryAfter: RetryAfter?, response: FailedResponse)
    /// 5xx, or any other status outside the accepted set that is not a 4xx.
    case server(FailedResponse)
    /// Any other 4xx.
    case client(FailedResponse)
    /// A 2xx response whose body is an application error envelope (see ``ErrorEnvelopeValidator``).
    case rejected(APIProblem)
    /// The body could not be decoded into the response type.
    case decoding(DecodingFailure)
    /// The request could not be built (bad URL, unencodable body or query, a path placeholder
    /// without a value, a URL or header fields over the transports' 64 KiB limits). Nothing was
    /// sent. A programming error.
    case invalidRequest(String)
    /// The endpoint's policy needs an interceptor the client's pipeline does not have (auth
    /// required without an ``AuthInterceptor``, an idempotency key without the
    /// ``IdempotencyInterceptor``, `onlyIfCached` without a cache). The call failed locally and
    /// nothing was sent; the text names what is missing. A programming error.
    case missingInterceptor(String)
    /// Any other transport failure: cannot connect, connection lost, TLS, truncated body.
    case transport(URLError)
    /// The response's `Content-Encoding` is unknown to the transport or does not decode, or its
    /// chunked framing is malformed (see ``ResponseCodingFailure``). Not retried: the server
    /// would send the same bytes.
    case undecodableResponse(ResponseCodingFailure)
    /// The endpoint's cache policy is ``CachePolicy/onlyIfCached`` and the HTTP cache holds no
    /// usable response, so the network was not contacted (RFC 9111 §5.2.1.7 describes the same
    /// situation as a 504 from the cache; Courier reports it as its own case so the UI can show an
    /// offline/empty state instead of a server error).
    case notCached
    /// The consumer of a streamed body fell more than `limit` bytes behind the network on a
    /// transport that cannot pause the transfer (URLSession on Linux), so the transfer was
    /// cancelled rather than buffered without bound (see ``StreamingOptions/bufferLimit``).
    /// Read faster, raise the limit, or use a transport that pauses (CourierCurl on Linux).
    case streamBufferOverflow(limit: Int)
    /// A buffered call's response body grew past `limit` bytes (counted after content decoding,
    /// so a small compressed body that inflates past it — a compression bomb — counts by what it
    /// inflates to), and the transfer was stopped there rather than held in memory
    /// (``APIClient/Configuration/maximumResponseBodySize``). Not retried. Stream a large body
    /// (``APIClient/stream(_:options:)``) or download it to a file instead.
    case responseTooLarge(limit: Int)
    /// The call's ``RedirectMode/decide(_:)`` answered ``RedirectDecision/fail(reason:)`` for a
    /// redirect: nothing was sent to its target. Not retried.
    case redirectRefused(RedirectRefusal)
    /// Nothing was sent: the host is failing (its ``CircuitBreaker`` is open) or its server asked
    /// every call to wait (`Retry-After` on a 429 or 503) longer than this call may — or the call
    /// needs a token refresh while the ``TokenManager`` holds refreshes back after the token
    /// endpoint failed transiently (`host` is then the token endpoint's). `retryAfter` is the rest
    /// of the wait (zero while a probe decides). The UI shows "our servers are having trouble";
    /// `CourierOffline` maps it to `ConnectivityStatus.backendUnavailable`.
    case backendUnavailable(host: String, retryAfter: Duration)

    /// The HTTP status behind the error, when there was a response.
    public var statusCode: Int? { failedResponse?.statusCode }

    /// The response summary for HTTP-status cases.
    public var failedResponse: FailedResponse? {
        switch self {
        case .unauthorized(let r), .forbidden(let r), .notFound(let r), .conflict(let r),
            .server(let r), .client(let r), .rateLimited(_, let r):
            return r
        case .unprocessable(let problem): return problem.response
        case .rejected(let problem): return problem.response
        default: return nil
        }
    }

    /// `true` only for ``cancelled``: lets UI code skip error presentation in one check.
    public var isCancellation: Bool {
        if case .cancelled = self { return true }
        return false
    }

    /// The wait before trying again: the server's (RFC 9110 §10.2.3), from a 429 or a 503 (or any
    /// response that carried `Retry-After`), or for ``backendUnavailable(host:retryAfter:)`` how
    /// long calls to the host are held back, in whole seconds rounded up; `nil` otherwise.
    public var retryAfter: RetryAfter? {
        if case .rateLimited(let retryAfter?, _) = self { return retryAfter }
        if case .backendUnavailable(_, let wait) = self {
            let (seconds, attoseconds) = max(.zero, wait).components
            return .seconds(Int(clamping: seconds) + (attoseconds > 0 ? 1 : 0))
        }
        return failedResponse?.retryAfter
    }

    /// A short message suitable for an alert: the endpoint's known-error message for this status,
    /// else the app's message for this error when ``messages`` gives one, else the server's
    /// message (the error envelope's for ``rejected(_:)``; a 4xx's, never that of another status),
    /// else an English sentence per case (``ErrorMessages/english``).
    public var userMessage: String {
        if let known = failedResponse?.knownMessage { return known }
        if let message = Self.messages.message(for: self) { return message }
        // What the app's envelope validator found in a 2xx body is the server's answer to the user.
        if case .rejected(let problem) = self, !problem.message.isEmpty { return problem.message }
        // The server's own text speaks of the request (a field, a limit) in a 4xx; in a 5xx (and
        // the 3xx or 6xx-and-above statuses mapped to `server`) it is about the server's insides
        // ("upstream connect error", a stack trace).
        if let response = failedResponse, (400..<500).contains(response.statusCode), let message = response.message {
            return message
        }
        return ErrorMessages.english.message(for: self) ?? "A network error occurred."
    }

    public var description: String {
        switch self {
        case .offline(let e): return "offline (URLError \(e.code.rawValue))"
        case .networkUnavailable(let reason): return "network unavailable: \(reason.rawValue) network not allowed (nothing sent)"
        case .timedOut(let e): return e.map { "timed out (URLError \($0.code.rawValue))" } ?? "timed out (deadline)"
        case .cancelled: return "cancelled"
        case .unauthorized(let r): return "unauthorized: \(r)"
        case .signedOut: return "signed out (no access token stored, or the user signed out during the call)"
        case .sessionExpired: return "session expired"
        case .tokenStoreFailed(let error): return "token store failed: \(error)"
        case .forbidden(let r): return "forbidden: \(r)"
        case .notFound(let r): return "not found: \(r)"
        case .conflict(let r): return "conflict: \(r)"
        case .unprocessable(let p): return "unprocessable: \(p)"
        case .rateLimited(let after, let r):
            return "rate limited (Retry-After: \(after.map(\.description) ?? "none")): \(r)"
        case .server(let r): return "server error: \(r)"
        case .client(let r): return "client error: \(r)"
        case .rejected(let p): return "rejected: \(p)"
        case .decoding(let f): return "decoding failed: \(f)"
        case .invalidRequest(let reason): return "invalid request: \(reason)"
        case .missingInterceptor(let reason): return "missing interceptor: \(reason)"
        case .transport(let e): return "transport error (URLError \(e.code.rawValue)): \(e.localizedDescription)"
        case .undecodableResponse(let failure): return "undecodable response: \(failure)"
        case .notCached: return "not cached (only-if-cached miss)"
        case .streamBufferOverflow(let limit): return "stream buffer overflow (consumer more than \(limit) bytes behind)"
        case .responseTooLarge(let limit): return "response body larger than \(limit) bytes (buffered call)"
        case .redirectRefused(let refusal): return "redirect refused: \(refusal)"
        case .backendUnavailable(let host, let wait):
            return "backend unavailable (\(host), retry after \(LogFormatting.milliseconds(wait))); nothing sent"
        }
    }
}

extension NetworkError: CustomReflectable {
    /// What `dump(_:)` and `Mirror(reflecting:)` show: the kind and the redacted ``description``,
    /// then the ``FailedResponse`` (redacted in its own mirror) — never the URL a `URLError` keeps
    /// in its `userInfo`, with the query and user info it was sent with.
    public var customMirror: Mirror {
        var children: [(label: String?, value: Any)] = [("kind", kind), ("description", description)]
        if let failedResponse { children.append(("response", failedResponse)) }
        return Mirror(self, children: children, displayStyle: .enum)
    }
}
