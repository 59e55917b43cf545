import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Streamed request bodies: the bound-pair pump and the pulled stream both run on Linux")
struct BodyStreamStyleTests {
    /// A body source over bytes in memory that records whether it was closed.
    final class BytesSource: BodySource, @unchecked Sendable {
        // @unchecked Sendable: read by one thread at a time (the pump's), `closed` behind a lock.
        private let bytes: [UInt8]
        private var offset = 0
        private let closedFlag = Locked(false)

        init(_ count: Int) { bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0) } }

        var data: Data { Data(bytes) }
        var closed: Bool { closedFlag.current }

        func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
            let count = min(maxLength, bytes.count - offset)
            bytes.withUnsafeBufferPointer { pointer in
                guard let base = pointer.baseAddress else { return }
                buffer.update(from: base.advanced(by: offset), count: count)
            }
            offset += count
            return count
        }

        func close() { closedFlag.set(true) }
    }

    /// Bound pairs whose output end is a memory stream the test reads back.
    final class MemoryPairs: BoundStreamPairs, @unchecked Sendable {
        // @unchecked Sendable: `output` is set once, before the pump starts.
        private(set) var output: OutputStream?

        func makePair(bufferSize: Int) -> (input: InputStream, output: OutputStream)? {
            let output = OutputStream(toMemory: ())
            self.output = output
            return (InputStream(data: Data()), output)
        }
    }

    @Test("the pump copies the whole source into the pair's output end and closes the source")
    func pumpCopiesEverything() throws {
        let source = BytesSource(200_000)  // more than three chunks
        let output = OutputStream(toMemory: ())
        BodyStreamPump(source: source, output: output).run()
        let written = output.property(forKey: .dataWrittenToMemoryStreamKey) as? Data
        #expect(written == source.data)
        #expect(source.closed)
    }

    @Test("the bound-pair style runs the pump on a thread of its own; without pairs it falls back to pulling")
    func styles() async throws {
        let source = BytesSource(70_000)
        let pairs = MemoryPairs()
        let input = SourceInputStream.make(source, style: .boundPair, pairs: pairs)
        #expect(!(input is PullInputStream))
        for _ in 0..<500 where !source.closed { try await Task.sleep(for: .milliseconds(10)) }
        #expect(source.closed)
        #expect(pairs.output?.property(forKey: .dataWrittenToMemoryStreamKey) as? Data == source.data)

        #expect(SourceInputStream.make(BytesSource(1), style: .boundPair, pairs: NoBoundStreamPairs()) is PullInputStream)
        #expect(SourceInputStream.make(BytesSource(1), style: .pulled, pairs: pairs) is PullInputStream)
    }

    @Test("the pulled stream reads the source to its end")
    func pulledReads() throws {
        let source = BytesSource(5000)
        let stream = SourceInputStream.make(source, style: .pulled, pairs: NoBoundStreamPairs())
        stream.open()
        var collected = Data()
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count <= 0 { break }
            collected.append(contentsOf: buffer[0..<count])
        }
        stream.close()
        #expect(collected == source.data)
        #expect(source.closed)
    }
}
