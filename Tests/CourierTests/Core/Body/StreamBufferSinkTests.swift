import Foundation
import Testing
@testable import Courier

@Suite("Stream buffer: a consumer's sink takes the chunks on the producer's thread")
struct StreamBufferSinkTests {
    private struct SinkFull: Error {}

    /// What a sink was given, and whether it was ever entered twice at once.
    private final class Received: Sendable {
        private let state = Locked((chunks: [Data](), inside: 0, overlapped: false))
        func take(_ chunk: Data) {
            state.withLock {
                $0.inside += 1
                $0.overlapped = $0.overlapped || $0.inside > 1
                $0.chunks.append(chunk)
                $0.inside -= 1
            }
        }
        var chunks: [Data] { state.withLock { $0.chunks } }
        var overlapped: Bool { state.withLock { $0.overlapped } }
    }

    private final class Counter: Sendable {
        let value = Locked(0)
        func increment() { value.withLock { $0 += 1 } }
        var count: Int { value.current }
    }

    /// Waits (at most 5 s) until `buffer` hands chunks to a sink.
    private static func waitForSink(_ buffer: StreamBuffer) async throws {
        for _ in 0..<5000 where !buffer.hasSink { try await Task.sleep(for: .milliseconds(1)) }
        try #require(buffer.hasSink)
    }

    @Test("chunks buffered before are drained first; later ones reach the sink inside append, in order")
    func bufferedThenPushed() async throws {
        let buffer = StreamBuffer(limit: 1000, pausesProducer: true, deliversToSinks: true) {}
        let received = Received()
        buffer.append(Data([1]))
        buffer.append(Data([2]))
        let consumer = Task { try await buffer.deliver { received.take($0) } }
        try await Self.waitForSink(buffer)
        #expect(received.chunks == [Data([1]), Data([2])])
        #expect(buffer.append(Data([3])) == .more)
        #expect(received.chunks == [Data([1]), Data([2]), Data([3])])  // taken before append returned
        #expect(buffer.bufferedByteCount == 0)
        buffer.finish()
        try await consumer.value
        #expect(!received.overlapped)
    }

    @Test("a producer paused by a full buffer is resumed once the sink took the buffered chunks")
    func pausedProducerResumes() async throws {
        let resumes = Counter()
        let buffer = StreamBuffer(limit: 100, pausesProducer: true, deliversToSinks: true) {}
        buffer.setOnResume { resumes.increment() }
        #expect(buffer.append(Data(count: 60)) == .more)
        #expect(buffer.append(Data(count: 60)) == .pause)
        let received = Received()
        let consumer = Task { try await buffer.deliver { received.take($0) } }
        try await Self.waitForSink(buffer)
        #expect(resumes.count == 1)
        #expect(buffer.append(Data(count: 500)) == .more)  // never paused again: nothing is held
        buffer.finish()
        try await consumer.value
        #expect(received.chunks.map(\.count) == [60, 60, 500])
    }

    @Test("a sink that throws ends the body, cancels the transfer once, and its error reaches the caller")
    func throwingSinkCancels() async throws {
        let cancels = Counter()
        let buffer = StreamBuffer(limit: 1000, pausesProducer: true, deliversToSinks: true) { cancels.increment() }
        let received = Received()
        let consumer = Task {
            try await buffer.deliver { chunk in
                guard chunk != Data([2]) else { throw SinkFull() }
                received.take(chunk)
            }
        }
        try await Self.waitForSink(buffer)
        buffer.append(Data([1]))
        buffer.append(Data([2]))
        buffer.append(Data([3]))  // after the end: dropped
        await #expect(throws: SinkFull.self) { try await consumer.value }
        #expect(cancels.count == 1)
        #expect(received.chunks == [Data([1])])
    }

    @Test("a body that ends while the producer is inside the sink is reported only after the sink returned")
    func endWaitsForTheRunningSink() async throws {
        let buffer = StreamBuffer(limit: 1000, pausesProducer: true, deliversToSinks: true) {}
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let returned = Locked(false)
        let consumer = Task {
            defer { returned.set(true) }
            try await buffer.deliver { _ in
                entered.signal()
                // A bound only: the test signals it. Short, it ran out on a loaded machine before
                // the test looked (the test's task waited more than 5 s for a thread).
                _ = proceed.wait(timeout: .now() + 60)
            }
        }
        try await Self.waitForSink(buffer)
        let producer = Thread { buffer.append(Data([1])) }
        producer.start()
        // Polled: a pool thread never waits on the semaphore.
        var inside = false
        let start = ContinuousClock.now
        while !inside, ContinuousClock.now - start < .seconds(30) {
            inside = entered.wait(timeout: .now()) == .success
            if !inside { try await Task.sleep(for: .milliseconds(1)) }
        }
        try #require(inside)
        buffer.abort(with: .timedOut(nil))  // a time limit, from outside both sides
        try await Task.sleep(for: .milliseconds(50))
        #expect(!returned.current)  // the sink still writes: the caller must not go on yet
        proceed.signal()
        await #expect(throws: NetworkError.timedOut(nil)) { try await consumer.value }
    }

