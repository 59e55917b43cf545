import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension NetworkError {
    /// The case of a ``NetworkError`` without its payload: a plain value to compare, switch on,
    /// count in analytics or key a message table with.
    ///
    /// ```swift
    /// let error = await #expect(throws: NetworkError.self) { try await client.send(GetItem(id: 9)) }
    /// #expect(error?.kind == .notFound)
    /// ```
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// ``NetworkError/offline(_:)``.
        case offline
        /// ``NetworkError/networkUnavailable(_:)``.
        case networkUnavailable
        /// ``NetworkError/timedOut(_:)``.
        case timedOut
        /// ``NetworkError/cancelled``.
        case cancelled
        /// ``NetworkError/unauthorized(_:)``.
        case unauthorized
        /// ``NetworkError/signedOut``.
        case signedOut
        /// ``NetworkError/sessionExpired``.
        case sessionExpired
        /// ``NetworkError/tokenStoreFailed(_:)``.
        case tokenStoreFailed
        /// ``NetworkError/forbidden(_:)``.
        case forbidden
        /// ``NetworkError/notFound(_:)``.
        case notFound
        /// ``NetworkError/conflict(_:)``.
        case conflict
        /// ``NetworkError/unprocessable(_:)``.
        case unprocessable
        /// ``NetworkError/rateLimited(retryAfter:response:)``.
        case rateLimited
        /// ``NetworkError/server(_:)``.
        case server
        /// ``NetworkError/client(_:)``.
        case client
        /// ``NetworkError/rejected(_:)``.
        case rejected
        /// ``NetworkError/decoding(_:)``.
        case decoding
        /// ``NetworkError/invalidRequest(_:)``.
        case invalidRequest
        /// ``NetworkError/missingInterceptor(_:)``.
        case missingInterceptor
        /// ``NetworkError/transport(_:)``.
        case transport
        /// ``NetworkError/undecodableResponse(_:)``.
        case undecodableResponse
        /// ``NetworkError/notCached``.
        case notCached
        /// ``NetworkError/streamBufferOverflow(limit:)``.
        case streamBufferOverflow
        /// ``NetworkError/responseTooLarge(limit:)``.
        case responseTooLarge
        /// ``NetworkError/redirectRefused(_:)``.
        case redirectRefused
        /// ``NetworkError/backendUnavailable(host:retryAfter:)``.
        case backendUnavailable
    }

    /// This error's case without its payload.
    public var kind: Kind {
        switch self {
        case .offline: return .offline
        case .networkUnavailable: return .networkUnavailable
        case .timedOut: return .timedOut
        case .cancelled: return .cancelled
        case .unauthorized: return .unauthorized
        case .signedOut: return .signedOut
        case .sessionExpired: return .sessionExpired
        case .tokenStoreFailed: return .tokenStoreFailed
        case .forbidden: return .forbidden
        case .notFound: return .notFound
        case .conflict: return .conflict
        case .unprocessable: return .unprocessable
        case .rateLimited: return .rateLimited
        case .server: return .server
        case .client: return .client
        case .rejected: return .rejected
        case .decoding: return .decoding
        case .invalidRequest: return .invalidRequest
        case .missingInterceptor: return .missingInterceptor
        case .transport: return .transport
        case .undecodableResponse: return .undecodableResponse
        case .notCached: return .notCached
        case .streamBufferOverflow: return .streamBufferOverflow
        case .responseTooLarge: return .responseTooLarge
        case .redirectRefused: return .redirectRefused
        case .backendUnavailable: return .backendUnavailable
        }
    }
}

extension NetworkError: Equatable {
    /// Two errors are equal when they are the same case with the same identifying payload: the
    /// response's status, error code and body for HTTP cases (never volatile headers such as `Date`), the `URLError` code for network cases,
    /// the coding path and type for decoding failures, the text for programming errors.
    public static func == (lhs: NetworkError, rhs: NetworkError) -> Bool {
        guard lhs.kind == rhs.kind else { return false }
        switch (lhs, rhs) {
        case (.offline(let a), .offline(let b)), (.transport(let a), .transport(let b)):
            return a.code == b.code
        case (.timedOut(let a), .timedOut(let b)):
            return a?.code == b?.code
        case (.decoding(let a), .decoding(let b)):
            return a.codingPath == b.codingPath && a.typeName == b.typeName && a.kind == b.kind
        case (.undecodableResponse(let a), .undecodableResponse(let b)):
            return a.reason == b.reason && a.underlying.code == b.underlying.code
        case (.invalidRequest(let a), .invalidRequest(let b)), (.missingInterceptor(let a), .missingInterceptor(let b)):
            return a == b
        case (.streamBufferOverflow(let a), .streamBufferOverflow(let b)), (.responseTooLarge(let a), .responseTooLarge(let b)):
            return a == b
        case (.redirectRefused(let a), .redirectRefused(let b)):
            return a == b
        case (.networkUnavailable(let a), .networkUnavailable(let b)):
            return a == b
        case (.backendUnavailable(let a, _), .backendUnavailable(let b, _)):
            return a == b
        case (.tokenStoreFailed(let a), .tokenStoreFailed(let b)):
            return a == b
        default:
            let (a, b) = (lhs.failedResponse, rhs.failedResponse)
            return a?.statusCode == b?.statusCode && a?.code == b?.code && a?.body == b?.body
        }
    }
}

extension NetworkError: LocalizedError {
    /// ``userMessage``, so `error.localizedDescription` shows the same text.
    public var errorDescription: String? { userMessage }
    /// Details for logs (``description``); never shown to users by Courier.
    public var failureReason: String? { description }
}
