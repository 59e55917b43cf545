import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// Issue 9, item 1: redirects follow RFC 9110 §15.4 in Courier's own redirect step.
@Suite("HTTP semantics: redirects keep or drop the body per RFC 9110 §15.4")
struct RedirectSemanticsTests {
    static let json = Data(#"{"a":1}"#.utf8)

    /// `method /status/{status}` answered with `Location: /ns/{ns}/echo/landed`.
    static func redirected(_ method: HTTPMethod, _ status: Int, namespace: String, body: RequestBody) -> Request<Echo> {
        Request<Echo>(method: method, path: "/status/\(status)", query: ["location": "/ns/\(namespace)/echo/landed"], body: body)
    }

    static func rawCount(_ key: String, namespace: String) async throws -> Int {
        ServerStats(try await TestServers.stats(namespace: namespace)).int("rawRequests", key)
    }

    @Test(
        "307/308 (and 301/302 for methods other than POST) repeat the method with the identical body bytes",
        arguments: [(HTTPMethod.post, 307), (.post, 308), (.put, 301), (.put, 302), (.patch, 307), (.put, 308), (.delete, 307)])
    func repeatsMethodAndBody(_ method: HTTPMethod, _ status: Int) async throws {
        let (client, namespace) = try TestServers.apiClient()
        let response = try await client.response(
            for: Self.redirected(method, status, namespace: namespace, body: .data(Self.json, contentType: "application/json")))
        let echo = response.value
        #expect(echo.method == method.rawValue)
        #expect(echo.routePath == "/echo/landed")
        #expect(echo.bodyBase64 == Self.json.base64EncodedString())
        #expect(echo.headers.first { $0.key.lowercased() == "content-length" }?.value == "7")
        #expect(echo.headers.first { $0.key.lowercased() == "content-type" }?.value == "application/json")
        #expect(response.context.redirects.map(\.statusCode) == [status])
    }

    @Test(
        "301/302 change POST to GET, 303 changes every method but HEAD: no body, no Content-* field",
        arguments: [(HTTPMethod.post, 301), (.post, 302), (.post, 303), (.put, 303), (.patch, 303), (.delete, 303)])
    func changesToGETWithoutBody(_ method: HTTPMethod, _ status: Int) async throws {
        let (client, namespace) = try TestServers.apiClient()
        let echo = try await client.send(
            Self.redirected(method, status, namespace: namespace, body: .data(Self.json, contentType: "application/json")))
        #expect(echo.method == "GET")
        #expect(echo.bodySize == 0)
        let contentFields = echo.headers.keys.filter { $0.lowercased().hasPrefix("content-") }
        #expect(contentFields.isEmpty, "GET after \(status) carried \(contentFields)")
    }

    @Test("each hop is visible: the context lists it, the metrics event counts it, the log line says so")
    func hopsAreVisible() async throws {
        let metrics = CapturingMetricsSink()
        let logger = CapturingNetworkLogger()
        let (client, namespace) = try TestServers.apiClient {
            $0.interceptors = .standard(logger: logger, metrics: metrics)
        }
        let response = try await client.response(
            for: Self.redirected(.post, 308, namespace: namespace, body: .data(Self.json, contentType: "application/json")))
        #expect(response.context.redirects.map(\.to?.path) == ["/ns/\(namespace)/echo/landed"])
        #expect(metrics.events.map(\.redirectCount) == [1])
        #expect(logger.entries.contains { $0.summary.contains("via 1 redirect") }, "\(logger.entries.map(\.summary))")
    }

    @Test("HEAD answered 303 stays HEAD")
    func headStaysHead() async throws {
        let (client, namespace) = try TestServers.apiClient()
        let request = Request<HTTPResponse>(
            method: .head, path: "/status/303", query: ["location": "/ns/\(namespace)/echo/landed"]
        ) { response, _ in response }
        let response = try await client.send(request)
        #expect(response.statusCode == 200)
        #expect(try await Self.rawCount("HEAD /echo/landed", namespace: namespace) == 1)
        #expect(try await Self.rawCount("GET /echo/landed", namespace: namespace) == 0)
    }

    @Test("a replayable stream body (factory, file) is sent again byte-identical after 307/308", arguments: [307, 308])
    func replayableStreamIsResent(_ status: Int) async throws {
        let (client, namespace) = try TestServers.apiClient()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-redirect-\(UUID().uuidString).json")
        try Self.json.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        for stream in [BodyStream.factory(length: Self.json.count) { InputStream(data: Self.json) }, .file(file)] {
            let echo = try await client.send(
                Self.redirected(.post, status, namespace: namespace, body: .stream(stream, contentType: "application/json")))
            #expect(echo.method == "POST")
            #expect(echo.bodyBase64 == Self.json.base64EncodedString())
        }
    }

    @Test("a one-shot stream body answered 307/308 fails clearly and nothing else is sent", arguments: [307, 308])
    func oneShotStreamIsNeverResent(_ status: Int) async throws {
        let (client, namespace) = try TestServers.apiClient()
        let body = RequestBody.stream(
            .once(InputStream(data: Self.json), length: Self.json.count), contentType: "application/json")
        do {
            _ = try await client.send(Self.redirected(.post, status, namespace: namespace, body: body))
            Issue.record("expected the redirect to fail")
        } catch let error as NetworkError {
            guard case .invalidRequest(let message) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(message.contains("one-shot"))
        }
        #expect(try await Self.rawCount("POST /status/\(status)", namespace: namespace) == 1)
        #expect(try await Self.rawCount("POST /echo/landed", namespace: namespace) == 0)
    }
}
