import Foundation
import Testing
@testable import Courier
@testable import CourierTransfers

@Suite("Download sink: writes leave the delegate queue when they get slow")
struct DownloadSinkTests {
    /// A clock that moves `tick` nanoseconds on every reading (so each write appears to take
    /// `tick`), plus whatever the test adds.
    private final class SteppingClock: Sendable {
        private let state = Locked((now: UInt64(1_000_000_000_000), tick: UInt64(0)))
        func read() -> UInt64 {
            state.withLock {
                $0.now += $0.tick
                return $0.now
            }
        }
        func set(tick: UInt64) { state.withLock { $0.tick = tick } }
        func advance(_ nanoseconds: UInt64) { state.withLock { $0.now += nanoseconds } }
    }

    private static func makeSink(clock: SteppingClock) throws -> (DownloadSink, PartialDownloadFile) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sink-\(UUID().uuidString)")
        let file = try PartialDownloadFile.make(for: folder.appendingPathComponent("file.bin"))
        let sink = DownloadSink(
            file: file, limit: nil, batchBytes: 4, keepsPartialOnWriteFailure: false,
            timing: DownloadWriteTiming(clock: { clock.read() }), report: { _ in })
        return (sink, file)
    }

    @Test("one write over 20 ms takes the writes off the producer's thread for a second")
    func oneSlowWrite() throws {
        let clock = SteppingClock()
        let (sink, file) = try Self.makeSink(clock: clock)
        defer { file.remove() }
        #expect(sink.admitsProducerThread)
        clock.set(tick: 19_000_000)
        try sink.take(Data(count: 4))  // a 19 ms write: still quick enough
        #expect(sink.admitsProducerThread)
        clock.set(tick: 25_000_000)
        try sink.take(Data(count: 4))
        clock.set(tick: 0)
        #expect(!sink.admitsProducerThread)
        clock.advance(900_000_000)
        #expect(!sink.admitsProducerThread)
        clock.advance(200_000_000)
        #expect(sink.admitsProducerThread)
        #expect(file.length == 8)
    }

    @Test("quick writes adding up to 200 ms within a second take them off the producer's thread")
    func spentBudget() throws {
        let clock = SteppingClock()
        let (sink, file) = try Self.makeSink(clock: clock)
        defer { file.remove() }
        clock.set(tick: 5_000_000)  // every write appears to take 5 ms
        for _ in 0..<30 { try sink.take(Data(count: 4)) }  // 150 ms
        #expect(sink.admitsProducerThread)
        for _ in 0..<12 { try sink.take(Data(count: 4)) }  // 210 ms within the second
        #expect(!sink.admitsProducerThread)
        #expect(file.length == 42 * 4)
    }

    @Test("the budget starts again every second: a steady fast disk keeps the producer's thread")
    func budgetPerSecond() throws {
        let clock = SteppingClock()
        let (sink, file) = try Self.makeSink(clock: clock)
        defer { file.remove() }
        clock.set(tick: 1_000_000)
        for _ in 0..<20 {
            for _ in 0..<50 { try sink.take(Data(count: 4)) }  // 50 ms of writes
            clock.advance(1_000_000_000)
            #expect(sink.admitsProducerThread)
        }
    }
}

@Suite("Download write timing: one budget for every download of the process")
struct DownloadWriteTimingTests {
    @Test("two downloads' writes share the budget: 120 ms each within a second is over it")
    func sharedBudget() {
        let now = Locked(UInt64(5_000_000_000))
        let timing = DownloadWriteTiming(clock: { now.current })
        for index in 0..<24 {  // 12 writes of 10 ms per download, interleaved
            let start = now.current
            now.withLock { $0 += 10_000_000 }
            timing.account(start: start, end: now.current)
            if index < 19 { #expect(timing.admitsProducerThread) }
        }
        #expect(!timing.admitsProducerThread)
        now.withLock { $0 += DownloadWriteTiming.offDuration }
        #expect(timing.admitsProducerThread)
    }
}
