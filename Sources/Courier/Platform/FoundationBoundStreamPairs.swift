#if canImport(Darwin)
import Foundation

/// The Apple adapter of ``BoundStreamPairs``: `Stream.getBoundStreams(withBufferSize:inputStream:outputStream:)`
/// (iOS 8+, macOS 10.10+).
struct FoundationBoundStreamPairs: BoundStreamPairs {
    func makePair(bufferSize: Int) -> (input: InputStream, output: OutputStream)? {
        var input: InputStream?
        var output: OutputStream?
        Stream.getBoundStreams(withBufferSize: bufferSize, inputStream: &input, outputStream: &output)
        guard let input, let output else { return nil }
        return (input, output)
    }
}
#endif
