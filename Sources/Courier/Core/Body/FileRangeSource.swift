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
                throw MultipartFormError.unreadableFile(path: url.path)
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
            throw MultipartFormError.fileChanged(path: url.path, expected: offset + remaining, actual: FileSize.of(url) ?? 0)
        }
        remaining -= Int64(chunk.count)
        chunk.copyBytes(to: buffer, count: chunk.count)
        return chunk.count
    }

    func close() {
        try? handle?.close()
        handle = nil
        remaining = 0
    }
}

extension BodyStream {
    /// Bytes `offset ..< offset + length` of the file at `url`, read afresh for every send.
    static func fileRange(_ url: URL, offset: Int64, length: Int64) -> BodyStream {
        .factory(length: Int(length)) { SourceInputStream.make(FileRangeSource(url: url, offset: offset, length: length)) }
    }
}
