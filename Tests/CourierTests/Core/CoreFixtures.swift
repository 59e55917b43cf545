import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// The core unit tests, grouped by area in extensions (`CoreTests.URLBuilding`, …).
enum CoreTests {}

/// Shared values and helpers for the core unit tests.
enum CoreFixture {
    /// A base URL with a path prefix, so every test also checks that the prefix is kept.
    static let baseURL = URL(string: "https://api.example.test/v1")!
    static let environment = APIEnvironment(name: "unit", baseURL: baseURL)

    struct Item: Codable, Equatable, Sendable {
        var id: Int
        var name: String
    }

    struct ItemList: Codable, Equatable, Sendable {
        var items: [Item]
    }

    /// A client on `transport` with a request-ID interceptor and retries turned off (so each test sees
    /// exactly one attempt's mapping), adjusted by `configure`.
    static func client(
        _ transport: StubTransport,
        environment: APIEnvironment = environment,
        configure: (inout APIClient.Configuration) -> Void = { _ in }
    ) -> APIClient {
        APIClient(environment: environment) { configuration in
            configuration.transport = transport
            configuration.interceptors = [RequestIDInterceptor(), RetryInterceptor(maximumRetries: 0)]
            configure(&configuration)
        }
    }

    /// The request URL as a string, or "" (so a missing URL fails the comparison, not the test run).
    static func urlString(_ request: URLRequest?) -> String { request?.url?.absoluteString ?? "" }

    /// Runs `operation` and returns the `NetworkError` it threw; fails the test when it returned or
    /// threw something else.
    static func networkError<T>(
        sourceLocation: SourceLocation = #_sourceLocation,
        _ operation: () async throws -> T
    ) async -> NetworkError? {
        do {
            let value = try await operation()
            Issue.record("expected a NetworkError, got \(value)", sourceLocation: sourceLocation)
            return nil
        } catch let error as NetworkError {
            return error
        } catch {
            Issue.record("expected a NetworkError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// Suspends until the current task is cancelled, without a timer, then throws `error`.
    static func suspendUntilCancelled(thenThrow error: any Error = CancellationError()) async throws -> HTTPResponse {
        let (stream, _) = AsyncStream<Void>.makeStream()
        for await _ in stream {}  // ends only when the task is cancelled
        throw error
    }
}

/// A `Clock` whose time only moves when a test calls ``advance(by:)``: deadlines are tested without
/// waiting for real time.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private enum Sleeper {
        case waiting(Instant, CheckedContinuation<Void, any Error>)
        case cancelled
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
    }

    private let state = Locked(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    /// Sleepers currently waiting for a future instant.
    var sleeperCount: Int {
        state.withLock { state in
            state.sleepers.values.filter { if case .waiting = $0 { return true } else { return false } }.count
        }
    }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Result<Void, any Error>? = state.withLock { state in
                    if case .cancelled = state.sleepers[id] {
                        state.sleepers[id] = nil
                        return .failure(CancellationError())
                    }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = .waiting(deadline, continuation)
                    return nil
                }
                if let resumeNow { continuation.resume(with: resumeNow) }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Void, any Error>? = state.withLock { state in
                if case .waiting(_, let continuation) = state.sleepers[id] {
                    state.sleepers[id] = nil
                    return continuation
                }
                state.sleepers[id] = .cancelled
                return nil
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has passed.
    func advance(by duration: Duration) {
        let due: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            var due: [CheckedContinuation<Void, any Error>] = []
            for (id, sleeper) in state.sleepers {
                if case .waiting(let deadline, let continuation) = sleeper, deadline <= state.now {
                    due.append(continuation)
                    state.sleepers[id] = nil
                }
            }
            return due
        }
        for continuation in due { continuation.resume() }
    }

    /// Waits (bounded: 5 s of real time) until `count` sleepers are waiting.
    func waitForSleepers(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await CoreFixture.waitUntil("\(count) sleeper(s) on the manual clock", sourceLocation: sourceLocation) {
            self.sleeperCount >= count
        }
    }
}

extension CoreFixture {
    /// Polls `condition` until it holds; fails after 5 s of real time or 50 000 polls. Used only to
    /// wait for another task to reach a point, never to measure time.
    static func waitUntil(
        _ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool
    ) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        var polls = 0
        while !condition() {
            polls += 1
            if polls > 100_000 || clock.now - start > .seconds(30) {
                Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
                throw CancellationError()
            }
            if polls < 100 { await Task.yield() } else { try await Task.sleep(for: .milliseconds(1)) }
        }
    }
}
