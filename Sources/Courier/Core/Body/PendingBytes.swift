import Foundation

/// Bytes in memory that a ``BodySource`` hands out in pieces: the data and how much of it was
/// already copied out.
package struct PendingBytes {
    private var data: Data
    private var offset = 0

    /// `data`, none of it read yet.
    package init(_ data: Data = Data()) { self.data = data }

    /// Whether every byte was copied out.
    package var isEmpty: Bool { offset >= data.count }

    /// Copies up to `maxLength` of the unread bytes into `buffer`, marks them read and returns how
    /// many.
    package mutating func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        let count = min(maxLength, data.count - offset)
        data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            buffer.update(from: base.advanced(by: offset).assumingMemoryBound(to: UInt8.self), count: count)
        }
        offset += count
        return count
    }
}
