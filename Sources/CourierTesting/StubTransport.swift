import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// A `Transport` that answers from a handler or a queue of canned responses and records every
/// request it saw — the primary seam for unit-testing endpoints, interceptors and repositories.
///
/// ```swift
/// let stub = StubTransport { request in .json(#"{"id": 1, "name": "Lamp"}"#) }
/// let client = APIClient(environment: .stub) { $0.transport = stub }
/// _ = try await client.send(GetItem(id: 1))
/// #expect(stub.requests.first?.url?.path == "/items/1")
/// ```
public final class StubTransport: Transport {
    /// Produces the response (or throws the failure) for one request.
    public typealias Handler = @Sendable (URLRequest) async throws -> HTTPResponse

    private struct State: Sendable {
        var requests: [URLRequest] = []
        var queue: [Result<HTTPResponse, URLError>] = []
    }

    private let state: Locked<State>
    private let handler: Handler?

    /// A transport that calls `handler` for every request.
    public init(_ handler: @escaping Handler) {
        self.handler = handler
        self.state = Locked(State())
    }

    /// A transport that answers with `responses` in order; a request beyond the end fails with
    /// `URLError(.resourceUnavailable)` so a test never hangs on an unexpected extra call.
    public init(responses: [Result<HTTPResponse, URLError>]) {
        self.handler = nil
        self.state = Locked(State(queue: responses))
    }

    /// A transport that answers with `responses` in order (all successful).
    public convenience init(responses: [HTTPResponse]) {
        self.init(responses: responses.map { .success($0) })
    }

    /// Every request sent so far, in order.
    public var requests: [URLRequest] { state.withLock { $0.requests } }

    /// Number of requests sent so far.
    public var requestCount: Int { state.withLock { $0.requests.count } }

    /// Adds canned responses to the end of the queue.
    public func enqueue(_ responses: Result<HTTPResponse, URLError>...) {
        state.withLock { $0.queue.append(contentsOf: responses) }
    }

    public func send(_ request: URLRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let next: Result<HTTPResponse, URLError>? = state.withLock { state in
            state.requests.append(request)
            guard handler == nil else { return nil }
            return state.queue.isEmpty ? .failure(URLError(.resourceUnavailable)) : state.queue.removeFirst()
        }
        if let handler { return try await handler(request) }
        switch next {
        case .success(let response)?: return response
        case .failure(let error)?: throw error
        case nil: throw URLError(.resourceUnavailable)
        }
    }
}
