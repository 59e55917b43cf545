import Foundation

/// Makes bound stream pairs (an `InputStream` whose bytes are written into its `OutputStream`),
/// the documented way to hand URLSession on Apple platforms a body produced as it is sent.
///
/// Only the pair's creation is platform API; what fills it (`BodyStreamPump`) runs everywhere.
protocol BoundStreamPairs: Sendable {
    /// A new pair buffering `bufferSize` bytes, or `nil` when the platform has none.
    func makePair(bufferSize: Int) -> (input: InputStream, output: OutputStream)?
}

/// The Linux twin: FoundationNetworking has no `Stream.getBoundStreams`, and reads streamed bodies
/// through an `InputStream` subclass instead (``TransportCapabilities/BodyStreamStyle/pulled``).
struct NoBoundStreamPairs: BoundStreamPairs {
    func makePair(bufferSize: Int) -> (input: InputStream, output: OutputStream)? { nil }
}
