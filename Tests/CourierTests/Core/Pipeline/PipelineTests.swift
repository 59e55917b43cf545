import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// The interceptor pipeline (issue 2, item 4).
    @Suite struct PipelineBehaviour {
        /// Records `name>` before calling next and `<name` after, in a shared log, and tags the request.
        struct Tracing: Interceptor {
            let name: String
            let log: Locked<[String]>
            func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
                log.withLock { $0.append("\(name)>") }
                var request = request
                request.addValue(name, forHTTPHeaderField: "X-Trail")
                var response = try await next(request)
                log.withLock { $0.append("<\(name)") }
                response.headers.add("X-Seen-By", name)
                return response
            }
        }

        @Test("index 0 is outermost: it sees the request first and the response last")
        func order() async throws {
            let log = Locked<[String]>([])
            let stub = StubTransport { request in
                log.withLock { $0.append("transport") }
                return .status(204)
            }
            let client = CoreFixture.client(stub) {
                $0.interceptors = [Tracing(name: "a", log: log), Tracing(name: "b", log: log), Tracing(name: "c", log: log)]
            }
            let response = try await client.response(for: Request<Void>.get("/x"))
            #expect(log.current == ["a>", "b>", "c>", "transport", "<c", "<b", "<a"])
            #expect(
                stub.requests.first?.value(forHTTPHeaderField: "X-Trail") == "a,b,c"
                    || stub.requests.first?.value(forHTTPHeaderField: "X-Trail") == "a, b, c")
            #expect(response.response.headers.values(for: "X-Seen-By") == ["c", "b", "a"])
        }

        struct ShortCircuit: Interceptor {
            func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
                .json(#"{"id":9,"name":"from cache"}"#)
            }
        }

        @Test("an interceptor that never calls next answers without reaching the transport")
        func shortCircuit() async throws {
            let stub = StubTransport(responses: [HTTPResponse]())
            let client = CoreFixture.client(stub) { $0.interceptors = [RequestIDInterceptor(), ShortCircuit()] }
            let response = try await client.response(for: Request<CoreFixture.Item>.get("/items/9"))
            #expect(response.value == CoreFixture.Item(id: 9, name: "from cache"))
            #expect(stub.requestCount == 0)
            #expect(response.context.attempt == 0)
        }

        enum SeenAttempts: RequestContextKey { typealias Value = [Int] }

        /// Calls next until the response is not 503, at most `limit` times; records each attempt
        /// number in the context.
        struct RetryLike: Interceptor {
            let limit: Int
            /// It retries, so the client adds no retry interceptor of its own.
            var capabilities: PipelineCapabilities { .retries }
            func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
                var response = try await next(request)
                record(context)
                while response.statusCode == 503, context.attempt < limit {
                    response = try await next(request)
                    record(context)
                }
                return response
            }

            private func record(_ context: RequestContext) {
                let attempt = context.attempt  // read outside update: its body runs under the context's lock
                context.update(SeenAttempts.self, default: []) { $0.append(attempt) }
            }
        }

        @Test("an interceptor may call next twice; the context (and X-Request-ID) is shared by both attempts")
        func callsNextTwice() async throws {
            let stub = StubTransport(responses: [.status(503), .json(#"{"id":1,"name":"A"}"#)])
            let client = CoreFixture.client(stub) { $0.interceptors = [RequestIDInterceptor(), RetryLike(limit: 3)] }
            let response = try await client.response(for: Request<CoreFixture.Item>.get("/items/1"))
            #expect(response.value.id == 1)
            #expect(stub.requestCount == 2)
            #expect(response.context.attempt == 2)
            #expect(response.context.retryCount == 1)
            #expect(response.context[SeenAttempts.self] == [1, 2])
            let ids = Set(stub.requests.compactMap { $0.value(forHTTPHeaderField: "X-Request-ID") })
            #expect(ids == [response.context.requestID.description])
        }

        @Test("the retry-like interceptor stops at its limit and the last status is mapped")
        func retryLimit() async throws {
            let stub = StubTransport { _ in .status(503) }
            let client = CoreFixture.client(stub) { $0.interceptors = [RetryLike(limit: 3)] }
            let context = RequestContext()
            let error = await CoreFixture.networkError {
                try await client.response(for: Request<Void>.get("/x"), context: context)
            }
            #expect(error?.statusCode == 503)
            #expect(stub.requestCount == 3)
            #expect(context.attempt == 3)
            #expect(context[SeenAttempts.self] == [1, 2, 3])
        }

        @Test("RequestIDInterceptor keeps an ID the endpoint set, and honours a custom header name")
        func requestIDInterceptor() async throws {
            let stub = StubTransport { _ in .status(204) }
            let client = CoreFixture.client(stub) {
                $0.interceptors = [RequestIDInterceptor(), RequestIDInterceptor(headerName: "X-Correlation-ID")]
            }
            try await client.send(Request<Void>.get("/x").header("X-Request-ID", "chosen-by-caller"))
            let sent = try #require(stub.requests.first)
            #expect(sent.value(forHTTPHeaderField: "X-Request-ID") == "chosen-by-caller")
            let correlation = try #require(sent.value(forHTTPHeaderField: "X-Correlation-ID"))
            #expect(UUID(uuidString: correlation) != nil)
            #expect(correlation == correlation.lowercased())
        }

        @Test("the default pipeline is the standard one: request ID, retries, idempotency keys")
        func defaultPipeline() {
            let configuration = APIClient.Configuration(environment: CoreFixture.environment)
            #expect(configuration.interceptors.count == 3)
            #expect(configuration.interceptors[0] is RequestIDInterceptor)
            #expect(configuration.interceptors[1] is RetryInterceptor)
            #expect(configuration.interceptors[2] is IdempotencyInterceptor)
        }

        @Test("Pipeline can be used on its own; an interceptor can change the request it passes on")
        func standalonePipeline() async throws {
            struct Rewrite: Interceptor {
                func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
                    var request = request
                    request.url = URL(string: "https://mirror.example.test/other")
                    return try await next(request)
                }
            }
            let stub = StubTransport { _ in .status(200) }
            let pipeline = Pipeline(interceptors: [Rewrite()], transport: stub)
            let context = RequestContext()
            let response = try await pipeline.send(URLRequest(url: CoreFixture.baseURL), context: context)
            #expect(response.statusCode == 200)
            #expect(CoreFixture.urlString(stub.requests.first) == "https://mirror.example.test/other")
            #expect(context.attempt == 1)
        }

        @Test("a cancelled task never reaches the transport")
        func cancelledBeforeTransport() async throws {
            let stub = StubTransport { _ in .status(200) }
            let pipeline = Pipeline(interceptors: [], transport: stub)
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await pipeline.send(URLRequest(url: CoreFixture.baseURL), context: RequestContext())
            }
            let result = await task.result
            #expect(throws: CancellationError.self) { try result.get() }
            #expect(stub.requestCount == 0)
        }
    }

    /// `RequestContext`: one per logical call (issue 2, item 3).
    @Suite struct RequestContextBehaviour {
        @Test("idempotency key per policy: none, automatic (a UUID, stable), explicit")
        func idempotencyKeys() throws {
            #expect(RequestContext(policy: .standard).idempotencyKey == nil)
            let automatic = RequestContext(policy: .authorizedWrite)
            let key = try #require(automatic.idempotencyKey)
            #expect(UUID(uuidString: key) != nil)
            #expect(automatic.idempotencyKey == key)
            #expect(RequestContext(policy: .authorizedWrite).idempotencyKey != key)
            #expect(RequestContext(policy: .standard.with(\.idempotency, .key("order-17"))).idempotencyKey == "order-17")
        }

        enum Counter: RequestContextKey { typealias Value = Int }
        enum Label: RequestContextKey { typealias Value = String }

        @Test("typed slots are independent and thread-safe under concurrent updates")
        func slots() async {
            let context = RequestContext()
            #expect(context[Counter.self] == nil)
            context[Label.self] = "hello"
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<200 {
                    group.addTask { context.update(Counter.self, default: 0) { $0 += 1 } }
                    group.addTask { context.beginAttempt() }
                }
            }
            #expect(context[Counter.self] == 200)
            #expect(context[Label.self] == "hello")
            #expect(context.attempt == 200)
            #expect(context.retryCount == 199)
            context[Label.self] = nil
            #expect(context[Label.self] == nil)
        }

        @Test("attempt starts at 0; beginAttempt returns the new number")
        func attempts() {
            let context = RequestContext()
            #expect(context.attempt == 0)
            #expect(context.retryCount == 0)
            #expect(context.beginAttempt() == 1)
            #expect(context.beginAttempt() == 2)
            #expect(context.retryCount == 1)
        }

        @Test("the client builds one context per call, from the endpoint")
        func perCall() async throws {
            let stub = StubTransport { _ in .status(204) }
            let client = CoreFixture.client(stub) { $0.interceptors = [RequestIDInterceptor(), IdempotencyInterceptor()] }
            let policy = EndpointPolicy.authorizedWrite.with(\.auth, .none)
            let request = Request<Void>.post("/orders").policy(policy)
            let a = try await client.response(for: request)
            let b = try await client.response(for: request)
            #expect(a.context !== b.context)
            #expect(a.context.idempotencyKey != nil && a.context.idempotencyKey != b.context.idempotencyKey)
            #expect(a.context.policy == policy)
            #expect(a.context.method == .post)
            #expect(a.context.startedAt <= b.context.startedAt)
        }
    }

    /// Policy presets (issue 2, item 2): the values the documentation promises.
    @Suite struct PolicyPresets {
        @Test("presets")
        func presets() {
            #expect(EndpointPolicy.standard.auth == .none && EndpointPolicy.standard.deadline == .seconds(60))
            #expect(EndpointPolicy.authorizedRead.auth == .required && EndpointPolicy.authorizedRead.idempotency == .none)
            #expect(
                EndpointPolicy.authorizedWrite.idempotency == .automatic && EndpointPolicy.authorizedWrite.cache == .bypassCache)
            #expect(
                EndpointPolicy.authorizedUpload.deadline == .seconds(300) && EndpointPolicy.authorizedUpload.auth == .required)
            #expect(EndpointPolicy.publicPolling.auth == .none && EndpointPolicy.publicPolling.retry == .polling)
            #expect(EndpointPolicy.authRefresh.auth == .none && EndpointPolicy.authRefresh.cache == .bypassCache)
            let tuned = EndpointPolicy.authorizedRead.with(\.deadline, .seconds(5))
            #expect(tuned.deadline == .seconds(5) && tuned.auth == .required)
        }

        @Test("HTTPMethod safety and idempotency (RFC 9110 §9.2)")
        func methods() {
            #expect(HTTPMethod.get.isSafe && HTTPMethod.head.isSafe && !HTTPMethod.post.isSafe)
            #expect(HTTPMethod.put.isIdempotent && HTTPMethod.delete.isIdempotent)
            #expect(!HTTPMethod.post.isIdempotent && !HTTPMethod.patch.isIdempotent)
        }
    }
}
