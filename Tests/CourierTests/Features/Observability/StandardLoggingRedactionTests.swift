import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

@Suite("The standard pipeline hands a custom redactor to its logging")
struct StandardLoggingRedactionTests {
    @Test func theStandardBuilderPassesACustomRedactorToLogging() async throws {
        let logger = CapturingNetworkLogger(minimumLevel: .debug)
        let redactor = Redactor(headers: RedactionList.defaultHeaders.union(["X-Tenant"]))
        let stub = StubTransport { _ in .status(200, body: "{}") }
        let client = StandardClientFixture.client(stub) { $0.interceptors = .standard(logger: logger, redactor: redactor) }
        _ = try await client.send(Request<Data>.get("/x", headers: ["X-Tenant": "acme-secret"]))
        let text = logger.text
        #expect(!text.contains("acme-secret"))
        #expect(text.contains("X-Tenant"))
    }
}
