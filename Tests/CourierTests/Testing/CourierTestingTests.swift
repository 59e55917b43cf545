import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// CourierTesting's own behaviour: the stubs users test their features with.
    @Suite struct CourierTestingStubs {
        static let url = URL(string: "https://stub.example.test/v1/items")!

        @Test("StubTransport serves its queue in order, records every request, then fails cleanly")
        func queue() async throws {
            let stub = StubTransport(responses: [
                .success(.status(200, body: "one")), .failure(URLError(.timedOut)),
                .success(.status(201, body: "three")),
            ])
            var first = URLRequest(url: Self.url)
            first.httpMethod = "POST"
            #expect(try await stub.send(first).bodySnippet() == "one")
            await #expect(throws: URLError(.timedOut)) { try await stub.send(URLRequest(url: Self.url)) }
            #expect(try await stub.send(URLRequest(url: Self.url)).statusCode == 201)
            await #expect(throws: URLError(.resourceUnavailable)) { try await stub.send(URLRequest(url: Self.url)) }
            #expect(stub.requestCount == 4)
            #expect(stub.requests.map(\.httpMethod) == ["POST", "GET", "GET", "GET"])
        }

        /// The article "Testing your networking code", run: its `.stub` environment, its scripted
        /// stub and the delays its "Control time" sample expects.
        @Test("the testing article's stub environment, scripted queue and recorded sleeps")
        func testingArticleRuns() async throws {
            struct Item: Decodable, Sendable {
                var id: Int
                var name: String
            }
            let stub = StubTransport(responses: [
                .failure(URLError(.networkConnectionLost)),
                .success(.status(503, headers: ["Retry-After": "2"])),
                .success(.json(#"{"id": 1, "name": "Lamp"}"#)),
            ])
            let clock = TestClock()
            let client = APIClient(environment: .stub) {
                $0.transport = stub
                $0.interceptors = .standard(retry: RetryInterceptor(clock: clock, random: { 0.5 }))
            }
            let item = try await client.send(Request<Item>.get("/items/1"))
            #expect(item.name == "Lamp")
            #expect(stub.requests.first?.url?.path == "/items/1")
            #expect(clock.sleeps == [.milliseconds(250), .seconds(2)])
        }

        @Test("StubTransport.enqueue appends to the queue")
        func enqueue() async throws {
            let stub = StubTransport(responses: [HTTPResponse]())
            stub.enqueue(.success(.status(202)), .success(.status(203)))
            #expect(try await stub.send(URLRequest(url: Self.url)).statusCode == 202)
            #expect(try await stub.send(URLRequest(url: Self.url)).statusCode == 203)
        }

        @Test("a client past the end of the queue gets a transport error, never a hang")
        func pastTheEndThroughClient() async throws {
            let stub = StubTransport(responses: [.status(204)])
            let client = CoreFixture.client(stub)
            try await client.send(Request<Void>.get("/a"))
            let error = await CoreFixture.networkError { try await client.send(Request<Void>.get("/b")) }
            guard case .transport(let urlError)? = error else {
                Issue.record("expected transport, got \(String(describing: error))")
                return
            }
            #expect(urlError.code == .resourceUnavailable)
            #expect(stub.requestCount == 2)
        }

        @Test("StubTransport with a handler sees each request and is thread-safe")
        func handler() async throws {
            let stub = StubTransport { request in .status(200, body: request.url?.lastPathComponent ?? "") }
            try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        try await stub.send(URLRequest(url: Self.url.appendingPathComponent("\(index)"))).bodySnippet()
                    }
                }
                var bodies: Set<String> = []
                for try await body in group { bodies.insert(body) }
                #expect(bodies == Set((0..<50).map(String.init)))
            }
            #expect(stub.requestCount == 50)
        }

        @Test("StubTransport checks cancellation before answering")
        func cancellation() async throws {
            let stub = StubTransport(responses: [.status(200)])
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await stub.send(URLRequest(url: Self.url))
            }
            await #expect(throws: CancellationError.self) { try await task.value }
        }

        @Test("HTTPResponse stub builders")
        func builders() throws {
            let json = HTTPResponse.json(#"{"a":1}"#, status: 201, headers: ["X-A": "1"])
            #expect(json.statusCode == 201 && json.headers["content-type"] == "application/json" && json.headers["x-a"] == "1")
            let typed = HTTPResponse.json(#"{}"#, headers: ["Content-Type": "application/problem+json"])
            #expect(typed.mediaType == "application/problem+json")
            let encoded = try HTTPResponse.json(encoding: ["b": 2, "a": 1])
            #expect(String(decoding: encoded.data, as: UTF8.self) == #"{"a":1,"b":2}"#)
            let plain = HTTPResponse.status(503, body: "busy", contentType: "text/plain")
            #expect(plain.statusCode == 503 && plain.mediaType == "text/plain" && plain.bodySnippet() == "busy")
            #expect(HTTPResponse.status(204).headers.fields.isEmpty)
        }

        /// A stub built from the app's own model must decode as the server's JSON does: a `Date`
        /// encoded with a plain `JSONEncoder` is a number, which the client's decoder refuses.
        @Test("HTTPResponse.json(encoding:) writes dates the client's default decoder reads")
        func encodedStubDecodesWithTheClientsDecoder() async throws {
            struct Listing: Codable, Sendable, Equatable {
                var id: Int
                var createdAt: Date
            }
            let listing = Listing(id: 7, createdAt: Date(timeIntervalSince1970: 1_780_000_000.25))
            let stub = StubTransport(responses: [try .json(encoding: listing)])
            let client = APIClient(environment: .stub) { $0.transport = stub }

            let decoded: Listing = try await client.get("/listings/7")

            #expect(decoded == listing)
        }

        // MARK: URLProtocolStub

        @Test("URLProtocolStub answers through a real URLSession: status, headers, body, and what was sent")
        func urlProtocolStub() async throws {
            let seen = Locked<[URLRequest]>([])
            let configuration = URLProtocolStub.configuration { request in
                seen.withLock { $0.append(request) }
                return .json(#"{"id":5,"name":"E"}"#, status: 201, headers: ["ETag": "\"v1\""])
            }
            let transport = URLSessionTransport(configuration: configuration)
            let client = APIClient(environment: CoreFixture.environment) { $0.transport = transport }
            let response = try await client.response(for: Request<CoreFixture.Item>.post("/items", body: ["name": "E"]))
            #expect(response.value == CoreFixture.Item(id: 5, name: "E"))
            #expect(response.statusCode == 201)
            #expect(response.response.headers["etag"] == "\"v1\"")
            let request = try #require(seen.current.first)
            #expect(request.httpMethod == "POST")
            #expect(request.url?.absoluteString == "https://api.example.test/v1/items")
            #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
            #expect(request.value(forHTTPHeaderField: "X-Request-ID") == response.context.requestID.description)
            #expect(request.httpBody.map { String(decoding: $0, as: UTF8.self) } == #"{"name":"E"}"#)
        }

        @Test("two stub configurations alive at once each get their own handler (no header needed)")
        func perConfigurationHandlers() async throws {
            // Many configurations, created and used concurrently, each answering with its own number.
            let sessions = (0..<12).map { index in
                URLSessionTransport(configuration: URLProtocolStub.configuration { _ in .status(200, body: "\(index)") })
            }
            try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for (index, transport) in sessions.enumerated() {
                    for _ in 0..<3 {
                        group.addTask { (index, try await transport.send(URLRequest(url: Self.url)).bodySnippet()) }
                    }
                }
                for try await (index, body) in group { #expect(body == "\(index)") }
            }
        }

        @Test("the stub's handler does not see any marker header, and the user's headers arrive")
        func noMarkerHeader() async throws {
            let seen = Locked<[String: String]>([:])
            let base = URLSessionTransport.defaultConfiguration()
            let configuration = URLProtocolStub.configuration(base: base) { request in
                seen.set(request.allHTTPHeaderFields ?? [:])
                return .status(204)
            }
            var request = URLRequest(url: Self.url)
            request.setValue("yes", forHTTPHeaderField: "X-Mine")
            _ = try await URLSessionTransport(configuration: configuration).send(request)
            #expect(seen.current["X-Mine"] == "yes")
            #expect(!seen.current.keys.contains { $0.lowercased() == "x-courier-stub" })
        }

        @Test("a handler's URLError reaches the client as the mapped NetworkError")
        func handlerError() async throws {
            let configuration = URLProtocolStub.configuration { _ in throw URLError(.notConnectedToInternet) }
            let client = APIClient(environment: CoreFixture.environment) {
                $0.transport = URLSessionTransport(configuration: configuration)
            }
            let error = await CoreFixture.networkError { try await client.send(Request<Void>.get("/x")) }
            guard case .offline(let urlError)? = error else {
                Issue.record("expected offline, got \(String(describing: error))")
                return
            }
            #expect(urlError.code == .notConnectedToInternet)
        }

        @Test("a large body arrives whole (one didLoad call)")
        func largeBody() async throws {
            let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let configuration = URLProtocolStub.configuration { _ in
                HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/octet-stream"], body: payload)
            }
            let response = try await URLSessionTransport(configuration: configuration).send(URLRequest(url: Self.url))
            #expect(response.data == payload)
        }

        @Test("one URLSession per client: every call goes through the same session object")
        func oneSessionPerClient() async throws {
            let count = Locked(0)
            let configuration = URLProtocolStub.configuration { _ in
                count.withLock { $0 += 1 }
                return .status(204)
            }
            let client = APIClient(environment: CoreFixture.environment) {
                $0.transport = URLSessionTransport(configuration: configuration)
            }
            let session = try #require((client.configuration.transport as? URLSessionTransport)?.session)
            for _ in 0..<3 { try await client.send(Request<Void>.get("/x")) }
            #expect((client.configuration.transport as? URLSessionTransport)?.session === session)
            #expect(count.current == 3)
        }

        @Test("URLSessionTransport's default configuration: no URL cache, own cookie storage, not shared")
        func defaultConfiguration() throws {
            let configuration = URLSessionTransport.defaultConfiguration()
            #expect(configuration.urlCache == nil)
            #expect(configuration.requestCachePolicy == .reloadIgnoringLocalCacheData)
            #expect(configuration.httpShouldSetCookies)
            let first = URLSessionTransport()
            let second = URLSessionTransport()
            #expect(first.session !== second.session)
            let storage = try #require(first.cookieStorage)
            #expect(storage !== HTTPCookieStorage.shared)
            #expect(storage !== second.cookieStorage)
        }
    }
}
