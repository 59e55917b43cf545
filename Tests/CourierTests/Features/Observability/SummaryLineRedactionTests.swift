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
}
