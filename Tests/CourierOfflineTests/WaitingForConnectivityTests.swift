import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierOffline
import CourierTesting

/// Reads that wait for the network (`RetryPolicy.waitsForConnectivity`) on a connectivity monitor,
/// and the `waitingForConnectivity` status they surface.
@Suite struct WaitingForConnectivityTests {
    static let environment = APIEnvironment(name: "waiting", baseURL: URL(string: "https://api.example.test")!)

    static func read(deadline: Duration = .seconds(30)) -> Request<HTTPResponse> {
        var retry = RetryPolicy.none
        retry.waitsForConnectivity = true
        return Request(method: .get, path: "/feed", policy: .standard.with(\.retry, retry).with(\.deadline, deadline)) {
            response, _ in response
        }
    }

    /// The connectivity-wait events a call emits, in order.
    final class WaitEvents: NetworkEventMonitor {
        private let kinds = Locked<[String]>([])
        var current: [String] { kinds.current }
        func receive(_ event: NetworkEvent) {
            switch event.kind {
            case .waitingForConnectivity: kinds.withLock { $0.append("waiting") }
            case .connectivityWaitEnded(let returned, let duration):
                kinds.withLock { $0.append("ended returned=\(returned) after \(duration)") }
            default: break
            }
        }
    }

    static func client(
        _ stub: StubTransport, clock: TestClock, monitor: ManualConnectivityMonitor, events: WaitEvents = WaitEvents()
    ) -> APIClient {
        APIClient(environment: environment) {
            $0.transport = stub
            $0.interceptors = .standard(retry: RetryInterceptor(clock: clock, connectivity: monitor))
            $0.eventMonitors = [events]
            // The call's own deadline on a clock nobody advances: the wait under test ends on the
            // retry step's clock. On the real clock, a 20 s stall of the parallel pass let the
            // 10 s deadline fire first (timedOut instead of offline; a rerun at b75abff).
            $0.clock = TestClock(mode: .manual)
        }
    }

    @Test func anOfflineReadWaitsForTheNetworkThenTriesOnceMore() async throws {
        let stub = StubTransport(responses: [.failure(URLError(.notConnectedToInternet)), .success(.status(200))])
        let monitor = ManualConnectivityMonitor(initial: .noInternet)
        let clock = TestClock(mode: .manual)
        let events = WaitEvents()
        let client = Self.client(stub, clock: clock, monitor: monitor, events: events)
        var statuses = monitor.statuses().makeAsyncIterator()
        #expect(await statuses.next() == .noInternet)
        let call = Task { try await client.response(for: Self.read()) }
        #expect(await statuses.next() == .waitingForConnectivity)  // the offline banner's signal
        monitor.set(.online)
        let response = try await call.value
        #expect(response.statusCode == 200)
        #expect(stub.requestCount == 2)
        #expect(response.context.connectivityWaits.map(\.networkReturned) == [true])
        #expect(monitor.status == .online)
        #expect(events.current == ["waiting", "ended returned=true after 0.0 seconds"], "the same events as URLSession's waits")
    }

    @Test func theWaitEndsAtTheDeadlineWithTheOfflineError() async throws {
        let stub = StubTransport(responses: [.failure(URLError(.notConnectedToInternet)), .success(.status(200))])
        let monitor = ManualConnectivityMonitor(initial: .noInternet)
        let clock = TestClock(mode: .manual)
        let events = WaitEvents()
        let client = Self.client(stub, clock: clock, monitor: monitor, events: events)
        let call = Task { try await client.response(for: Self.read(deadline: .seconds(10))) }
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(10))
        let error = await #expect(throws: NetworkError.self) { try await call.value }
        #expect(error?.kind == .offline)
        #expect(stub.requestCount == 1)
        #expect(monitor.status == .noInternet)  // no call waits any more
        #expect(events.current == ["waiting", "ended returned=false after 10.0 seconds"])
    }
}
