import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

/// A transport from another package: it reports progress and timings through the public
/// task-local reporters, the way the built-in transports do.
private struct ReportingTransport: Transport {
    func send(_ request: URLRequest) async throws -> HTTPResponse {
        let reporter = TransportReporter.current

        reporter?.didSend(5, of: 10)
        reporter?.didSend(10, of: 10)
        reporter?.report(TaskTimings(total: .milliseconds(12), isReusedConnection: true, networkProtocol: "h2"))
        return HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
    }
}

@Suite("A third-party transport reports progress and timings through the public Transport contract")
struct ThirdPartyTransportContractTests {
    struct Empty: Decodable, Sendable {}

    @Test("its upload progress reaches the caller and its timings reach the context")
    func progressAndTimings() async throws {
        let environment = try APIEnvironment(name: "stub", baseURL: "https://api.example.test")
        let client = APIClient(environment: environment) {
            $0.transport = ReportingTransport()
            $0.interceptors = .standard(metrics: CapturingMetricsSink())
        }
        let upload = client.upload(
            Request<Empty>.post("/files", body: .data(Data(count: 10), contentType: "application/octet-stream")))
        var seen: [Int64] = []
        for await progress in upload.progress { seen.append(progress.completedBytes) }
        let response = try await upload.response
        #expect(seen.last == 10)
        #expect(response.context.taskTimings?.total == .milliseconds(12))
        #expect(response.context.taskTimings?.networkProtocol == "h2")
    }
}
