import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RetryPolicy {
    /// Whether a request may be sent again at all, before looking at how it failed.
    ///
    /// Idempotent methods (GET, HEAD, OPTIONS, TRACE, PUT, DELETE) may be repeated. POST and PATCH
    /// may be repeated only when the request carries an idempotency key and
    /// ``retriesKeyedNonIdempotentRequests`` is on: a client must not automatically retry a
    /// non-idempotent request unless it knows the repetition is safe (RFC 9110 §9.2.2); the key
    /// lets the server recognise the repetition (draft-ietf-httpapi-idempotency-key-header).
    ///
    /// - Parameters:
    ///   - method: The request method.
    ///   - hasIdempotencyKey: Whether the request carries an `Idempotency-Key`.
    package func allowsRetry(method: HTTPMethod, hasIdempotencyKey: Bool) -> Bool {
        method.isIdempotent || (hasIdempotencyKey && retriesKeyedNonIdempotentRequests)
    }

    /// Whether a response with `statusCode` is worth another attempt (``retryableStatusCodes``).
    package func isRetryable(statusCode: Int) -> Bool {
        retryableStatusCodes.contains(statusCode)
    }

    /// Whether a thrown failure is worth another attempt.
    ///
    /// - Returns: `false` for cancellation in any form (`CancellationError`, `URLError.cancelled`,
    ///   ``NetworkError/cancelled``) and for Courier's own deadline (``NetworkError/timedOut(_:)``
    ///   without a `URLError`); `true` for a `URLError` — bare or inside ``NetworkError/offline(_:)``,
    ///   ``NetworkError/timedOut(_:)`` or ``NetworkError/transport(_:)`` — whose code is in
    ///   ``retryableErrorCodes``, and for a ``NetworkError`` carrying a response whose status is in
    ///   ``retryableStatusCodes`` (an inner interceptor's failure, such as a token refresh answered
    ///   with 503), and a ``RetryableError`` (for example a validator's) that says so. Everything
    ///   else is `false`.
    package func isRetryable(_ error: any Error) -> Bool {
        switch error {
        case is CancellationError:
            return false
        case let error as URLError:
            return error.code != .cancelled && retryableErrorCodes.contains(error.code)
        case let error as NetworkError:
            switch error {
            case .offline(let underlying), .transport(let underlying), .timedOut(let underlying?):
                return isRetryable(underlying)
            case .cancelled, .timedOut(nil), .sessionExpired, .signedOut, .tokenStoreFailed, .invalidRequest, .missingInterceptor,
                .decoding, .rejected, .notCached, .streamBufferOverflow, .responseTooLarge, .backendUnavailable:
                return false
            default:
                return error.statusCode.map(isRetryable(statusCode:)) ?? false
            }
        case let error as any RetryableError:
            return error.isRetryable
        default:
            return false
        }
    }
}
