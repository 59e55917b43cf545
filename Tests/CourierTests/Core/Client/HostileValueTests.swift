import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// Values an app passes on from users or servers that must not change what is sent: a method that
/// would rewrite the request line, path values that make a dot segment, repeated cookies, a NaN.
@Suite struct HostileValueTests {
    private func sent(
        _ request: Request<Void>, responses: [HTTPResponse] = [.status(204)], interceptors: [any Interceptor] = []
    ) async throws -> URLRequest? {
        let stub = StubTransport(responses: responses)
        let client = CoreFixture.client(stub) { $0.interceptors += interceptors }
        try await client.send(request)
        return stub.requests.first
    }

    private func expectRefused(_ request: Request<Void>) async {
        do {
            let built = try await sent(request)
            Issue.record("sent \(String(describing: built?.url)) with method \(String(reflecting: built?.httpMethod))")
        } catch let error as NetworkError {
            guard case .invalidRequest = error else {
                Issue.record("unexpected \(error)")
                return
            }
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test(arguments: ["GET /admin HTTP/1.1\r\nX-Injected: 1\r\nX:", "PO ST", "", "GET\0"])
    func aMethodThatIsNoTokenIsRefused(_ method: String) async {
        await expectRefused(Request<Void>(method: HTTPMethod(rawValue: method), path: "/items"))
    }

    @Test(arguments: [
        ("/files/{name}.{ext}", ["name": ".", "ext": ""]),
        ("/files/{name}.{ext}", ["name": "", "ext": "."]),
        ("/files/{a}{b}", ["a": ".", "b": "."]),
        ("/files/{name}.{ext}", ["name": "", "ext": ""]),
    ])
    func placeholdersThatTogetherMakeADotSegmentAreRefused(path: String, values: [String: String]) async {
        var request = Request<Void>.get(path)
        for (name, value) in values { request = request.pathValue(name, value) }
        await expectRefused(request)
    }

    /// An unfilled `{name}` was sent as the literal `%7Bname%7D` when the endpoint gave no path
    /// values at all; with other values it was refused. Now it is refused either way, naming the
    /// placeholder, and nothing is sent.
    @Test(
        "a placeholder without a value is refused, with or without other path values",
        arguments: [
            ("/items/{id}", [String: String]()),
            ("/users/{user}/items/{id}", [:]),
            ("/files/v{n}.json", [:]),
            ("/users/{user}/items/{id}", ["user": "ann"]),
            ("/items/{id", [:]),
        ])
    func anUnfilledPlaceholderIsRefused(path: String, values: [String: String]) async throws {
        var request = Request<Void>.get(path)
        for (name, value) in values { request = request.pathValue(name, value) }
        let stub = StubTransport(responses: [.status(204)])
        let client = CoreFixture.client(stub)
        let error = await #expect(throws: NetworkError.self) { try await client.send(request) }
        guard case .invalidRequest(let reason)? = error else {
            Issue.record("expected invalidRequest, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("placeholder"), "\(reason)")
        #expect(stub.requestCount == 0)
    }

    @Test func aPathWithoutBracesAndWithoutValuesIsSentAsWritten() async throws {
        let url = try #require(try await sent(Request<Void>.get("/files/a}b c")))
        #expect(url.url?.absoluteString == "https://api.example.test/v1/files/a%7Db%20c")
    }

    @Test func aPlaceholderNextToTextStillWorks() async throws {
        let url = try #require(
            try await sent(Request<Void>.get("/files/{name}.{ext}").pathValue("name", "a").pathValue("ext", "")))
        #expect(url.url?.path == "/v1/files/a.")
    }

    @Test func anAbsoluteURLWithAPathValueIsRefused() async {
        await expectRefused(Request<Void>.get("https://api.example.test/v1/files/{name}").pathValue("name", "a b"))
    }

    @Test func repeatedCookieFieldsAreJoinedWithASemicolon() async throws {
        var headers = HTTPHeaders()
        headers.add("Cookie", "a=1")
        headers.add("Cookie", "b=2")
        let built = try await sent(.get("/me", headers: headers))
        #expect(built?.value(forHTTPHeaderField: "Cookie") == "a=1; b=2")
    }

    @Test func aDecimalNaNHasNoQueryForm() {
        struct Filter: Encodable { var price: Decimal }
        #expect(throws: EncodingError.self) { _ = try URLQueryEncoder().encode(Filter(price: .nan)) }
    }

    /// A server's `Set-Cookie` with an empty attribute (`; ;`) is recorded, not a trap in HAR export.
    @Test(arguments: ["sid=abc123; ; Path=/", "sid=abc123;=", "sid=abc123; =x; Secure"])
    func harExportSurvivesEmptySetCookieAttributes(_ field: String) async throws {
        let har = HARRecorder()
        var headers = HTTPHeaders()
        headers.add("Set-Cookie", field)
        _ = try await sent(
            .get("/me"), responses: [.status(204, headers: headers)],
            interceptors: [LoggingInterceptor(logger: nil, recorders: [har])])
        try #require(har.exchanges.count == 1)
        #expect(try !har.jsonData().isEmpty)
    }
}
