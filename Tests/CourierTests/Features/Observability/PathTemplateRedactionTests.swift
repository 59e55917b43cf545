import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

/// The name a call goes by in logs, metrics, events and HAR files when its endpoint gives no
/// `pathTemplate`: never a query, fragment or user info of the path (a pre-signed URL's signature).
@Suite struct PathTemplateRedactionTests {
    @Test func anAbsoluteURLsSecretsReachNoLogMetricOrHARFile() async throws {
        let logger = CapturingNetworkLogger(minimumLevel: .info)
        let metrics = CapturingMetricsSink()
        let har = HARRecorder()
        let stub = StubTransport(responses: [.json(#"{"id":1,"name":"a"}"#)])
        let client = APIClient(environment: CoreFixture.environment) {
            $0.transport = stub
            $0.interceptors = .standard(
                logger: logger, recorders: [har], metrics: metrics, retry: RetryInterceptor(clock: TestClock()))
        }
        let url = try #require(
            URL(
                string: "https://user:pwSECRET@bucket.s3.example.test/o?X-Amz-Credential=AKIASECRET1234"
                    + "&X-Amz-Signature=sigSECRET5678#access_token=fragSECRET"))
        let _: CoreFixture.Item = try await client.get(url)
        #expect(!logger.text.contains("SECRET"))
        #expect(metrics.events.map(\.pathTemplate) == ["https://bucket.s3.example.test/o"])
        #expect(!String(decoding: try har.jsonData(), as: UTF8.self).contains("SECRET"))
    }

    @Test func aSecretInThePathOfACallWithoutATemplateReachesNoLogOrHARFile() async throws {
        let logger = CapturingNetworkLogger(minimumLevel: .info)
        let har = HARRecorder()
        let fixtures = HARFixtureRecorder()
        let metrics = CapturingMetricsSink()
        let client = APIClient(environment: CoreFixture.environment) {
            $0.transport = StubTransport { _ in .status(204) }
            $0.interceptors = .standard(
                logger: logger, recorders: [har], metrics: metrics, retry: RetryInterceptor(clock: TestClock()))
            $0.interceptors.append(fixtures)
        }
        // Revoking the token the call is authorised with, by path (RFC 7009 style).
        try await client.send(
            Request<Void>(
                method: .delete, path: "/tokens/SECRET-TOKEN-9f2c", headers: ["Authorization": "Bearer SECRET-TOKEN-9f2c"]))
        #expect(!logger.text.isEmpty)
        #expect(!logger.text.contains("SECRET-TOKEN"), "\(logger.text)")
        #expect(!String(decoding: try har.jsonData(), as: UTF8.self).contains("SECRET-TOKEN"))
        #expect(!String(decoding: try fixtures.jsonData(), as: UTF8.self).contains("SECRET-TOKEN"))
        #expect(metrics.events.map(\.pathTemplate) == ["/tokens/{id}"])
    }

    /// The info-level summary lines — a response line with no recorder to feed, a streamed body's
    /// end — are written without building records, and showed the path as it was while the
    /// records hid it: a reset token in the path, sent again as `?token=`.
    @Test func aSecretInThePathReachesNoSummaryLineWrittenWithoutRecords() async throws {
        let logger = CapturingNetworkLogger(minimumLevel: .info)
        let client = APIClient(environment: CoreFixture.environment) {
            $0.transport = StubTransport { _ in
                let chunks = AsyncStream<Data> {
                    $0.yield(Data("{}".utf8))
                    $0.finish()
                }
                return HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: MessageBody(chunks))
            }
            $0.interceptors = .standard(logger: logger, retry: RetryInterceptor(clock: TestClock()))
        }
        let reset = Request<Data>.get("/password-resets/resetSECRETtoken", query: ["token": "resetSECRETtoken"])
        _ = try await client.send(reset)
        let streamed = try await client.stream(reset)
        for try await _ in streamed.body {}
        #expect(logger.entries.map(\.event) == [.response, .bodyEnd, .response, .bodyEnd])
        #expect(logger.entries.allSatisfy { $0.summary.contains("/password-resets/<redacted> ") }, "\(logger.text)")
        #expect(!logger.text.contains("resetSECRETtoken"), "\(logger.text)")
    }

    /// Metrics name a call without a template by its path with the identifiers taken out: one
    /// series per route, and no account number, e-mail address or token in the metrics backend.
    @Test(arguments: [
        ("/users/42/orders/3F2504E0-4F89-11D3-9A0C-0305E82C3301", "/users/{id}/orders/{id}"),
        ("/people/alice%40example.com/avatar", "/people/{id}/avatar"), ("/reports/2026", "/reports/{id}"),
        ("https://h.example:8443/files/9f86d081884c7d65", "https://h.example:8443/files/{id}"),
        ("/articles/how-to-configure-your-account-settings", "/articles/{id}"),
        ("/v2/items", "/v2/items"), ("/oauth2/token", "/oauth2/token"), ("/items/{id}", "/items/{id}"),
        ("https://h.example:8443", "https://h.example:8443"), ("/", "/"), ("", ""),
    ])
    func metricsTakeIdentifiersOutOfThePath(template: String, scrubbed: String) {
        #expect(MetricsPathTemplate.scrubbing(template) == scrubbed)
    }

    @Test func aMetricsEventOfACallWithoutATemplateCarriesNoIdentifier() async throws {
        let metrics = CapturingMetricsSink()
        let client = APIClient(environment: CoreFixture.environment) {
            $0.transport = StubTransport { _ in .status(204) }
            $0.interceptors = .standard(metrics: metrics, retry: RetryInterceptor(clock: TestClock()))
        }
        try await client.send(Request<Void>.get("/accounts/DE89370400440532013000/statements/2026-11"))
        var templated = Request<Void>.get("/accounts/DE89370400440532013000")
        templated.pathTemplate = "/accounts/{iban}"
        try await client.send(templated)
        #expect(metrics.events.map(\.pathTemplate) == ["/accounts/{id}/statements/{id}", "/accounts/{iban}"])
    }

    @Test(arguments: [
        ("/items/7?token=t#x", "/items/7"), ("/items/7", "/items/7"),
        ("https://u:p@h.example:8443/a/b?q=1", "https://h.example:8443/a/b"), ("http://h.example", "http://h.example"),
    ])
    func theDefaultTemplateKeepsOnlySchemeHostPortAndPath(path: String, template: String) {
        #expect(Request<Void>.defaultPathTemplate(for: path) == template)
    }
}
