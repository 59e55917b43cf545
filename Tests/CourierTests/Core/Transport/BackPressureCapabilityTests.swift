import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Stream back-pressure follows canSuspendTasks (both branches run on Linux)")
struct BackPressureCapabilityTests {
    @Test("a task that can pause is suspended at the bound and resumed once the consumer drained half")
    func suspendsAndResumes() async throws {
        let capabilities = TransportFixtures.capabilities(.foundationNetworking) { $0.canSuspendTasks = true }
        let delegate = TransportSessionDelegate(capabilities: capabilities, serverTrust: NoServerTrustEvaluator())
        let task = FakeTransportTask(1, in: delegate)
        async let head = delegate.stream(task, limit: 100)
        try await task.waitFor("resume")
        delegate.deliverHead(1, try TransportFixtures.response(200))
        let response = try await head
        let body = response.body

        delegate.receive(1, Data(repeating: 1, count: 60))
        #expect(task.commands == ["resume"])
        delegate.receive(1, Data(repeating: 2, count: 60))
        #expect(task.commands == ["resume", "suspend"], "120 of 100 bytes held: the transfer pauses")

        var chunks = body.makeAsyncIterator()
        #expect(try await chunks.next() == Data(repeating: 1, count: 60))
        #expect(task.commands == ["resume", "suspend"], "60 held: above half the bound")
        #expect(try await chunks.next() == Data(repeating: 2, count: 60))
        #expect(task.commands == ["resume", "suspend", "resume"])

        delegate.complete(1, error: nil, response: try TransportFixtures.response(200))
        #expect(try await chunks.next() == nil)
        #expect(!task.commands.contains("cancel"))
    }

    @Test("a task that cannot pause is never suspended: the body fails at the bound and the task is cancelled")
    func failsAndCancels() async throws {
        let delegate = TransportSessionDelegate(capabilities: .foundationNetworking, serverTrust: NoServerTrustEvaluator())
        let task = FakeTransportTask(2, in: delegate)
        async let head = delegate.stream(task, limit: 100)
        try await task.waitFor("resume")
        delegate.deliverHead(2, try TransportFixtures.response(200))
        let response = try await head
        let body = response.body

        delegate.receive(2, Data(count: 60))
        delegate.receive(2, Data(count: 60))
        try await task.waitFor("cancel")
        #expect(!task.commands.contains("suspend"))
        var chunks = body.makeAsyncIterator()
        await #expect(throws: NetworkError.streamBufferOverflow(limit: 100)) { try await chunks.next() }
    }
}
