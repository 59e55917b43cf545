import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// NetworkEventMonitor: the lifecycle events of a call, in order, to every attached monitor.
@Suite("Network event monitors")
struct NetworkEventMonitorTests {
    final class Recorder: NetworkEventMonitor {
        let events = Locked<[NetworkEvent]>([])
        func receive(_ event: NetworkEvent) { events.withLock { $0.append(event) } }
        var names: [String] {
            events.withLock { $0 }.map { event in
                switch event.kind {
                case .callStarted: return "start"
                case .requestPrepared(let url): return "prepared \(url)"
                case .attemptStarted(let attempt): return "attempt \(attempt)"
                case .taskTimings: return "timings"
                case .responseHead(let status, let attempt): return "head \(status) #\(attempt)"
                case .retryScheduled(let delay, _): return "retry in \(delay)"
                case .waitingForConnectivity: return "waiting"
                case .connectivityWaitEnded(let returned, _): return "wait ended \(returned)"
                case .redirected(let status, let location): return "redirect \(status) \(location)"
                case .cacheOutcome(let outcome): return "cache \(outcome)"
                case .tokenRefreshStarted: return "refresh"
                case .tokenRefreshEnded(let ok): return "refreshed \(ok)"
                case .decodingFailed(let kind): return "decoding failed \(kind)"
                case .cancelled: return "cancelled"
                case .callEnded(let status): return "end \(status)"
                case .callFailed(let kind): return "failed \(kind)"
                }
            }
        }
    }

    struct Item: Decodable, Sendable { var id: Int }

    static func client(_ stub: StubTransport, _ monitors: [any NetworkEventMonitor], clock: TestClock = TestClock()) -> APIClient
    {
        APIClient(environment: APIEnvironment(name: "unit", baseURL: URL(string: "https://api.example.test/v1")!)) {
            $0.transport = stub
            $0.interceptors = [RetryInterceptor(clock: clock, random: { 0.5 })]
            $0.eventMonitors = monitors
        }
    }

    @Test("a retried, redirected call reports each step in order, to every monitor")
    func stepsInOrder() async throws {
        let stub = StubTransport(responses: [
            .status(503, headers: ["Retry-After": "2"]),
            .status(302, headers: ["Location": "https://api.example.test/v1/items/2?token=SECRET"]),
            .json(#"{"id": 2}"#),
        ])
        let (first, second) = (Recorder(), Recorder())
        let clock = TestClock()
        _ = try await Self.client(stub, [first, second], clock: clock).send(Request<Item>.get("/items/1"))
        #expect(
            first.names == [
                "start", "prepared https://api.example.test/v1/items/1", "attempt 1", "head 503 #1", "retry in 2.0 seconds",
                "attempt 2", "redirect 302 https://api.example.test/v1/items/2?token=<redacted>", "head 200 #2", "end 200",
            ])
        #expect(second.names == first.names)
        // No template of its own: named as metrics name it, identifier segments scrubbed.
        #expect(first.events.withLock { $0 }.allSatisfy { $0.pathTemplate == "/items/{id}" })
    }

    /// Measured before (an outside tester): `DELETE /tokens/<token>` reached every monitor as
    /// that path, while metrics showed `/tokens/{id}`.
    @Test("a path without a template reaches monitors scrubbed of identifiers; a template as written")
    func pathsAreScrubbedLikeMetrics() async throws {
        let token = "3f9a0c2e7b4d4e1fa6b8c9d0e1f2a3b4"
        let recorder = Recorder()
        let client = Self.client(StubTransport(responses: [.status(204), .status(204)]), [recorder])
        try await client.send(Request<Void>.delete("/tokens/\(token)"))
        #expect(recorder.events.withLock { $0 }.allSatisfy { $0.pathTemplate == "/tokens/{id}" })
        #expect(!recorder.events.withLock { $0 }.contains { $0.pathTemplate.contains(token) })

        let templated = Recorder()
        let named = Self.client(StubTransport(responses: [.status(204)]), [templated])
        var request = Request<Void>.delete("/tokens/\(token)")
        request.pathTemplate = "/tokens/{token}"
        try await named.send(request)
        #expect(templated.events.withLock { $0 }.allSatisfy { $0.pathTemplate == "/tokens/{token}" })
    }

    @Test("URLs in events are redacted with the client's redactor, its own query names included")
    func eventsUseTheClientsRedactor() async throws {
        let stub = StubTransport(responses: [
            .status(302, headers: ["Location": "https://api.example.test/v1/items/2?voucher=SIGNATURE7"]),
            .json(#"{"id": 2}"#),
        ])
        let recorder = Recorder()
        let client = APIClient(environment: APIEnvironment(name: "unit", baseURL: URL(string: "https://api.example.test/v1")!)) {
            $0.transport = stub
            $0.interceptors = [LoggingInterceptor(logger: nil, redactor: Redactor(queryParameters: ["voucher"]))]
            $0.eventMonitors = [recorder]
        }
        _ = try await client.send(Request<Item>.get("/items/1", query: ["voucher": "SIGNATURE1"]))
        #expect(recorder.names.contains("prepared https://api.example.test/v1/items/1?voucher=<redacted>"))
        #expect(recorder.names.contains("redirect 302 https://api.example.test/v1/items/2?voucher=<redacted>"))
        #expect(!recorder.names.contains { $0.contains("SIGNATURE") })
    }

    @Test("a body that does not decode, and a cancelled call, end with their events")
    func decodingAndCancellation() async throws {
        let recorder = Recorder()
        let client = Self.client(StubTransport(responses: [.json(#"{"id": "x"}"#)]), [recorder])
        _ = await #expect(throws: NetworkError.self) { try await client.send(Request<Item>.get("/items/1")) }
        #expect(recorder.names.suffix(2) == ["decoding failed decoding", "failed decoding"])

        let cancelled = Recorder()
        let slow = Self.client(
            StubTransport { _ in
                try await Task.sleep(for: .seconds(30))
                return .status(204)
            }, [cancelled])
        let task = Task { try await slow.send(Request<Void>.get("/slow")) }
        task.cancel()  // before or during the send: either way the call ends cancelled
        _ = await task.result
        #expect(cancelled.names.suffix(2) == ["cancelled", "failed cancelled"])
    }

    @Test("without a monitor, the call's context holds none and no event is ever built")
    func nothingBuiltWithoutMonitors() async throws {
        let response = try await Self.client(StubTransport(responses: [.json(#"{"id": 1}"#)]), [])
            .response(for: Request<Item>.get("/items/1"))
        #expect(response.context.eventMonitors == nil)

        let built = Locked(0)
        let kind: @Sendable () -> NetworkEvent.Kind = {
            built.withLock { $0 += 1 }
            return .callStarted
        }
        let context = RequestContext(method: .get, pathTemplate: "/items/{id}")
        context.emit(kind())
        context.eventMonitors = []
        context.emit(kind())
        #expect(built.current == 0)
        let recorder = Recorder()
        context.eventMonitors = [recorder]
        context.emit(kind())
        #expect(built.current == 1 && recorder.names == ["start"])
    }
}
