import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Authentication and server-trust challenges follow the capabilities (both branches run on Linux)")
struct DelegateChallengeTests {
    @Test("where a challenge ends the task, the delegate hands over the 401 and its body, then cancels the challenge")
    func challengeEndsTask() async throws {
        let delegate = TransportSessionDelegate(capabilities: .foundationNetworking, serverTrust: NoServerTrustEvaluator())
        let task = FakeTransportTask(1, in: delegate)
        async let call = delegate.run(task)
        try await task.waitFor("resume")
        delegate.receive(1, Data("sign in first".utf8))
        let challenge = TransportFixtures.basicChallenge(failure: try TransportFixtures.response(401))
        let (disposition, credential) = delegate.answer(challenge, taskID: 1)
        #expect(disposition == .cancelAuthenticationChallenge)
        #expect(credential == nil)
        let response = try await call
        #expect(response.statusCode == 401)
        #expect(response.data == Data("sign in first".utf8))
    }

    @Test("where default handling returns the 401 (Apple), the delegate leaves the call to complete normally")
    func defaultHandlingReturns401() async throws {
        let delegate = TransportSessionDelegate(capabilities: .apple, serverTrust: NoServerTrustEvaluator())
        let task = FakeTransportTask(2, in: delegate)
        async let call = delegate.run(task)
        try await task.waitFor("resume")
        let challenge = TransportFixtures.basicChallenge(failure: try TransportFixtures.response(401))
        #expect(delegate.answer(challenge, taskID: 2).0 == .performDefaultHandling)
        delegate.receive(2, Data("sign in first".utf8))
        delegate.complete(2, error: nil, response: try TransportFixtures.response(401))
        let response = try await call
        #expect(response.statusCode == 401)
        #expect(response.data == Data("sign in first".utf8))
    }

    @Test("a refused chain cancels the challenge and the call fails with the pin failure, not a cancellation")
    func refusedTrustFailsWithPinFailure() async throws {
        let delegate = TransportSessionDelegate(capabilities: .apple, serverTrust: FakeServerTrust(accepts: false))
        let task = FakeTransportTask(3, in: delegate)
        let policy = try TransportFixtures.policy()
        async let call = delegate.run(task, pinning: policy)
        try await task.waitFor("resume")
        let challenge = TransportFixtures.basicChallenge(failure: nil)
        #expect(delegate.answer(challenge, taskID: 3).0 == .cancelAuthenticationChallenge)
        delegate.complete(3, error: URLError(.cancelled), response: nil)
        do {
            _ = try await call
            Issue.record("a refused chain must fail the call")
        } catch let error as URLError {
            #expect(error.code != .cancelled)
            #expect(error.pinningFailure == .pinMismatch(host: "api.example.com", presented: ["AAAA"]))
        }
        #expect(delegate.taskOptions.current.isEmpty, "the task's registry entry is removed when it completes")
    }

    @Test("an accepted chain is answered with the evaluator's credential; an unpinned task gets no trust decision")
    func acceptedTrustUsesCredential() async throws {
        let delegate = TransportSessionDelegate(capabilities: .apple, serverTrust: FakeServerTrust(accepts: true))
        let pinned = FakeTransportTask(4, in: delegate)
        let unpinned = FakeTransportTask(5, in: delegate)
        async let first = delegate.run(pinned, pinning: try TransportFixtures.policy())
        async let second = delegate.run(unpinned)
        try await pinned.waitFor("resume")
        try await unpinned.waitFor("resume")
        let challenge = TransportFixtures.basicChallenge(failure: nil)
        let (disposition, credential) = delegate.answer(challenge, taskID: 4)
        #expect(disposition == .useCredential)
        #expect(credential?.user == "trust")
        #expect(delegate.answer(challenge, taskID: 5).0 == .performDefaultHandling)
        delegate.complete(4, error: nil, response: try TransportFixtures.response(204))
        delegate.complete(5, error: nil, response: try TransportFixtures.response(204))
        #expect(try await first.statusCode == 204)
        #expect(try await second.statusCode == 204)
    }
}
