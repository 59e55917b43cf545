import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// A `Transport` that answers from the sample responses endpoints declare
/// (`SampleResponseProviding`) — for SwiftUI previews, UI tests and demos without a server.
///
/// ```swift
/// struct GetLamp: SampleResponseProviding {
///     typealias Response = Item
///     var path: String { "/items/42" }
///     var sampleResponses: [SampleResponse] { [.json(#"{"id": 42, "name": "Lamp"}"#), .status(404, name: "missing")] }
/// }
///
/// let samples = SampleTransport(endpoints: [GetLamp()], behavior: .delayed(.seconds(1)))
/// let client = APIClient(environment: .stub) { $0.transport = samples }
/// let lamp = try await client.send(GetLamp())                     // the sample, after a second
/// samples.setBehavior(.sample(named: "missing"), for: GetLamp())  // now a 404
/// ```
///
/// A request is matched to an endpoint by method and path template (the endpoint's
/// `pathTemplate`, else its path, against the end of the request's path, `{name}`
/// matching any segment). A request no endpoint declares fails with `URLError(.resourceUnavailable)`;
/// a sample name the endpoint lacks, with `URLError(.fileDoesNotExist)`.
public final class SampleTransport<C: Clock>: Transport where C.Duration == Duration {
    private struct Route: Sendable {
        var method: String
        var template: String
        var samples: [SampleResponse]
    }

    private struct State: Sendable {
        var behavior: SampleBehavior
        var overrides: [String: SampleBehavior] = [:]
        var requests: [URLRequest] = []
    }

    private let routes: [Route]
    private let state: Locked<State>
    /// The clock delays sleep on.
    public let clock: C

    /// A transport answering for `endpoints` (values whose type declares samples; only method,
    /// path template and samples are used).
    ///
    /// - Parameters:
    ///   - endpoints: The endpoints to answer for.
    ///   - behavior: How every endpoint answers unless ``setBehavior(_:for:)`` says otherwise.
    ///   - clock: The clock delays sleep on (a `TestClock` in tests).
    public init(endpoints: [any SampleResponseProviding], behavior: SampleBehavior = .immediate, clock: C) {
        self.routes = endpoints.map {
            Route(method: $0.method.rawValue.uppercased(), template: $0.pathTemplate ?? $0.path, samples: $0.sampleResponses)
        }
        self.state = Locked(State(behavior: behavior))
        self.clock = clock
    }

    /// How endpoints without their own behaviour answer from now on.
    public var behavior: SampleBehavior {
        get { state.withLock { $0.behavior } }
        set { state.withLock { $0.behavior = newValue } }
    }

    /// Makes `endpoint`'s method and path template answer with `behavior` from now on.
    public func setBehavior(_ behavior: SampleBehavior, for endpoint: some Endpoint) {
        let key = Self.key(endpoint.method.rawValue.uppercased(), endpoint.pathTemplate ?? endpoint.path)
        state.withLock { $0.overrides[key] = behavior }
    }

    /// Every request sent so far, in order.
    public var requests: [URLRequest] { state.withLock { $0.requests } }

    /// Answers `request` with its endpoint's sample under the behaviour in force.
    ///
    /// - Throws: The behaviour's failure; `URLError(.resourceUnavailable)` for a request no
    ///   endpoint declares; `URLError(.fileDoesNotExist)` for a missing sample name;
    ///   `CancellationError` when cancelled during the delay.
    public func send(_ request: URLRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let method = (request.httpMethod ?? "GET").uppercased()
        let path =
            request.url.map { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? $0.path } ?? "/"
        // The most specific route that fits (`/items/featured` before `/items/{id}`), the first
        // listed among equals.
        let fitting = routes.filter { $0.method == method && ReplayMatcher.path(path, fits: $0.template) }
        let best = fitting.map { ReplayMatcher.specificity(ofTemplate: $0.template) }.max { $0.lexicographicallyPrecedes($1) }
        let route = fitting.first { ReplayMatcher.specificity(ofTemplate: $0.template) == best }
        let behavior = state.withLock { state -> SampleBehavior in
            state.requests.append(request)
            return route.flatMap { state.overrides[Self.key($0.method, $0.template)] } ?? state.behavior
        }
        if behavior.delay > .zero { try await clock.sleep(for: behavior.delay) }
        if let failure = behavior.failure { throw failure }
        guard let route else { throw URLError(.resourceUnavailable) }
        let sample = behavior.sampleName.map { name in route.samples.first { $0.name == name } } ?? route.samples.first
        guard let sample else { throw URLError(.fileDoesNotExist) }
        return HTTPResponse(statusCode: sample.statusCode, headers: sample.headers, body: sample.body, url: request.url)
    }

    private static func key(_ method: String, _ template: String) -> String { method + " " + template }
}

extension SampleTransport where C == ContinuousClock {
    /// A transport answering for `endpoints`, delaying on the real clock (previews, demos).
    ///
    /// - Parameters:
    ///   - endpoints: The endpoints to answer for.
    ///   - behavior: How every endpoint answers unless ``setBehavior(_:for:)`` says otherwise.
    public convenience init(endpoints: [any SampleResponseProviding], behavior: SampleBehavior = .immediate) {
        self.init(endpoints: endpoints, behavior: behavior, clock: ContinuousClock())
    }
}
