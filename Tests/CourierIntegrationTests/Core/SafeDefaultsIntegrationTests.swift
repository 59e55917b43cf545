import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreIntegrationTests {
    /// API 1.0 (issue 8 §1): nothing a policy promises is silently dropped, `Retry-After` is an
    /// instruction, raw statuses are the caller's, failures say what the server sent.
    @Suite(.timeLimit(.minutes(2))) struct SafeDefaults {
        @Test(
            "a policy the pipeline cannot keep fails locally, names what is missing, sends nothing",
            arguments: [
                EndpointPolicy.authorizedRead,
                EndpointPolicy.standard.with(\.idempotency, .key("order-1")),
                EndpointPolicy.standard.with(\.cache, .onlyIfCached),
            ])
        func missingInterceptor(_ policy: EndpointPolicy) async throws {
            let (client, namespace) = try TestServers.apiClient { $0.interceptors = [RequestIDInterceptor()] }
            do {
                _ = try await client.send(Request<Void>.get("/items", policy: policy))
                Issue.record("expected missingInterceptor")
            } catch let error as NetworkError {
                guard case .missingInterceptor(let reason) = error else {
                    Issue.record("expected missingInterceptor, got \(error)")
                    return
                }
                #expect(reason.contains("Interceptor"))
            }
            #expect(try await TestServers.requestCount("GET /items", namespace: namespace) == 0)
        }

        @Test("the default pipeline sends the endpoint's idempotency key and retries")
        func defaultPipelineKeepsPolicies() async throws {
            let session = try RetrySession.start(clock: TestClock())
            let (client, namespace) = try TestServers.apiClient(namespace: session.namespace) { _ = $0 }
            try await session.inject("GET", "/items", [["status": 503]])
            let request = Request<HTTPResponse>.raw(.get, "/items").expecting(200)
                .policy(.standard.with(\.idempotency, .key("k-1")).with(\.retry, RetryPolicy(baseDelay: .milliseconds(1))))
            let response = try await client.send(request)
            #expect(response.statusCode == 200)
            #expect(try await session.idempotencyKeysSent(path: "/items") == ["k-1", "k-1"])
            #expect(try await TestServers.requestCount("GET /items", namespace: namespace) == 2)
        }

        @Test("a raw-status endpoint gets its 503 and 429 back, never retried")
        func rawStatusesAreNotRetried() async throws {
            let clock = TestClock()
            let session = try RetrySession.start(clock: clock)
            try await session.inject("GET", "/items", [["status": 503, "retryAfter": "1"], ["status": 429, "retryAfter": "1"]])
            let first = try await session.client.send(Request<HTTPResponse>.raw(.get, "/items"))
            let second = try await session.client.send(Request<HTTPResponse>.raw(.get, "/items"))
            #expect(first.statusCode == 503 && second.statusCode == 429)
            #expect(clock.sleeps.isEmpty)
            #expect(try await session.stats().requests("GET /items") == 2)
        }

        @Test("a raw-status endpoint still retries a dropped connection")
        func rawStatusesStillRetryTransportFailures() async throws {
            let session = try RetrySession.start(clock: TestClock())
            try await session.inject("GET", "/items", [["action": "drop"]])
            let response = try await session.client.send(Request<HTTPResponse>.raw(.get, "/items"))
            #expect(response.statusCode == 200)
            #expect(try await session.stats().requests("GET /items") == 2)
        }

        @Test(
            "a Retry-After longer than the policy accepts stops retries at once; the error carries the wait",
            arguments: [503, 429])
        func longRetryAfterStops(status: Int) async throws {
            let clock = TestClock()
            let session = try RetrySession.start(clock: clock)
            try await session.inject("GET", "/items", [["status": status, "retryAfter": "120"]])
            do {
                _ = try await session.client.send(Request<Data>.get("/items"))
                Issue.record("expected an error")
            } catch let error as NetworkError {
                #expect(error.statusCode == status)
                #expect(error.retryAfter == .seconds(120))
                #expect(error.retryAfter?.delay() == .seconds(120))
            }
            #expect(clock.sleeps.isEmpty, "never sent earlier than asked, and never waited past the policy")
            #expect(try await session.stats().requests("GET /items") == 1)
        }

        @Test("a Retry-After longer than the remaining deadline stops retries at once")
        func retryAfterPastTheDeadlineStops() async throws {
            let clock = TestClock()
            let session = try RetrySession.start(clock: clock)
            try await session.inject("GET", "/items", [["status": 503, "retryAfter": "30"]])
            let policy = EndpointPolicy.standard.with(\.deadline, .seconds(10))
            let error = await #expect(throws: NetworkError.self) {
                try await session.client.send(Request<Data>.get("/items", policy: policy))
            }
            #expect(error?.retryAfter == .seconds(30))
            #expect(clock.sleeps.isEmpty)
            #expect(try await session.stats().requests("GET /items") == 1)
        }

        @Test("a body cut short is one transient error, retried for an idempotent request")
        func truncatedBodyIsRetried() async throws {
            let session = try RetrySession.start(clock: TestClock())
            try await session.inject("GET", "/items", [["action": "truncate", "bytes": 5]])
            let response = try await session.client.response(for: Request<HTTPResponse>.raw(.get, "/items"))
            #expect(response.statusCode == 200)
            #expect(try await session.stats().requests("GET /items") == 2)
            #expect(response.context.retryRecords.map(\.reason) == [.transport(.networkConnectionLost)])
        }

        @Test("a body cut short without retries is transport(networkConnectionLost)")
        func truncatedBodyMapping() async throws {
            let session = try RetrySession.start(clock: TestClock())
            try await session.inject("GET", "/items", [["action": "truncate", "bytes": 5]])
            let error = await #expect(throws: NetworkError.self) {
                try await session.client.send(Request<Data>.get("/items", policy: .standard.with(\.retry, .none)))
            }
            #expect(error == .transport(URLError(.networkConnectionLost)))
        }

        @Test("an HTML page where JSON was expected is told apart from malformed JSON")
        func htmlInsteadOfJSON() async throws {
            let client = APIClient(environment: try TestServers.httpbinEnvironment(), configure: TestTransport.configure)
            struct Item: Decodable { var id: Int }
            let error = await #expect(throws: NetworkError.self) { try await client.send(Request<Item>.get("/html")) }
            guard case .decoding(let failure)? = error else {
                Issue.record("expected decoding, got \(String(describing: error))")
                return
            }
            #expect(failure.kind == .unexpectedContentType)
            #expect(failure.contentType == "text/html")
            #expect(failure.bodyLength > 1000)
            #expect(failure.bodySnippet.contains("<html") || failure.bodySnippet.contains("<!DOCTYPE"))
            #expect(failure.description.contains("text/html"))
        }

        @Test("a Data response is the raw body bytes")
        func dataResponse() async throws {
            let client = APIClient(environment: try TestServers.httpbinEnvironment(), configure: TestTransport.configure)
            let bytes = try await client.send(Request<Data>.get("/bytes/64", query: ["seed": "7"]))
            #expect(bytes.count == 64)
        }
    }
}
