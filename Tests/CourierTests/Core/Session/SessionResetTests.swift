import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

@Suite("Session reset")
struct SessionResetTests {
    /// Records the order in which participants were reset.
    final class Journal: Sendable {
        private let entries = Mutex([String]())
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    /// A lock box for the test journal (tests may use iOS 18+ `Mutex`-like helpers of their own).
    final class Mutex<Value: Sendable>: @unchecked Sendable {
        // @unchecked: `value` is only accessed while `lock` is held.
        private let lock = NSLock()
        private var value: Value
        init(_ value: Value) { self.value = value }
        func withLock<R>(_ body: (inout Value) -> R) -> R {
            lock.lock()
            defer { lock.unlock() }
            return body(&value)
        }
    }

    struct Failing: Error, Equatable {}

    /// An interceptor holding account state (like a cache or an auth interceptor would).
    struct StatefulInterceptor: Interceptor, SessionResettable {
        let journal: Journal
        func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
            try await next(request)
        }
        func resetSession() async { journal.append("interceptor") }
    }

    /// A third-party transport with session state of its own, reset at the connections stage.
    struct StatefulTransport: Transport, SessionResettable {
        let journal: Journal
        func send(_ request: URLRequest) async throws -> HTTPResponse { HTTPResponse(statusCode: 204) }
        func resetSession() async { journal.append("transport") }
        var sessionResetStage: SessionResetStage { .connections }
    }

    /// A third-party interceptor that signs out, so it goes first whatever its place in the pipeline.
    struct SigningOutInterceptor: Interceptor, SessionResettable {
        let journal: Journal
        func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
            try await next(request)
        }
        func resetSession() async { journal.append("sign-out") }
        var sessionResetStage: SessionResetStage { .signOut }
    }

    @Test func thirdPartyParticipantsAreResetByTheirStageThenInPipelineOrder() async throws {
        let journal = Journal()
        let client = try ObservabilityFixtures.makeClient(
            transport: StatefulTransport(journal: journal),
            interceptors: [
                StatefulInterceptor(journal: journal), RequestIDInterceptor(), SigningOutInterceptor(journal: journal),
            ])
        try await client.resetSession(also: [SessionResetAction("tokens") { journal.append("tokens") }])
        #expect(journal.all == ["sign-out", "transport", "interceptor", "tokens"])
    }

    @Test func everyParticipantIsResetInOrderEvenWhenOneFails() async throws {
        let journal = Journal()
        let client = try ObservabilityFixtures.makeClient(
            transport: StubTransport { _ in .status(204) },
            interceptors: [RequestIDInterceptor(), StatefulInterceptor(journal: journal)])
        do {
            try await client.resetSession(also: [
                SessionResetAction("tokens") {
                    journal.append("tokens")
                    throw Failing()
                },
                SessionResetAction("cache") { journal.append("cache") },
            ])
            Issue.record("the failing participant must be reported")
        } catch let error as SessionResetError {
            #expect(error.failures.map(\.participant) == ["tokens"])
            #expect(error.failures.first?.error is Failing)
        }
        #expect(journal.all == ["interceptor", "tokens", "cache"])
    }

    @Test func theTransportForgetsItsCookiesAndOnlyItsOwn() async throws {
        let transport = URLSessionTransport()
        let other = URLSessionTransport()
        let storage = try #require(transport.cookieStorage)
        let otherStorage = try #require(other.cookieStorage)
        #expect(storage !== HTTPCookieStorage.shared)
        let cookie = try #require(
            HTTPCookie(properties: [.name: "sid", .value: "SECRET-SID", .domain: "api.example.com", .path: "/"]))
        storage.setCookie(cookie)
        otherStorage.setCookie(cookie)
        #expect(storage.cookies?.count == 1)

        let client = APIClient(environment: try APIEnvironment(name: "x", baseURL: "https://api.example.com")) {
            $0.transport = transport
        }
        try await client.resetSession()
        #expect(storage.cookies?.isEmpty ?? true)
        #expect(otherStorage.cookies?.count == 1, "another client's cookies are untouched")
    }

    @Test func recordedTrafficIsKeptUnlessTheAppAddsItToTheReset() async throws {
        let har = HARRecorder()
        let client = try ObservabilityFixtures.makeClient(
            transport: StubTransport { _ in .json("{}") },
            interceptors: [LoggingInterceptor(logger: nil, recorders: [har])])
        _ = try await client.send(Request<HTTPResponse>.raw(.get, "/me"))
        try await client.resetSession()
        #expect(har.exchanges.count == 1, "a HAR file is the developer's record of the whole run")
        try await client.resetSession(also: [SessionResetAction("network log") { har.removeAll() }])
        #expect(har.exchanges.isEmpty)
    }
}
