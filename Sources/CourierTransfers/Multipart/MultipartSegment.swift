import Courier
import Foundation

/// One piece of an encoded multipart body: bytes in memory or a whole file.
enum MultipartSegment: Sendable {
    case bytes(Data)
    case file(URL, length: Int64)
}

/// Reads a multipart body's segments in order, one file open at a time, checking that each file
/// still has the size it had when added. Used by one thread at a time (the stream's reader).
final class MultipartSegmentReader: BodySource {
    private var segments: ArraySlice<MultipartSegment>
    private var bytes = PendingBytes()
    private var file: (handle: FileHandle, url: URL, expected: Int64, read: Int64)?
    static let chunkSize = 64 << 10

    init(_ segments: [MultipartSegment]) { self.segments = segments[...] }

    func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        while true {
            if !bytes.isEmpty { return bytes.read(into: buffer, maxLength: maxLength) }
            if var current = file {
                let chunk = try current.handle.read(upToCount: min(maxLength, Self.chunkSize)) ?? Data()
                if chunk.isEmpty {
                    try? current.handle.close()
                    file = nil
                    guard current.read == current.expected else {
                        throw MultipartFormError.fileChanged(
                            path: current.url.path, expected: current.expected, actual: current.read)
                    }
                    continue
                }
                current.read += Int64(chunk.count)
                file = current
                guard current.read <= current.expected else {
                    throw MultipartFormError.fileChanged(
                        path: current.url.path, expected: current.expected, actual: FileSize.of(current.url) ?? current.read)
                }
                chunk.copyBytes(to: buffer, count: chunk.count)
                return chunk.count
            }
            guard let next = segments.popFirst() else { return 0 }
            switch next {
            case .bytes(let data):
                bytes = PendingBytes(data)
            case .file(let url, let length):
                guard let handle = try? FileHandle(forReadingFrom: url) else {
                    throw MultipartFormError.unreadableFile(path: url.path)
                }
                file = (handle, url, length, 0)
            }
        }
    }

    func close() {
        if let handle = file?.handle { _ = Result { try handle.close() } }  // read only: nothing to lose
        file = nil
        segments = []
    }

    /// Calls `body` with each chunk until the end.
    func forEachChunk(_ body: (Data) throws -> Void) throws {
        defer { close() }
        var buffer = [UInt8](repeating: 0, count: Self.chunkSize)
        while true {
            let count = try buffer.withUnsafeMutableBufferPointer { pointer -> Int in
                guard let base = pointer.baseAddress else { return 0 }
                return try read(into: base, maxLength: pointer.count)
            }
            if count == 0 { return }
            try body(Data(buffer[0..<count]))
        }
    }
}
