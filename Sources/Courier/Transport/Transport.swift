import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one thing the client needs from the network: send a request, return the whole response.
///
/// ``URLSessionTransport`` is the production conformance; `StubTransport` (module CourierTesting)
/// is the test seam. A transport returns every HTTP status as a value — mapping statuses to errors
/// is the client's job — and throws only when no response was received (`URLError`,
/// `CancellationError`).
public protocol Transport: Sendable {
    /// Sends `request` and returns the complete response.
    ///
    /// - Throws: `URLError` for network failures (`.cancelled` when the task was cancelled),
    ///   `CancellationError` when cancelled before the request left.
    func send(_ request: URLRequest) async throws -> HTTPResponse
}
