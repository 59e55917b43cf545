import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

/// The info-level summary line is written without building records: the secrets it must not show
/// are learned from the header fields as the request and response hold them.
@Suite struct SummaryLineRedactionTests {
    @Test func aSecretLearnedFromAHeaderReachesNoSummaryLine() async throws {
        let logger = CapturingNetworkLogger(minimumLevel: .info)
        let client = APIClient(environment: CoreFixture.environment) {
            $0.transport = StubTransport { request in
                // With its URL, as every transport's response has it.
                var response = HTTPResponse.json("{}", headers: ["Set-Cookie": "refresh=REFRESH-VALUE-88; Path=/; HttpOnly"])
                response.url = request.url
                return response
            }
            $0.interceptors = .standard(logger: logger, retry: RetryInterceptor(clock: TestClock()))
        }
        // Each secret also sits in the path of a call without a template, and in its URL.
        let secrets = ["SECRET-TOKEN-9f2c", "SESSION-VALUE-77", "API-KEY-VALUE-55", "REFRESH-VALUE-88"]
        let request = Request<Data>.get(
            "/tokens/\(secrets.joined(separator: "/"))",
            headers: [
                "Authorization": "Bearer SECRET-TOKEN-9f2c", "Cookie": "sid=SESSION-VALUE-77; lang=en",
                "X-API-Key": "API-KEY-VALUE-55",
            ])

        _ = try await client.send(request)

        #expect(logger.entries.map(\.event) == [.response])
        let summary = try #require(logger.entries.first?.summary)
        #expect(summary.contains("/tokens/<redacted>/<redacted>/<redacted>/<redacted> "), "\(summary)")
        for secret in secrets { #expect(!logger.text.contains(secret), "\(logger.text)") }
    }

    /// A response without a URL (a custom transport's, a stub's) is logged with its request's URL:
    /// scrubbed of what the response taught too, at info level (summary) and at debug level
    /// (records). It was scrubbed only of what the request knew, so a `Set-Cookie` value that also
    /// sat in the request's path showed in clear.
    @Test(arguments: [NetworkLogLevel.info, .debug])
    func aSecretTheResponseTaughtIsScrubbedFromTheRequestsURLItFallsBackTo(level: NetworkLogLevel) async throws {
        let logger = CapturingNetworkLogger(minimumLevel: level)
        let client = APIClient(environment: CoreFixture.environment) {
            $0.transport = StubTransport { _ in
                var response = HTTPResponse.json("{}", headers: ["Set-Cookie": "refresh=REFRESH-VALUE-88; Path=/; HttpOnly"])
                response.url = nil
                return response
            }
            $0.interceptors = .standard(logger: logger, retry: RetryInterceptor(clock: TestClock()))
        }

        _ = try await client.send(Request<Data>.get("/tokens/REFRESH-VALUE-88"))

        // The request's own line came before anyone knew the value was a secret; the response's
        // lines come after.
        let response = try #require(logger.entries.first { $0.event == .response })
        #expect(response.text.contains("/tokens/<redacted>"), "\(response.text)")
        #expect(!response.text.contains("REFRESH-VALUE-88"), "\(response.text)")
    }
}
