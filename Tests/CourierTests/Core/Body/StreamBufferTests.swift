import Foundation
import Testing
@testable import Courier

@Suite("Stream buffer: bounded hand-over between transport and consumer")
struct StreamBufferTests {
    private final class Counter: Sendable {
        let value = Locked(0)
        func increment() { value.withLock { $0 += 1 } }
        var count: Int { value.current }
    }

    @Test("a producer that cannot pause fails the consumer at the bound and is cancelled once")
    func overflowFailsAndCancels() async throws {
        let cancels = Counter()
        let buffer = StreamBuffer(limit: 100, pausesProducer: false) { cancels.increment() }
        #expect(buffer.append(Data(count: 60)) == .more)
        #expect(buffer.append(Data(count: 60)) == .pause)
        #expect(buffer.append(Data(count: 10)) == .more)  // dropped: the body ended
        #expect(buffer.bufferedByteCount == 0)
        await #expect(throws: NetworkError.streamBufferOverflow(limit: 100)) { try await buffer.next() }
        #expect(cancels.count == 1)
    }

    @Test("with keepsBufferedOnOverflow, an overflow hands out the bytes received before it, then fails")
    func overflowKeepingHandsOutTheBufferedBytesFirst() async throws {
        let cancels = Counter()
        let buffer = StreamBuffer(limit: 100, pausesProducer: false, keepsBufferedOnOverflow: true) { cancels.increment() }
        #expect(buffer.append(Data(repeating: 1, count: 60)) == .more)
        #expect(buffer.append(Data(repeating: 2, count: 60)) == .pause)
        #expect(buffer.append(Data(count: 10)) == .more)  // dropped: the body ended
        #expect(cancels.count == 1)
        #expect(try await buffer.next() == Data(repeating: 1, count: 60))
        #expect(try await buffer.next() == Data(repeating: 2, count: 60))
        await #expect(throws: NetworkError.streamBufferOverflow(limit: 100)) { try await buffer.next() }
        #expect(cancels.count == 1)
    }

    @Test("a pausing producer is told to pause at the bound and resumed once drained to half")
    func pauseAndResume() async throws {
        let resumes = Counter()
        let buffer = StreamBuffer(limit: 100, pausesProducer: true) {}
        buffer.setOnResume { resumes.increment() }
        #expect(buffer.append(Data(repeating: 1, count: 40)) == .more)
        #expect(buffer.append(Data(repeating: 2, count: 40)) == .more)
        #expect(buffer.append(Data(repeating: 3, count: 40)) == .pause)
        #expect(buffer.bufferedByteCount == 120)
        #expect(try await buffer.next() == Data(repeating: 1, count: 40))
        #expect(resumes.count == 0)  // 80 held: above half the bound
        #expect(try await buffer.next() == Data(repeating: 2, count: 40))
        #expect(resumes.count == 1)
        buffer.finish()
        #expect(try await buffer.next() == Data(repeating: 3, count: 40))
        #expect(try await buffer.next() == nil)
    }

    @Test("a waiting consumer gets the next chunk directly, then the failure that ends the body")
    func waiterGetsChunksThenError() async throws {
        let buffer = StreamBuffer(limit: 1024, pausesProducer: false) {}
        let consumer = Task { () -> (Data?, NetworkError?) in
            let first = try await buffer.next()
            do {
                _ = try await buffer.next()
                return (first, nil)
            } catch let error as NetworkError {
                return (first, error)
            }
        }
        for _ in 0..<1000 where buffer.bufferedByteCount == 0 {
            buffer.append(Data([7]))
            await Task.yield()
            break
        }
        buffer.finish(throwing: URLError(.networkConnectionLost))
        let (first, error) = try await consumer.value
        #expect(first == Data([7]))
        #expect(error?.kind == .transport)
    }

    @Test("cancelling the consuming task cancels the transfer and reports cancellation")
    func taskCancellation() async throws {
        let cancels = Counter()
        let buffer = StreamBuffer(limit: 1024, pausesProducer: false) { cancels.increment() }
        let consumer = Task { try await buffer.next() }
        consumer.cancel()
        await #expect(throws: NetworkError.cancelled) { try await consumer.value }
        #expect(cancels.count == 1)
        #expect(buffer.append(Data([1])) == .more)  // ignored after the end
    }

    @Test("dropping the body's iterator before the end cancels the transfer")
    func droppedIteratorCancels() async throws {
        let cancels = Counter()
        let buffer = StreamBuffer(limit: 1024, pausesProducer: false) { cancels.increment() }
        buffer.append(Data([1, 2]))
        buffer.append(Data([3]))
        let body = MessageBody(buffer: buffer, length: .unknown)
        do {
            var iterator = body.makeAsyncIterator()
            #expect(try await iterator.next() == Data([1, 2]))
        }
        #expect(cancels.count == 1)
    }

    @Test("a body dropped without ever being read cancels the transfer; one read to the end does not")
    func unreadBodyCancels() async throws {
        let cancels = Counter()
        do {
            let buffer = StreamBuffer(limit: 1024, pausesProducer: true) { cancels.increment() }
            buffer.append(Data([1]))
            let body = MessageBody(buffer: buffer, length: .unknown)
            #expect(body.length == .unknown)
        }
        #expect(cancels.count == 1)
    }

    @Test("a body read to the end does not cancel anything")
    func finishedBodyDoesNotCancel() async throws {
        let cancels = Counter()
        let buffer = StreamBuffer(limit: 1024, pausesProducer: false) { cancels.increment() }
        buffer.append(Data([1]))
        buffer.finish()
        let body = MessageBody(buffer: buffer, length: .known(1))
        #expect(try await body.collect(upTo: 10) == Data([1]))
        #expect(cancels.count == 0)
    }
}
