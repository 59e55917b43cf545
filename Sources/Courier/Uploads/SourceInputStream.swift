import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A synchronous source of request body bytes, pulled by the one thread that reads the stream.
protocol BodySource: AnyObject {
    /// Copies up to `maxLength` bytes into `buffer` and returns how many; 0 at the end.
    func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int
    /// Releases what the source holds open (files); reading afterwards returns 0.
    func close()
}

/// An `InputStream` over a ``BodySource``, for `URLRequest.httpBodyStream`: bytes are produced as
/// URLSession reads them, so memory stays at one chunk whatever the body's size.
///
/// - On Linux, a subclass of `InputStream` whose `read` pulls from the source (URLSession on
///   Linux only ever calls `open`, `hasBytesAvailable`, `read` and `close`; `getBoundStreams` is
///   not implemented there).
/// - On Apple platforms, the documented bridge for streamed uploads: a bound pair
///   (`Stream.getBoundStreams`) whose output end a dedicated thread fills from the source with
///   blocking writes. Closing the input end (URLSession done or cancelled) makes the next write
///   fail, which ends the thread and closes the source.
enum SourceInputStream {
    static func make(_ source: some BodySource) -> InputStream {
        #if canImport(Darwin)
        var input: InputStream?
        var output: OutputStream?
        Stream.getBoundStreams(withBufferSize: 64 << 10, inputStream: &input, outputStream: &output)
        guard let input, let output else { return InputStream(data: Data()) }
        let pump = Pump(source: source, output: output)
        let thread = Thread { pump.run() }
        thread.name = "Courier body stream"
        thread.start()
        return input
        #else
        return PullInputStream(source: source)
        #endif
    }
}

#if canImport(Darwin)
/// Copies the source into the bound pair's output end on its own thread.
///
/// `@unchecked Sendable`: the source and the stream are handed to the pump thread at creation and
/// touched by no other thread afterwards.
private final class Pump: @unchecked Sendable {
    private let source: any BodySource
    private let output: OutputStream

    init(source: any BodySource, output: OutputStream) {
        self.source = source
        self.output = output
    }

    func run() {
        output.open()
        defer {
            output.close()
            source.close()
        }
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
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
#else
/// An `InputStream` whose bytes come from a ``BodySource`` as they are read.
private final class PullInputStream: InputStream {
    private let source: any BodySource
    private var status: Stream.Status = .notOpen
    private var failure: (any Error)?

    init(source: any BodySource) {
        self.source = source
        super.init(data: Data())
    }

    override func open() { if status == .notOpen { status = .open } }

    override func close() {
        source.close()
        status = .closed
    }

    override var streamStatus: Stream.Status { status }
    override var streamError: (any Error)? { failure }
    // URLSession on Linux ends the body when this is false, so it stays true until the end.
    override var hasBytesAvailable: Bool { status == .open || status == .reading }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        guard status == .open || status == .reading else { return status == .atEnd ? 0 : -1 }
        do {
            let count = try source.read(into: buffer, maxLength: len)
            if count == 0 {
                status = .atEnd
                source.close()
            }
            return count
        } catch {
            failure = error
            status = .error
            source.close()
            return -1
        }
    }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
    ) -> Bool { false }

    override func property(forKey key: Stream.PropertyKey) -> AnyObject? { nil }
    override func setProperty(_ property: AnyObject?, forKey key: Stream.PropertyKey) -> Bool { false }
    override func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}
    override func remove(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}
}
#endif
