import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// Shared fixtures of the observability unit tests.
enum ObservabilityFixtures {
    /// A stub server that echoes what it received, the way the reference server's `/echo` does —
    /// the worst case for leaks: every secret of the request comes back in the response body.
    static func echoingStub() -> StubTransport {
        StubTransport { request in
            var echo: [String: Any] = [:]
            echo["headers"] = request.allHTTPHeaderFields ?? [:]
            echo["headerList"] = (request.allHTTPHeaderFields ?? [:]).map { [$0.key, $0.value] }
            echo["body"] = request.httpBody.map { String(decoding: $0, as: UTF8.self) } ?? NSNull()
            echo["url"] = request.url?.absoluteString ?? ""
            let data = try JSONSerialization.data(withJSONObject: echo, options: [.sortedKeys])
            return HTTPResponse(
                statusCode: 200,
                headers: ["Content-Type": "application/json", "Set-Cookie": "sid=SECRET-NEWSID; Path=/; HttpOnly"],
                body: data, url: request.url)
        }
    }

    /// The issue's request: a bearer token, a session cookie, a password in a nested JSON body and a
    /// token in the query.
    static func secretRequest(policy: LoggingPolicy = .debugSafe) -> Request<HTTPResponse> {
        var request = Request<HTTPResponse>.raw(
            .post, "/users/42/login",
            query: ["access_token": "SECRET-QUERY", "page": "1"],
            headers: ["Authorization": "Bearer SECRET-TOKEN", "Cookie": "sid=SECRET-SID"],
            body: .data(Data(#"{"user":{"name":"ann","password":"SECRET-PW"}}"#.utf8), contentType: "application/json"))
        request.pathTemplate = "/users/{id}/login"
        return request.policy(EndpointPolicy.standard.with(\.logging, policy))
    }

    static func makeClient(
        transport: any Transport, interceptors: [any Interceptor]
    ) throws -> APIClient {
        let environment = try APIEnvironment(name: "stub", baseURL: "https://api.example.com")
        return APIClient(environment: environment) {
            $0.transport = transport
            // Retries off unless a test brings its own: each test sees the attempts it scripts.
            $0.interceptors = interceptors + [RetryInterceptor(maximumRetries: 0)]
        }
    }

    /// Retries once when the first attempt answers 503 (a stand-in for the real retry interceptor).
    struct OneRetryOn503: Interceptor {
        var capabilities: PipelineCapabilities { .retries }
        func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
            let first = try await next(request)
            return first.statusCode == 503 ? try await next(request) : first
        }
    }

    /// Sets a header on every attempt (a stand-in for an auth interceptor).
    struct AddHeader: Interceptor {
        let name: String
        let value: String
        func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
            var request = request
            request.setValue(value, forHTTPHeaderField: name)
            return try await next(request)
        }
    }
}

@Suite("LoggingInterceptor")
struct LoggingInterceptorTests {
    @Test func noSecretReachesTheLogRecordsCURLOrHAR() async throws {
        let logger = CapturingNetworkLogger()
        let har = HARRecorder()
        let stub = ObservabilityFixtures.echoingStub()
        let client = try ObservabilityFixtures.makeClient(
            transport: stub,
            interceptors: [RequestIDInterceptor(), LoggingInterceptor(logger: logger, recorders: [har])])

        let response = try await client.response(for: ObservabilityFixtures.secretRequest())
        #expect(response.statusCode == 200)

        let request = try #require(response.context.requestRecord)
        let snapshotResponse = try #require(response.context.responseRecord)
        let outputs = [
            logger.text,
            String(describing: request), String(describing: snapshotResponse),
            CURLCommand(request).text,
            String(decoding: try har.jsonData(), as: UTF8.self),
        ]
        for output in outputs {
            #expect(!output.contains("SECRET-"), "leaked: \(output)")
        }
        // Names stay visible, with the marker.
        #expect(logger.text.contains("Authorization: Bearer <redacted>"))
        #expect(logger.text.contains("Cookie: sid=<redacted>"))
        #expect(logger.text.contains(#""password":"<redacted>""#))
        #expect(logger.text.contains("access_token=<redacted>&page=1"))
        #expect(logger.text.contains("Set-Cookie: sid=<redacted>; Path=/; HttpOnly"))
        // The secrets were really sent: the test would catch a redactor that edits the request.
        let sent = try #require(stub.requests.last)
        #expect(sent.value(forHTTPHeaderField: "Authorization") == "Bearer SECRET-TOKEN")
        #expect(String(decoding: sent.httpBody ?? Data(), as: UTF8.self).contains("SECRET-PW"))
    }

