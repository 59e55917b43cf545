import Foundation

/// An `InputStream` whose bytes come from a ``BodySource`` as they are read
/// (``TransportCapabilities/BodyStreamStyle/pulled``).
///
/// URLSession on Linux only ever calls `open`, `hasBytesAvailable`, `read` and `close`, so only
/// those (and the status) are overridden; `property(forKey:)`, whose type differs between Apple's
/// Foundation (`Any?`) and swift-corelibs-foundation (`AnyObject?`), keeps the base behaviour.
final class PullInputStream: InputStream {
    fileprivate let source: any BodySource
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
    /// Why the source stopped before its end (``streamError``), readable without bridging.
    var sourceFailure: (any Error)? { failure }

    /// Records why the source stopped when its chunks are read without this stream
    /// (``InputStream/bodyChunks``): the call then ends with it, as after a failed ``read(_:maxLength:)``.
    fileprivate func recordFailure(_ error: any Error) {
        failure = error
        status = .error
    }
    /// Ends a read of this stream waiting on another thread (the call was cancelled): held by the
    /// transports, which cannot reach the reading thread otherwise.
    var interruption: BodyInterruption { BodyInterruption(source) }
    // URLSession on Linux ends the body when this is false, so it stays true until the end —
    // and after a failure, whose every later read fails again: were it false, URLSession would
    // end the body there and send what it had as if it were whole.
    override var hasBytesAvailable: Bool { status == .open || status == .reading || status == .error }

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

    override func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}
    override func remove(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}
}

extension InputStream {
    /// What ends a read of this request body waiting on another thread, when it is one of
    /// Courier's pulled streams (``BodySource/interrupt()``); `nil` for other streams.
    package var bodyInterruption: BodyInterruption? { (self as? PullInputStream)?.interruption }

    /// The chunks of this request body for a reader that awaits them instead of blocking a thread,
    /// when it is one of Courier's streams over an ``MessageBody``; `nil` for other streams.
    package var bodyChunks: BodyChunks? {
        guard let stream = self as? PullInputStream, let source = stream.source as? MessageBodySource else { return nil }
        let failing = FailingStream(stream)
        return source.chunks { failing.stream.recordFailure($0) }
    }
}

/// Carries a ``PullInputStream`` to the one task that reads its chunks, to record their failure.
/// `@unchecked Sendable`: that task is the stream's only user meanwhile; the transport reads the
/// failure only after the transfer it failed has ended.
private struct FailingStream: @unchecked Sendable {
    let stream: PullInputStream
    init(_ stream: PullInputStream) { self.stream = stream }
}
