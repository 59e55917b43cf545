import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// Issue 9, items 2 and 6: a one-shot body is never re-sent; a 408 is repeated at most once.
@Suite("HTTP semantics: one-shot bodies and 408")
struct BodyReplayAndTimeoutTests {
    static let json = Data(#"{"a":1}"#.utf8)
    static let keyedRetries = EndpointPolicy.standard.with(\.retry, .default).with(\.idempotency, .automatic)

    static func post(_ body: RequestBody) -> Request<Echo> {
        Request<Echo>(method: .post, path: "/echo", body: body).policy(keyedRetries)
    }

    @Test("a keyed POST with a one-shot stream answered 408 is not retried: the caller gets the 408")
    func oneShotIsNotRetried() async throws {
        let clock = TestClock()
        let session = try RetrySession.start(clock: clock)
        try await session.inject("POST", "/echo", [["status": 408]])
        let body = RequestBody.stream(
            .once(InputStream(data: Self.json), length: Self.json.count), contentType: "application/json")
        await #expect(throws: NetworkError.self) {
            do {
                _ = try await session.client.send(Self.post(body))
            } catch let error as NetworkError {
                #expect(error.statusCode == 408)
                throw error
            }
        }
        #expect(try await session.stats().int("rawRequests", "POST /echo") == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test("replayable bodies (data, factory, file) are re-sent byte-identical after a 408")
    func replayableBodiesAreResent() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-408-\(UUID().uuidString).json")
        try Self.json.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let bodies: [RequestBody] = [
            .data(Self.json, contentType: "application/json"),
            .stream(.factory { InputStream(data: Self.json) }, contentType: "application/json"),
            .stream(.file(file), contentType: "application/json"),
        ]
        for body in bodies {
            let session = try RetrySession.start()
            try await session.inject("POST", "/echo", [["status": 408]])
            let echo = try await session.client.send(Self.post(body))
            #expect(echo.bodyBase64 == Self.json.base64EncodedString())
            #expect(try await session.stats().int("rawRequests", "POST /echo") == 2)
            let keys = try await session.idempotencyKeysSent(path: "/echo")
            #expect(keys.count == 2 && keys[0] != nil && keys[0] == keys[1])
        }
    }

    @Test("a second consecutive 408 is returned: at most one repeat per call")
    func secondRequestTimeoutIsReturned() async throws {
        let session = try RetrySession.start()
        try await session.inject("GET", "/echo", [["status": 408], ["status": 408], ["status": 408]])
        let request = Request<Echo>.get("/echo").policy(.standard.with(\.retry, RetryPolicy(maxRetries: 5)))
        await #expect(throws: NetworkError.self) { _ = try await session.client.send(request) }
        #expect(try await session.stats().int("rawRequests", "GET /echo") == 2)
    }

    @Test("a 408 whose Retry-After is longer than the policy accepts is not repeated")
    func longRetryAfterIsNotWaited() async throws {
        let session = try RetrySession.start()
        try await session.inject("GET", "/echo", [["status": 408, "retryAfter": "3600"]])
        await #expect(throws: NetworkError.self) {
            _ = try await session.client.send(Request<Echo>.get("/echo").policy(.standard))
        }
        #expect(try await session.stats().int("rawRequests", "GET /echo") == 1)
    }
}
