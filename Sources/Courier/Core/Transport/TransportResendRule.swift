import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Whether a transport may send a request again on its own, below Courier's retry step.
///
/// libcurl (under `CurlTransport`, and under URLSession on Linux) reconnects and sends a request
/// again when a reused, kept-alive connection dies after the request went out and before any
/// response byte arrived. The server may already have processed it, so that resend is allowed
/// only for a request a client may repeat: an idempotent method (RFC 9110 §9.2.2: GET, HEAD,
/// OPTIONS, TRACE, PUT, DELETE) or one that carries an `Idempotency-Key` field. Every other
/// request is sent at most once by the transport; a lost connection surfaces as
/// `URLError(.networkConnectionLost)` and Courier's retry rules decide.
package enum TransportResendRule {
    /// The field that makes a non-idempotent request safe to repeat (the idempotency interceptor's default name).
    package static let idempotencyKeyField = "Idempotency-Key"

    /// `true` when a transport may repeat `request` by itself (with the whole body).
    package static func allowsResend(_ request: URLRequest) -> Bool {
        if HTTPMethod(rawValue: request.httpMethod ?? "GET").isIdempotent { return true }
        return hasKey(request, field: idempotencyKeyField)
    }

    /// Whether `request` carries a usable key in `field`: present and not blank. An empty
    /// `Idempotency-Key` (or one of only spaces and tabs) lets the server tell no two requests
    /// apart, so it makes nothing safe to repeat.
    package static func hasKey(_ request: URLRequest, field: String = idempotencyKeyField) -> Bool {
        guard let value = request.value(forHTTPHeaderField: field) else { return false }
        return value.utf8.contains { $0 != 0x20 && $0 != 0x09 }
    }
}