    @Test("cancelling the delivering task cancels the transfer and reports cancellation")
    func cancellation() async throws {
        let cancels = Counter()
        let buffer = StreamBuffer(limit: 1000, pausesProducer: true, deliversToSinks: true) { cancels.increment() }
        let consumer = Task { try await buffer.deliver { _ in } }
        try await Self.waitForSink(buffer)
        consumer.cancel()
        await #expect(throws: NetworkError.cancelled) { try await consumer.value }
        #expect(cancels.count == 1)
    }

    @Test("where the producer allows no sink (libcurl's loop), the consumer's thread calls it")
    func producerWithoutSinks() async throws {
        let buffer = StreamBuffer(limit: 1000, pausesProducer: true) {}
        let received = Received()
        let consumer = Task { try await buffer.deliver { received.take($0) } }
        buffer.append(Data([1]))
        buffer.append(Data([2]))
        buffer.finish(throwing: URLError(.networkConnectionLost))
        #expect(!buffer.hasSink)
        await #expect(throws: NetworkError.self) { try await consumer.value }
        #expect(received.chunks == [Data([1]), Data([2])])
    }

    @Test("a counted and teed body pushed to a sink is counted and copied as when iterated")
    func wrappersSeeEveryPushedChunk() async throws {
        let buffer = StreamBuffer(limit: 1000, pausesProducer: true, deliversToSinks: true) {}
        let copied = Locked<Data?>(nil)
        let counted = Locked<(Int64, Bool)?>(nil)
        let body = MessageBody(buffer: buffer, length: .known(6))
            .teed(upTo: 100) { copied.set($0) }
            .counted { bytes, outcome in
                if case .completed = outcome { counted.set((bytes, true)) } else { counted.set((bytes, false)) }
            }
        let received = Received()
        let consumer = Task { try await body.push { received.take($0) } }
        try await Self.waitForSink(buffer)
        buffer.append(Data("abc".utf8))
        buffer.append(Data("def".utf8))
        buffer.finish()
        try await consumer.value
        #expect(received.chunks == [Data("abc".utf8), Data("def".utf8)])
        #expect(copied.current == Data("abcdef".utf8))
        #expect(counted.current?.0 == 6 && counted.current?.1 == true)
        await #expect(throws: MessageBodyError.alreadyIterated) { try await body.push { _ in } }
    }
}

@Suite("Stream buffer: a sink taken off the producer's thread")
struct StreamBufferSinkDetachTests {
    private final class Received: Sendable {
        let chunks = Locked<[Data]>([])
        func take(_ chunk: Data) { chunks.withLock { $0.append(chunk) } }
    }

    @Test("chunks go to the consumer's thread while the sink does not admit the producer's, then back")
    func detachAndReattach() async throws {
        let buffer = StreamBuffer(limit: 1000, pausesProducer: true, deliversToSinks: true) {}
        let admits = Locked(true)
        let received = Received()
        let consumer = Task {
            try await buffer.deliver(to: { received.take($0) }, admittingProducerThread: { admits.current })
        }
        for _ in 0..<5000 where !buffer.hasSink { try await Task.sleep(for: .milliseconds(1)) }
        try #require(buffer.hasSink)
        buffer.append(Data([1]))
        #expect(received.chunks.current == [Data([1])])  // on the producer's thread
        admits.set(false)
        buffer.append(Data([2]))
        #expect(!buffer.hasSink)  // buffered for the consumer's thread instead
        for _ in 0..<5000 where received.chunks.current.count < 2 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(received.chunks.current == [Data([1]), Data([2])])
        buffer.append(Data([3]))
        for _ in 0..<5000 where received.chunks.current.count < 3 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(!buffer.hasSink)
        admits.set(true)
        buffer.append(Data([4]))  // taken by the consumer, which then hands the sink back
        for _ in 0..<5000 where !buffer.hasSink { try await Task.sleep(for: .milliseconds(1)) }
        try #require(buffer.hasSink)
        buffer.append(Data([5]))
        #expect(received.chunks.current == [1, 2, 3, 4, 5].map { Data([$0]) })
        buffer.finish()
        try await consumer.value
    }
}

@Suite("Stream buffer: compacted chunks")
struct StreamBufferCompactionTests {
    @Test("a compacting buffer keeps a copy of a chunk kept beyond its bound, not the producer's storage")
    func waitingChunksAreCopied() async throws {
        let big = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0) })
        let slice = big[100..<612]
        let address: (Data) -> UnsafeRawPointer? = { data in data.withUnsafeBytes { $0.baseAddress } }
        for compacts in [true, false] {
            let buffer = StreamBuffer(limit: 100, pausesProducer: true, compactsChunks: compacts) {}
            buffer.append(slice)  // 512 bytes: reaches the bound, kept as it is
            buffer.append(slice)  // beyond the bound: compacted
            let first = try #require(try await buffer.next())
            let second = try #require(try await buffer.next())
            #expect(first == slice && second == slice)
            #expect(address(first) == address(slice))
            #expect((address(second) != address(slice)) == compacts)
        }
    }
}
