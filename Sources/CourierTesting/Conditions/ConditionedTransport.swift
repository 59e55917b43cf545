import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// A `Transport` that wraps any transport and makes its network worse on purpose — latency,
/// bandwidth each way, a drop after N bytes, offline windows, random failures — so an app can
/// test its loading states, timeouts, retries and resume logic without a special server.
///
/// ```swift
/// let clock = TestClock()
/// let network = ConditionedTransport(
///     wrapping: StubTransport { _ in .json(#"{"id": 1, "name": "Lamp"}"#) },
///     conditions: NetworkConditions(latency: .seconds(2)),
///     clock: clock)
/// let client = APIClient(environment: .stub) { $0.transport = network }
/// _ = try await client.send(GetItem(id: 1))
/// #expect(clock.now.offset == .seconds(2))
/// ```
///
/// Per request, in this order: a request inside an ``NetworkConditions/offlineWindows`` window
/// fails with `URLError(.notConnectedToInternet)`; one drawn under ``NetworkConditions/failureRate``
/// fails with `URLError(.networkConnectionLost)` (neither reaches the wrapped transport); then the
/// request body takes `bytes / uploadBytesPerSecond`, the head ``NetworkConditions/latency``, and
/// the response body `bytes / downloadBytesPerSecond` — chunk by chunk, at most
/// ``chunkSize`` bytes each, for a streamed response — until ``NetworkConditions/dropAfterBytes``,
/// where the body ends with a lost connection. Every wait is a sleep on `clock`: on a
/// ``TestClock`` the timings are exact and the test runs at full speed. A request body sent as a
/// stream takes no upload time (its length is not known up front).
public final class ConditionedTransport<C: Clock>: Transport where C.Duration == Duration {
    /// Largest chunk a conditioned streamed body delivers at once: 16 KiB.
    public static var chunkSize: Int { 16 * 1024 }

    private struct State: Sendable {
        var conditions: NetworkConditions
        var generator: SeededGenerator
    }

    /// The transport that really sends.
    public let base: any Transport
    /// The clock every delay sleeps on and offline windows are measured on.
    public let clock: C
    private let start: C.Instant
    private let state: Locked<State>

    /// Wraps `base`.
    ///
    /// - Parameters:
    ///   - base: The transport that sends (a `StubTransport`, `ReplayTransport` or a real one).
    ///   - conditions: The network to simulate; can be changed later through ``conditions``.
    ///   - clock: The clock delays sleep on; offline windows count from now on it.
    ///   - seed: Seeds the generator behind ``NetworkConditions/failureRate``: the same seed fails
    ///     the same requests.
    public init(wrapping base: any Transport, conditions: NetworkConditions, clock: C, seed: UInt64 = 0) {
        self.base = base
        self.clock = clock
        self.start = clock.now
        self.state = Locked(State(conditions: conditions, generator: SeededGenerator(seed: seed)))
    }

    /// The conditions applied to requests from now on (a request already under way keeps the
    /// ones it started with) — set them to bring the network back, or take it away.
    public var conditions: NetworkConditions {
        get { state.withLock { $0.conditions } }
        set { state.withLock { $0.conditions = newValue } }
    }

    /// Sends `request` under the current conditions, the response body in memory.
    ///
    /// - Throws: `URLError(.notConnectedToInternet)` in an offline window,
    ///   `URLError(.networkConnectionLost)` for a drawn failure or a dropped body, the wrapped
    ///   transport's errors, `CancellationError` when cancelled during a delay.
    public func send(_ request: URLRequest) async throws -> HTTPResponse {
        let conditions = try admit()
        try await beforeHead(request, conditions)
        let response = try await base.send(request)
        let size = response.data.count
        if let drop = conditions.dropAfterBytes, size > drop {
            try await pause(NetworkConditions.transferTime(drop, at: conditions.downloadBytesPerSecond))
            throw URLError(.networkConnectionLost)
        }
        try await pause(NetworkConditions.transferTime(size, at: conditions.downloadBytesPerSecond))
        return response
    }

    /// Sends `request` under the current conditions and returns at the head; the body arrives in
    /// chunks of at most ``chunkSize`` bytes at the download bandwidth and ends with
    /// `transport` (`networkConnectionLost`) at the drop.
    ///
    /// - Throws: As ``send(_:)``, until the head arrived.
    public func stream(_ request: URLRequest, options: StreamingOptions) async throws -> HTTPResponse {
        let conditions = try admit()
        try await beforeHead(request, conditions)
        var response = try await base.stream(request, options: options)
        let clock = self.clock
        let chunks = ConditionedChunks(
            base: response.body, chunkSize: Self.chunkSize, bytesPerSecond: conditions.downloadBytesPerSecond,
            dropAfter: conditions.dropAfterBytes,
            pause: { duration in if duration > .zero { try await clock.sleep(for: duration) } })
        response.body = MessageBody(chunks, length: response.body.length, iterationBehavior: response.body.iterationBehavior)
        return response
    }

    /// The conditions for a new request, or its failure (offline window, drawn failure).
    private func admit() throws -> NetworkConditions {
        try Task.checkCancellation()
        let elapsed = start.duration(to: clock.now)
        return try state.withLock { state in
            let conditions = state.conditions
            if conditions.offlineWindows.contains(where: { $0.contains(elapsed) }) {
                throw URLError(.notConnectedToInternet)
            }
            if conditions.failureRate > 0,
                Double.random(in: 0..<1, using: &state.generator) < min(1, conditions.failureRate)
            {
                throw URLError(.networkConnectionLost)
            }
            return conditions
        }
    }

    private func beforeHead(_ request: URLRequest, _ conditions: NetworkConditions) async throws {
        try await pause(NetworkConditions.transferTime(request.httpBody?.count ?? 0, at: conditions.uploadBytesPerSecond))
        try await pause(conditions.latency)
    }

    private func pause(_ duration: Duration) async throws {
        guard duration > .zero else { return }
        try await clock.sleep(for: duration)
    }
}

extension ConditionedTransport where C == ContinuousClock {
    /// Wraps `base`, delaying on the real clock.
    ///
    /// - Parameters:
    ///   - base: The transport that sends.
    ///   - conditions: The network to simulate.
    ///   - seed: Seeds the generator behind ``NetworkConditions/failureRate``.
    public convenience init(wrapping base: any Transport, conditions: NetworkConditions, seed: UInt64 = 0) {
        self.init(wrapping: base, conditions: conditions, clock: ContinuousClock(), seed: seed)
    }
}
