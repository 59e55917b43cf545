import Foundation

/// Splits chunks of bytes into lines ending in LF or CRLF (the CR of a CRLF split across two
/// chunks included). Nothing else ends a line: not a lone CR, not U+0085, U+2028 or U+2029 — so a
/// JSON string holding those characters (escaped or raw) never splits a record.
struct LineSplitter {
    /// The longest line kept, in bytes, without its line end.
    let maxLineLength: Int
    private var pending = Data()
    private var chunk = Data()
    private var offset = 0

    init(maxLineLength: Int) { self.maxLineLength = maxLineLength }

    /// Starts splitting `data` (call after ``nextLine()`` returned `nil`).
    mutating func feed(_ data: Data) {
        chunk = data
        offset = chunk.startIndex
    }

    /// The next complete line of the bytes fed so far, without its line end; `nil` when the rest
    /// is an incomplete line (kept for the next chunk).
    ///
    /// - Throws: ``MessageBodyError/lineTooLong(maxBytes:)``.
    mutating func nextLine() throws -> Data? {
        let end = chunk.endIndex
        guard offset < end else { return nil }
        guard let newline = Self.firstLineFeed(in: chunk, from: offset) else {
            let rest = end - offset
            guard pending.count + rest <= maxLineLength + 1 else { throw MessageBodyError.lineTooLong(maxBytes: maxLineLength) }
            pending.append(chunk[offset..<end])
            offset = end
            return nil
        }
        var line: Data
        if pending.isEmpty {
            line = chunk[offset..<newline]
        } else {
            pending.append(chunk[offset..<newline])
            line = pending
            pending = Data()
        }
        offset = newline + 1
        if line.last == 0x0D { line = line.dropLast() }
        guard line.count <= maxLineLength else { throw MessageBodyError.lineTooLong(maxBytes: maxLineLength) }
        return line
    }

    /// The index of the first LF in `data` at or after `start` (a valid index), or `nil`.
    ///
    /// One `memchr` over the contiguous bytes: `Data.firstIndex(of:)` reads byte by byte through
    /// `Data`'s subscript, and each read paid a dynamic exclusivity check (measured: splitting
    /// lines cost a third as much as decoding them in an NDJSON stream of 38-byte records).
    private static func firstLineFeed(in data: Data, from start: Data.Index) -> Data.Index? {
        data.withUnsafeBytes { raw -> Data.Index? in
            let skipped = start - data.startIndex
            guard let base = raw.baseAddress, skipped < raw.count,
                let found = memchr(base + skipped, 0x0A, raw.count - skipped)
            else { return nil }
            return data.startIndex + base.distance(to: UnsafeRawPointer(found))
        }
    }

    /// The last line when the body did not end with a line end; `nil` when nothing is left. A CR
    /// at the very end is part of the line: only LF and CRLF end one.
    ///
    /// - Throws: ``MessageBodyError/lineTooLong(maxBytes:)``.
    mutating func finish() throws -> Data? {
        guard !pending.isEmpty else { return nil }
        defer { pending = Data() }
        guard pending.count <= maxLineLength else { throw MessageBodyError.lineTooLong(maxBytes: maxLineLength) }
        return pending
    }
}
