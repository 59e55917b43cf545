import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

@Suite("A request's own response check runs before decoding")
struct CheckResponseTests {
    struct StaleCatalog: Error {}

    @Test("a check that throws fails the call as a validator rejection; one that passes lets it decode")
    func throwsOrPasses() async throws {
        let stub = StubTransport { request in
            let version = request.url?.lastPathComponent == "new" ? "3" : "2"
            return .json(#"{"id":1,"name":"A"}"#, headers: ["X-Catalog-Version": version])
        }
        let client = CoreFixture.client(stub)
        func catalog(_ path: String) -> Request<CoreFixture.Item> {
            Request<CoreFixture.Item>.get(path).checkResponse { response in
                guard response.headers["X-Catalog-Version"] == "3" else { throw StaleCatalog() }
            }
        }
        #expect(try await client.send(catalog("/catalog/new")).id == 1)
        let error = await CoreFixture.networkError { try await client.send(catalog("/catalog/old")) }
        guard case .decoding(let failure)? = error else {
            Issue.record("expected a decoding failure, got \(String(describing: error))")
            return
        }
        #expect(failure.kind == .rejectedByValidator)
        #expect(stub.requestCount == 2)  // the check never retries
    }

    @Test("a NetworkError from the check reaches the caller as it is; unaccepted statuses never reach the check")
    func networkErrorsAndStatuses() async throws {
        let stub = StubTransport(responses: [.json(#"{"error":"busy"}"#), .status(404)])
        let client = CoreFixture.client(stub)
        let checked = Locked(0)
        let request = Request<Void>.get("/x").checkResponse { response in
            checked.withLock { $0 += 1 }
            if response.data.starts(with: Data(#"{"error""#.utf8)) { throw NetworkError.invalidRequest("API error in a 200") }
        }
        let first = await CoreFixture.networkError { try await client.send(request) }
        #expect(first == .invalidRequest("API error in a 200"))
        let second = await CoreFixture.networkError { try await client.send(request) }
        #expect(second?.statusCode == 404)
        #expect(checked.current == 1)
    }
}
