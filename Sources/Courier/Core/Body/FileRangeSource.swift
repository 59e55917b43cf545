import Foundation

/// Bytes `offset ..< offset + length` of a file, read in 64 KiB chunks as the stream is read.
final class FileRangeSource: BodySource {
    private let url: URL
    private let offset: Int64
    private var remaining: Int64
    private var handle: FileHandle?
    private var opened = false

    init(url: URL, offset: Int64, length: Int64) {
        self.url = url
        self.offset = offset
        self.remaining = length
    }

    func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        if !opened {
            opened = true
            guard let handle = try? FileHandle(forReadingFrom: url) else {
                throw FileBodyError.unreadable(path: url.path)
            }
            try handle.seek(toOffset: UInt64(offset))
            self.handle = handle
        }
        guard remaining > 0, let handle else {
            close()
            return 0
        }
        let chunk = try handle.read(upToCount: Int(min(Int64(min(maxLength, 64 << 10)), remaining))) ?? Data()
        guard !chunk.isEmpty else {
            // The file got shorter than the declared length: fail rather than send less.
            close()
            throw FileBodyError.shrank(path: url.path, expected: offset + remaining, actual: FileSize.of(url) ?? 0)
        }
        remaining -= Int64(chunk.count)
        chunk.copyBytes(to: buffer, count: chunk.count)
        return chunk.count
    }

    func close() {
        if let handle { _ = Result { try handle.close() } }  // read only: a failed close loses nothing
        handle = nil
        remaining = 0
    }
}

/// Why a file body could not be read to its end; the call fails with
/// ``NetworkError/invalidRequest(_:)`` carrying this description.
enum FileBodyError: Error, CustomStringConvertible {
    /// The file cannot be opened (`path` is its path).
    case unreadable(path: String)
    /// The file holds fewer bytes than the body's length taken earlier: it was truncated or
    /// replaced meanwhile. Sizes in bytes.
    case shrank(path: String, expected: Int64, actual: Int64)

    var description: String {
        switch self {
        case .unreadable(let path): return "the file at \(path) cannot be opened"
        case .shrank(let path, let expected, let actual):
            return "the file at \(path) holds \(actual) bytes, not the \(expected) it had when the body was made"
        }
    }
}

extension BodyStream {
    /// Bytes `offset ..< offset + length` of the file at `url`, read afresh for every send.
    package static func fileRange(_ url: URL, offset: Int64, length: Int64) -> BodyStream {
        .factory(length: Int(length)) { SourceInputStream.make(FileRangeSource(url: url, offset: offset, length: length)) }
    }
}
