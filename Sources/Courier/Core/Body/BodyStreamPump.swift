import Foundation

/// Copies a ``BodySource`` into an `OutputStream` (a bound pair's output end) on a thread of its
/// own, with blocking writes, until the source ends or the reader closes its end.
///
/// `@unchecked Sendable`: the source and the stream are handed to the pump thread at creation and
/// touched by no other thread afterwards.
final class BodyStreamPump: @unchecked Sendable {
    private let source: any BodySource
    private let output: OutputStream

    init(source: any BodySource, output: OutputStream) {
        self.source = source
        self.output = output
    }

    /// Copies until the end of the source, a source failure or a refused write; then closes both.
    func run() {
        output.open()
        defer {
            output.close()
            source.close()
        }
        var buffer = [UInt8](repeating: 0, count: SourceInputStream.chunkSize)
        while true {
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBufferPointer { pointer -> Int in
                    guard let base = pointer.baseAddress else { return 0 }
                    return try source.read(into: base, maxLength: pointer.count)
                }
            } catch {
                // Closing early ends the body short of its Content-Length: URLSession fails the
                // task (NSURLErrorRequestBodyStreamExhausted) instead of sending a wrong body.
                return
            }
            if count == 0 { return }
            var written = 0
            while written < count {
                let result = buffer.withUnsafeBufferPointer { pointer -> Int in
                    guard let base = pointer.baseAddress else { return -1 }
                    return output.write(base.advanced(by: written), maxLength: count - written)
                }
                if result <= 0 { return }  // the reader closed its end
                written += result
            }
        }
    }
}
