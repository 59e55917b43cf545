import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CoreTests {
    /// Per-call options: `minimumDuration` holds a fast result back, `expecting(_:)` names the accepted statuses.
    @Suite struct CallOptions {
        @Test func minimumDurationHoldsAFastResultBack() async throws {
            let clock = TestClock(mode: .manual)
            let stub = StubTransport(responses: [.status(204), .status(500)])
            let client = StandardClientFixture.client(stub) { $0.clock = clock }
            let policy = EndpointPolicy.standard.with(\.minimumDuration, .seconds(2)).with(\.retry, .none)
            let success = Task { try await client.send(Request<Void>.post("/login", policy: policy)) }
            try await clock.waitForSleepers(count: 2)  // the deadline and the hold
            #expect(stub.requestCount == 1)
            clock.advance(by: .seconds(2))
            try await success.value
            let failure = Task { try await client.send(Request<Void>.post("/login", policy: policy)) }
            try await clock.waitForSleepers(count: 2)
            clock.advance(by: .seconds(2))
            let result = await failure.result
            #expect(throws: NetworkError.self) { try result.get() }
            let holds = clock.sleeps.filter { $0 < .seconds(60) }
            #expect(holds.count == 2)
            #expect(holds.allSatisfy { $0 > .milliseconds(1500) && $0 <= .seconds(2) })
        }

        @Test func expectingAcceptsExactlyTheGivenStatuses() async throws {
            let stub = StubTransport(responses: [.status(202), .status(200)])
            let client = StandardClientFixture.client(stub)
            try await client.send(Request<Void>.post("/jobs").expecting(202))
            let error = await #expect(throws: NetworkError.self) {
                try await client.send(Request<Void>.post("/jobs").expecting(202))
            }
            #expect(error?.statusCode == 200)
        }
    }
}
