import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A synchronous source of request body bytes, pulled by the one thread that reads the stream.
package protocol BodySource: AnyObject {
    /// Copies up to `maxLength` bytes into `buffer` and returns how many; 0 at the end.
    func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int
    /// Releases what the source holds open (files); reading afterwards returns 0.
    func close()
    /// Ends a read waiting on another thread at once, and every later read, with an error (the
    /// call was cancelled or its deadline passed). Safe from any thread. Sources whose reads
    /// never wait long (a file, memory) need not implement it.
    func interrupt()
}

extension BodySource {
    package func interrupt() {}
}

/// Interrupts a ``BodySource`` from another thread (``BodySource/interrupt()``): what the
/// transports hold to end a request body's waiting read when the call is cancelled.
///
/// `@unchecked Sendable`: it only calls `interrupt()`, which every source makes safe from any
/// thread.
package final class BodyInterruption: @unchecked Sendable {
    private let source: any BodySource

    init(_ source: any BodySource) { self.source = source }

    /// Ends the source's waiting read and every later one.
    package func interrupt() { source.interrupt() }
}

/// An `InputStream` over a ``BodySource``, for `URLRequest.httpBodyStream`: bytes are produced as
/// URLSession reads them, so memory stays at one chunk whatever the body's size. The platform's
/// ``TransportCapabilities/bodyStreamStyle`` picks the kind:
///
/// - ``TransportCapabilities/BodyStreamStyle/pulled`` (Linux): a subclass of `InputStream` whose
///   `read` pulls from the source (`PullInputStream`).
/// - ``TransportCapabilities/BodyStreamStyle/boundPair`` (Apple): the documented bridge for
///   streamed uploads, a bound pair (``BoundStreamPairs``) whose output end a thread of its own
///   fills from the source with blocking writes (`BodyStreamPump`). Closing the input end
///   (URLSession done or cancelled) makes the next write fail, which ends the thread and closes
///   the source.
package enum SourceInputStream {
    /// The size of one chunk copied from the source, and of a bound pair's buffer (bytes).
    static let chunkSize = 64 << 10

    /// A stream over `source` in the style of the platform this process runs on.
    package static func make(_ source: some BodySource) -> InputStream {
        make(source, style: TransportCapabilities.current.bodyStreamStyle, pairs: PlatformAdapters.boundStreams)
    }

    /// A stream over `source` in the style `style`; a platform without bound pairs gets the
    /// pulled kind.
    static func make(
        _ source: some BodySource, style: TransportCapabilities.BodyStreamStyle, pairs: any BoundStreamPairs
    ) -> InputStream {
        guard style == .boundPair, let (input, output) = pairs.makePair(bufferSize: chunkSize) else {
            return PullInputStream(source: source)
        }
        let pump = BodyStreamPump(source: source, output: output)
        let thread = Thread { pump.run() }
        thread.name = "Courier body stream"
        thread.start()
        return input
    }
}
