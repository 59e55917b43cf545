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
        async let head = delegate.stream(task, options: StreamingOptions(bufferLimit: 100))
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
        async let head = delegate.stream(task, options: StreamingOptions(bufferLimit: 100))
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

    @Test("a task that can pause pauses at pausingBufferLimit; one that cannot keeps bufferLimit", arguments: [true, false])
    func pausingBufferLimitAppliesOnlyWhereTheTaskPauses(canSuspend: Bool) async throws {
        var options = StreamingOptions(bufferLimit: 1000)
        options.pausingBufferLimit = 100
        #expect(options.bufferLimit(pausing: canSuspend) == (canSuspend ? 100 : 1000))

        let delegate = TransportSessionDelegate(
            capabilities: TransportFixtures.capabilities(.foundationNetworking) { $0.canSuspendTasks = canSuspend },
            serverTrust: NoServerTrustEvaluator())
        let task = FakeTransportTask(6, in: delegate)
        async let head = delegate.stream(task, options: options)
        try await task.waitFor("resume")
        delegate.deliverHead(6, try TransportFixtures.response(200))
        let body = try await head.body
        delegate.receive(6, Data(count: 120))
        // 120 bytes held: over the pausing bound of 100, under the bound of 1000 of a task that cannot pause.
        #expect(task.commands == (canSuspend ? ["resume", "suspend"] : ["resume"]))
        #expect(body.streamBuffer?.limit == (canSuspend ? 100 : 1000))
        body.streamBuffer?.cancel()
    }

    /// Options of a consumer that drains continuously (a download), at a 100-byte bound.
    private static var drainingOptions: StreamingOptions {
        var options = StreamingOptions(bufferLimit: 100)
        options.drainsContinuously = true
        return options
    }

    /// Waits (at most 5 s) until `condition` holds.
    private static func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(condition())
    }

    @Test("a task that cannot pause, whose consumer drains continuously, holds its delivery at the bound until a chunk is read")
    func holdsDeliveryWhenTheConsumerDrains() async throws {
        // A hold that never times out here: the test decides when the consumer reads.
        let delegate = TransportSessionDelegate(
            capabilities: .foundationNetworking, serverTrust: NoServerTrustEvaluator(), maxHold: 3600,
            holdBudgetPerSecond: 3600)
        let task = FakeTransportTask(3, in: delegate)
        async let head = delegate.stream(task, options: Self.drainingOptions)
        try await task.waitFor("resume")
        delegate.deliverHead(3, try TransportFixtures.response(200))
        let body = try await head.body
        let buffer = try #require(body.streamBuffer)

        delegate.receive(3, Data(repeating: 1, count: 60))
        // The chunk that reaches the bound: its delivering thread (the delegate queue's) waits.
        let delivered = Locked(false)
        DispatchQueue(label: "test.delegate-queue").async {
            delegate.receive(3, Data(repeating: 2, count: 60))
            delivered.withLock { $0 = true }
        }
        try await Self.waitUntil { buffer.isPaused }
        #expect(!delivered.current, "120 of 100 bytes held: the delivery waits")

        var chunks = body.makeAsyncIterator()
        #expect(try await chunks.next() == Data(repeating: 1, count: 60))
        try await Self.waitUntil { delivered.current }  // 60 held: below the bound, the delivery goes on
        #expect(try await chunks.next() == Data(repeating: 2, count: 60))

        delegate.complete(3, error: nil, response: try TransportFixtures.response(200))
        #expect(try await chunks.next() == nil)
        #expect(task.commands == ["resume"], "never suspended (that re-sends the request), never cancelled")
        #expect(buffer.peakBufferedByteCount == 120)
    }

    @Test("a consumer that goes away releases a held delivery and cancels the task")
    func droppedConsumerReleasesTheHold() async throws {
        let delegate = TransportSessionDelegate(
            capabilities: .foundationNetworking, serverTrust: NoServerTrustEvaluator(), maxHold: 3600,
            holdBudgetPerSecond: 3600)
        let task = FakeTransportTask(4, in: delegate)
        async let head = delegate.stream(task, options: Self.drainingOptions)
        try await task.waitFor("resume")
        delegate.deliverHead(4, try TransportFixtures.response(200))
        let body = try await head.body
        let buffer = try #require(body.streamBuffer)

        let delivered = Locked(false)
        DispatchQueue(label: "test.delegate-queue").async {
            delegate.receive(4, Data(count: 120))
            delivered.withLock { $0 = true }
        }
        try await Self.waitUntil { buffer.isPaused }
        buffer.cancel()
        try await Self.waitUntil { delivered.current }
        try await task.waitFor("cancel")
    }

    @Test("without a consumer that drains continuously, a task that cannot pause still fails at the bound")
    func appConsumersStillOverflow() async throws {
        let delegate = TransportSessionDelegate(capabilities: .foundationNetworking, serverTrust: NoServerTrustEvaluator())
        let task = FakeTransportTask(5, in: delegate)
        async let head = delegate.stream(task, options: StreamingOptions(bufferLimit: 100))
        try await task.waitFor("resume")
        delegate.deliverHead(5, try TransportFixtures.response(200))
        let body = try await head.body
        delegate.receive(5, Data(count: 120))  // returns at once: nothing holds
        try await task.waitFor("cancel")
        var chunks = body.makeAsyncIterator()
        await #expect(throws: NetworkError.streamBufferOverflow(limit: 100)) { try await chunks.next() }
    }

    @Test("a hold that outlasts maxHold fails the body at the bound and cancels the task")
    func holdsEndAfterMaxHold() async throws {
        let delegate = TransportSessionDelegate(
            capabilities: .foundationNetworking, serverTrust: NoServerTrustEvaluator(), maxHold: 0.05)
        let task = FakeTransportTask(6, in: delegate)
        async let head = delegate.stream(task, options: Self.drainingOptions)
        try await task.waitFor("resume")
        delegate.deliverHead(6, try TransportFixtures.response(200))
        let body = try await head.body
        DispatchQueue(label: "test.delegate-queue").async { delegate.receive(6, Data(count: 120)) }  // nobody reads
        try await task.waitFor("cancel")
        var chunks = body.makeAsyncIterator()
        await #expect(throws: NetworkError.streamBufferOverflow(limit: 100)) { try await chunks.next() }
    }

    @Test("a hold that outlasts maxHold is given up: the buffer grows up to bufferLimit, holds resume once drained to half")
    func aHoldGivenUpLetsTheBufferAbsorbUpToTheHardBound() async throws {
        let delegate = TransportSessionDelegate(
            capabilities: .foundationNetworking, serverTrust: NoServerTrustEvaluator(), maxHold: 0.05)
        let task = FakeTransportTask(7, in: delegate)
        var options = StreamingOptions(bufferLimit: 1000)
        options.pausingBufferLimit = 100
        options.drainsContinuously = true
        async let head = delegate.stream(task, options: options)
        try await task.waitFor("resume")
        delegate.deliverHead(7, try TransportFixtures.response(200))
        let body = try await head.body
        let buffer = try #require(body.streamBuffer)
        #expect(buffer.limit == 100)
        let isGivenUp = { delegate.streams.withLock { $0[7]?.hold?.isGivenUp ?? false } }

        // Nobody reads for longer than one hold: the delivery goes on, and nothing is cancelled.
        let delivered = Locked(false)
        DispatchQueue(label: "test.delegate-queue").async {
            delegate.receive(7, Data(repeating: 1, count: 120))
            delivered.withLock { $0 = true }
        }
        try await Self.waitUntil { delivered.current }
        #expect(isGivenUp())
        delegate.receive(7, Data(repeating: 2, count: 500))  // returns at once: 620 of 1000 bytes
        #expect(buffer.bufferedByteCount == 620)
        #expect(!task.commands.contains("cancel"))

        // Drained to half the hold bound: holds are made again.
        var chunks = body.makeAsyncIterator()
        #expect(try await chunks.next() == Data(repeating: 1, count: 120))
        #expect(isGivenUp(), "500 bytes held: above half the bound")
        #expect(try await chunks.next() == Data(repeating: 2, count: 500))
        #expect(!isGivenUp())

        // Given up again, then past the hard bound: the body fails there and the task is cancelled.
        DispatchQueue(label: "test.delegate-queue").async { delegate.receive(7, Data(count: 120)) }
        try await Self.waitUntil { isGivenUp() }
        delegate.receive(7, Data(count: 900))
        try await task.waitFor("cancel")
        await #expect(throws: NetworkError.streamBufferOverflow(limit: 1000)) { try await chunks.next() }
        #expect(!task.commands.contains("suspend"))
    }

    @Test("a consumer whose task is cancelled stops at once, even while chunks are waiting in the buffer")
    func aCancelledConsumerStopsWithChunksBuffered() async throws {
        let producerStopped = Locked(false)
        let buffer = StreamBuffer(limit: 1000, pausesProducer: true) { producerStopped.withLock { $0 = true } }
        buffer.append(Data(count: 10))
        buffer.append(Data(count: 10))
        let outcome = await Task { () -> String in
            withUnsafeCurrentTask { $0?.cancel() }
            do {
                _ = try await buffer.next()
                return "a chunk"
            } catch NetworkError.cancelled {
                return "cancelled"
            } catch {
                return "\(error)"
            }
        }.value
        #expect(outcome == "cancelled")
        #expect(producerStopped.current, "the transfer is cancelled too")
    }
}
