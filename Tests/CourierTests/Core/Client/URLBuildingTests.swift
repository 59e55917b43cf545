import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// How the client turns an endpoint's path and query into the request URL (issue 2, item 9).
    @Suite struct URLBuilding {
        /// Sends `request` through a stub and returns the URL the transport received.
        private func sentURL(
            _ request: Request<Void>, environment: APIEnvironment = CoreFixture.environment,
            configure: (inout APIClient.Configuration) -> Void = { _ in }
        ) async throws -> String {
            let stub = StubTransport(responses: [.status(204)])
            let client = CoreFixture.client(stub, environment: environment, configure: configure)
            try await client.send(request)
            return CoreFixture.urlString(stub.requests.first)
        }

        @Test(
            "each path segment is percent-encoded; the base URL's path prefix is kept",
            arguments: [
                ("/items/42", "https://api.example.test/v1/items/42"),
                ("items/42", "https://api.example.test/v1/items/42"),
                ("/files/a b", "https://api.example.test/v1/files/a%20b"),
                ("/tags/c++", "https://api.example.test/v1/tags/c%2B%2B"),
                ("/q/what?#", "https://api.example.test/v1/q/what%3F%23"),
                ("/users/élodie", "https://api.example.test/v1/users/%C3%A9lodie"),
                ("/pct/100%", "https://api.example.test/v1/pct/100%25"),
                ("/dir/", "https://api.example.test/v1/dir/"),
            ])
        func pathSegments(path: String, expected: String) async throws {
            #expect(try await sentURL(.get(path)) == expected)
        }

        @Test("a base URL with a trailing slash does not produce a double slash")
        func baseWithTrailingSlash() async throws {
            let environment = APIEnvironment(name: "slash", baseURL: URL(string: "https://api.example.test/v2/")!)
            #expect(try await sentURL(.get("/items"), environment: environment) == "https://api.example.test/v2/items")
        }

        @Test("a base URL with a port and no path")
        func baseWithPort() async throws {
            let environment = APIEnvironment(name: "port", baseURL: URL(string: "http://127.0.0.1:8080")!)
            #expect(try await sentURL(.get("/items/7"), environment: environment) == "http://127.0.0.1:8080/items/7")
        }

        @Test("query values with +, &, =, #, space and @ are encoded so they come back unchanged")
        func reservedCharactersInQueryValues() async throws {
            let query: Query = ["email": "user+tag@example.com", "q": "a&b=c#d", "sp": "x y"]
            let url = try await sentURL(.get("/echo", query: query))
            #expect(url == "https://api.example.test/v1/echo?email=user%2Btag%40example.com&q=a%26b%3Dc%23d&sp=x%20y")
            // What a server decodes:
            let items = URLComponents(string: url)?.queryItems ?? []
            #expect(items.map(\.name) == ["email", "q", "sp"])
            #expect(items.map(\.value) == ["user+tag@example.com", "a&b=c#d", "x y"])
        }

        @Test("nil values in a dictionary literal are omitted")
        func nilOmitted() async throws {
            let query: Query = ["a": "1", "page": nil, "b": "2"]
            #expect(try await sentURL(.get("/list", query: query)) == "https://api.example.test/v1/list?a=1&b=2")
        }

        struct Filter: Encodable, Sendable {
            var sp: String = "x y"
            var q: String = "a&b=c#d"
            var ids: [Int] = [1, 2]
            var email: String = "user+tag@example.com"
            var page: Int?
        }

        @Test(
            "an Encodable query: sorted keys, nil omitted, each array style",
            arguments: [
                (URLQueryEncoder.ArrayEncoding.repeated, "ids=1&ids=2"),
                (.brackets, "ids%5B%5D=1&ids%5B%5D=2"),
                (.commaSeparated, "ids=1%2C2"),
            ])
        func encodableQuery(style: URLQueryEncoder.ArrayEncoding, expectedIDs: String) async throws {
            let url = try await sentURL(.get("/echo", query: .encodable(Filter()))) {
                $0.queryEncoder = URLQueryEncoder(arrayEncoding: style)
            }
            #expect(
                url == "https://api.example.test/v1/echo?email=user%2Btag%40example.com&\(expectedIDs)&q=a%26b%3Dc%23d&sp=x%20y")
        }

        @Test("the same input gives a byte-identical URL every time")
        func stableURL() async throws {
            var urls: Set<String> = []
            for _ in 0..<20 {
                urls.insert(try await sentURL(.get("/items/a b", query: .encodable(Filter(page: 3)))))
            }
            #expect(urls.count == 1)
            #expect(urls.first?.contains("page=3") == true)
        }

        @Test("an absolute URL is used as is, and its own query is kept before the endpoint's")
        func absoluteURL() async throws {
            let url = try await sentURL(.get("https://other.example.test/a/b?x=1", query: ["y": "2 3"]))
            #expect(url == "https://other.example.test/a/b?x=1&y=2%203")
            let plain = try await sentURL(.get("HTTP://other.example.test/p"))
            #expect(URL(string: plain)?.host == "other.example.test")
            #expect(URL(string: plain)?.path == "/p")
        }

        @Test("explicit query items keep their order and a nil value is a bare name")
        func explicitItems() async throws {
            let query = Query([
                URLQueryItem(name: "z", value: "1"), URLQueryItem(name: "flag", value: nil),
                URLQueryItem(name: "a", value: ""),
            ])
            #expect(try await sentURL(.get("/x", query: query)) == "https://api.example.test/v1/x?z=1&flag&a=")
        }

        @Test("a query that cannot be encoded is an invalidRequest, and nothing is sent")
        func unencodableQuery() async throws {
            let stub = StubTransport(responses: [.status(204)])
            let client = CoreFixture.client(stub)
            let error = await CoreFixture.networkError {
                try await client.send(Request<Void>.get("/x", query: .encodable([1, 2, 3])))
            }
            guard case .invalidRequest(let reason)? = error else {
                Issue.record("expected invalidRequest, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("query"))
            #expect(stub.requestCount == 0)
        }

        @Test("a path that fails to build fails on every call, between calls that succeed: failures are never remembered")
        func failingPathsFailEveryTime() async throws {
            let stub = StubTransport(responses: Array(repeating: .status(204), count: 4))
            let client = CoreFixture.client(stub)
            for _ in 0..<2 {
                try await client.send(Request<Void>.get("/items/{id}").pathValue("id", "7"))
                let dotSegment = await CoreFixture.networkError {
                    try await client.send(Request<Void>.get("/items/{id}").pathValue("id", ".."))
                }
                let unusedValue = await CoreFixture.networkError {
                    try await client.send(Request<Void>.get("/items").pathValue("id", "7"))
                }
                for error in [dotSegment, unusedValue] {
                    guard case .invalidRequest? = error else {
                        Issue.record("expected invalidRequest, got \(String(describing: error))")
                        return
                    }
                }
            }
            #expect(
                stub.requests.map { CoreFixture.urlString($0) }
                    == Array(repeating: "https://api.example.test/v1/items/7", count: 2))
        }

        @Test("a malformed absolute URL is an invalidRequest")
        func malformedAbsoluteURL() async throws {
            let stub = StubTransport(responses: [.status(204)])
            let error = await CoreFixture.networkError {
                try await CoreFixture.client(stub).send(Request<Void>.get("http://"))
            }
            guard case .invalidRequest? = error else {
                Issue.record("expected invalidRequest, got \(String(describing: error))")
                return
            }
            #expect(stub.requestCount == 0)
        }

        @Test("a non-http(s) scheme — in the path, the base URL or a URL convenience — is an invalidRequest and sends nothing")
        func nonHTTPSchemes() async throws {
            let stub = StubTransport(responses: [.status(204), .status(204), .status(204)])
            let client = CoreFixture.client(stub)
            let ftpBase = CoreFixture.client(
                stub, environment: APIEnvironment(name: "ftp", baseURL: URL(string: "ftp://files.example.test/pub")!))
            let calls: [(String, @Sendable () async throws -> Void)] = [
                ("ftp:// path", { try await client.send(Request<Void>.get("ftp://files.example.test/x")) }),
                ("file:// path", { try await client.send(Request<Void>.get("file:///etc/passwd")) }),
                ("ftp base URL", { try await ftpBase.send(Request<Void>.get("/x")) }),
                ("get(URL) ftp", { try await client.delete(URL(string: "ftp://files.example.test/x")!) }),
                ("get(URL) mailto", { try await client.delete(URL(string: "mailto:someone@example.test")!) }),
                ("get(URL) relative", { try await client.delete(URL(string: "relative/path")!) }),
            ]
            for (name, call) in calls {
                let error = await CoreFixture.networkError { try await call() }
                guard case .invalidRequest? = error else {
                    Issue.record("\(name): expected invalidRequest, got \(String(describing: error))")
                    continue
                }
            }
            #expect(stub.requestCount == 0)
            // A relative path with a colon is still a path, not a scheme.
            #expect(try await sentURL(.get("/v1/items:batchGet")) == "https://api.example.test/v1/v1/items:batchGet")
            #expect(try await sentURL(.get("items:search")) == "https://api.example.test/v1/items:search")
        }

        @Test("an upper-case scheme is sent lower-cased (URLSession on Linux rejects HTTP://)")
        func upperCaseScheme() async throws {
            #expect(try await sentURL(.get("HTTPS://Other.example.test/p")).hasPrefix("https://"))
            let environment = APIEnvironment(name: "upper", baseURL: URL(string: "HTTP://api.example.test")!)
            #expect(try await sentURL(.get("/items"), environment: environment) == "http://api.example.test/items")
        }

        @Test(
            "APIEnvironment(baseURL: String) accepts only absolute http(s) URLs",
            arguments: [
                ("https://api.example.test/v1", true),
                ("http://127.0.0.1:9000", true),
                ("ftp://example.test", false),
                ("/relative/path", false),
                ("not a url", false),
            ])
        func environmentValidation(text: String, valid: Bool) {
            let environment = try? APIEnvironment(name: "x", baseURL: text)
            #expect((environment != nil) == valid)
        }

        @Test("one client builds every URL right when it calls the same endpoints again, many, and after a switch")
        func repeatedCallsReuseNothingStale() async throws {
            let stub = StubTransport(responses: Array(repeating: .status(204), count: 400))
            let client = CoreFixture.client(stub)
            var expected: [String] = []
            // Twice over more distinct URLs than the client remembers, with path values and queries.
            for round in 0..<2 {
                for id in 0..<90 {
                    let query: Query = id.isMultiple(of: 3) ? ["page": "\(round)"] : Query()
                    try await client.send(Request<Void>.get("/items/{id}", query: query).pathValue("id", "\(id)"))
                    expected.append(
                        "https://api.example.test/v1/items/\(id)" + (id.isMultiple(of: 3) ? "?page=\(round)" : ""))
                }
            }
            try await client.switchEnvironment(
                to: APIEnvironment(name: "other", baseURL: try #require(URL(string: "https://other.example.test/v2"))))
            try await client.send(Request<Void>.get("/items/{id}").pathValue("id", "1"))
            expected.append("https://other.example.test/v2/items/1")
            #expect(stub.requests.map { CoreFixture.urlString($0) } == expected)
        }
    }
}