    @Test func recordsDescribeTheCall() async throws {
        let stub = StubTransport { _ in .json(#"{"id":42}"#, status: 201) }
        let client = try ObservabilityFixtures.makeClient(transport: stub, interceptors: [LoggingInterceptor(logger: nil)])
        let response = try await client.response(for: ObservabilityFixtures.secretRequest(policy: .safe))
        let request = try #require(response.context.requestRecord)
        #expect(request.requestID == response.context.requestID)
        #expect(request.method == "POST")
        #expect(request.pathTemplate == "/users/{id}/login")
        #expect(request.url == "https://api.example.com/users/42/login?access_token=<redacted>&page=1")
        #expect(request.body == nil, "safe policy: metadata only")
        #expect(request.bodySize == 46)
        #expect(request.attempt == 1)
        let snapshot = try #require(response.context.responseRecord)
        #expect(snapshot.statusCode == 201)
        #expect(snapshot.bodySize == 9)
        #expect(snapshot.body == nil)
        #expect(snapshot.duration >= .zero)
        #expect(response.context.errorRecord == nil)
    }

    @Test func debugSafeAddsRedactedBodies() async throws {
        let stub = StubTransport { _ in .json(#"{"access_token":"SECRET-NEW","expires_in":3600}"#) }
        let client = try ObservabilityFixtures.makeClient(transport: stub, interceptors: [LoggingInterceptor(logger: nil)])
        let response = try await client.response(for: ObservabilityFixtures.secretRequest(policy: .debugSafe))
        #expect(response.context.requestRecord?.body?.text == #"{"user":{"name":"ann","password":"<redacted>"}}"#)
        #expect(response.context.responseRecord?.body?.text == #"{"access_token":"<redacted>","expires_in":3600}"#)
    }

    @Test(arguments: [
        (LoggingPolicy.disabled, LoggingPolicy.debugSafe, 0, false),
        (.safe, .debugSafe, 2, false),
        (.debugSafe, .debugSafe, 2, true),
        (.debugSafe, .safe, 2, false),
        (.debugSafe, .disabled, 0, false),
    ])
    func policyAndCapDecideWhatIsLogged(policy: LoggingPolicy, cap: LoggingPolicy, entries: Int, bodies: Bool) async throws {
        let logger = CapturingNetworkLogger()
        let stub = StubTransport { _ in .json(#"{"ok":true}"#) }
        let client = try ObservabilityFixtures.makeClient(
            transport: stub, interceptors: [LoggingInterceptor(logger: logger, maximumDetail: cap)])
        let response = try await client.response(for: ObservabilityFixtures.secretRequest(policy: policy))
        #expect(logger.entries.count == entries)
        #expect(logger.lines.contains { $0.hasPrefix("body: {") } == bodies)
        #expect((response.context.requestRecord == nil) == (entries == 0))
        #expect(!logger.text.contains("SECRET-"))
    }

    @Test func infoLevelWritesOneLinePerCallWithoutHeaders() async throws {
        let logger = CapturingNetworkLogger(minimumLevel: .info)
        let stub = StubTransport { _ in .json(#"{"ok":true}"#) }
        let client = try ObservabilityFixtures.makeClient(transport: stub, interceptors: [LoggingInterceptor(logger: logger)])
        _ = try await client.response(for: ObservabilityFixtures.secretRequest())
        #expect(logger.entries.count == 1)
        let entry = try #require(logger.entries.first)
        #expect(entry.event == .response)
        #expect(entry.level == .info)
        #expect(entry.summary.hasPrefix("← 200 POST /users/{id}/login "))
        #expect(entry.details == ["POST https://api.example.com/users/42/login?access_token=<redacted>&page=1"])
    }

    @Test(arguments: [(200, NetworkLogLevel.info), (304, .info), (404, .notice), (429, .notice), (503, .error)])
    func responseLevelFollowsTheStatus(status: Int, level: NetworkLogLevel) async throws {
        let logger = CapturingNetworkLogger()
        let stub = StubTransport { _ in .status(status) }
        let client = try ObservabilityFixtures.makeClient(transport: stub, interceptors: [LoggingInterceptor(logger: logger)])
        _ = try? await client.send(Request<HTTPResponse>.raw(.get, "/x"))
        #expect(logger.entries.map(\.event) == [.request, .response])
        #expect(logger.entries.last?.level == level)
    }

    @Test func failuresAreLoggedAndRecorded() async throws {
        let logger = CapturingNetworkLogger()
        let har = HARRecorder()
        let stub = StubTransport(responses: [.failure(URLError(.notConnectedToInternet))])
        let client = try ObservabilityFixtures.makeClient(
            transport: stub, interceptors: [LoggingInterceptor(logger: logger, recorders: [har])])
        let context = RequestContext(method: .post, pathTemplate: "/users/{id}/login")
        await #expect(throws: NetworkError.self) {
            try await client.response(for: ObservabilityFixtures.secretRequest(), context: context)
        }
        let error = try #require(context.errorRecord)
        #expect(error.kind == "offline")
        #expect(error.code == URLError.Code.notConnectedToInternet.rawValue)
        #expect(error.domain == NSURLErrorDomain)
        let entry = try #require(logger.entries.last)
        #expect(entry.event == .failure)
        #expect(entry.level == .error)
        #expect(entry.summary.contains("✗ POST /users/{id}/login offline (-1009)"))
        #expect(har.exchanges.first?.error == error)
    }

    @Test func placedInnermostItLogsEveryAttemptWithTheHeadersSent() async throws {
        let logger = CapturingNetworkLogger()
        let stub = StubTransport(responses: [.status(503), .json("{}")])
        let client = try ObservabilityFixtures.makeClient(
            transport: stub,
            interceptors: [
                LoggingInterceptor(logger: logger),  // per call
                ObservabilityFixtures.OneRetryOn503(),
                ObservabilityFixtures.AddHeader(name: "Authorization", value: "Bearer SECRET-INNER"),
                LoggingInterceptor(logger: logger),  // per attempt
            ])
        let response = try await client.response(
            for: Request<HTTPResponse>.raw(.get, "/items").policy(
                EndpointPolicy.standard.with(\.logging, .debugSafe)))
        let requests = logger.entries.filter { $0.event == .request }
        #expect(requests.count == 3)  // call + 2 attempts
        #expect(requests.map { $0.summary.contains("attempt 2") } == [false, false, true])
        let responses = logger.entries.filter { $0.event == .response }
        #expect(responses.map { $0.summary.hasPrefix("← 503") || $0.summary.hasPrefix("← 200") } == [true, true, true])
        #expect(responses.last?.summary.contains("after 1 retry") == true)
        #expect(logger.text.contains("Authorization: Bearer <redacted>"))
        #expect(!logger.text.contains("SECRET-"))
        #expect(response.context.retryCount == 1)
    }
}
