import Foundation

extension MessageBody {
    /// The body as lines of UTF-8 text, split on LF and CRLF only (invalid UTF-8 is replaced with
    /// U+FFFD). A lone CR, U+0085, U+2028 and U+2029 do not end a line, so text and JSON holding
    /// them is never split. A last line without a line end is still delivered.
    ///
    /// - Parameter maxLineLength: The longest line accepted, in bytes (default 1 MiB); a longer
    ///   one ends the sequence with ``MessageBodyError/lineTooLong(maxBytes:)``, so a body without
    ///   line ends cannot grow memory without bound.
    public func lines(maxLineLength: Int = 1 << 20) -> Lines {
        Lines(body: self, maxLineLength: maxLineLength)
    }

    /// An ``MessageBody``'s lines (see ``MessageBody/lines(maxLineLength:)``).
    public struct Lines: AsyncSequence, Sendable {
        /// One line, without its line end.
        public typealias Element = String
        let body: MessageBody
        let maxLineLength: Int

        /// Creates the iterator.
        public func makeAsyncIterator() -> Iterator {
            Iterator(lines: LineBytes(chunks: body.makeAsyncIterator(), maxLineLength: maxLineLength))
        }

        /// Iterates lines.
        public struct Iterator: AsyncIteratorProtocol {
            var lines: LineBytes

            /// The next line, `nil` at the end.
            ///
            /// - Throws: What the body throws, or ``MessageBodyError/lineTooLong(maxBytes:)``.
            public mutating func next() async throws -> String? {
                guard let line = try await lines.next() else { return nil }
                return String(decoding: line, as: UTF8.self)
            }
        }
    }
}

/// Lines as bytes, numbered from 1, over a body's chunks.
struct LineBytes {
    var chunks: MessageBody.Iterator
    var splitter: LineSplitter
    var ended = false
    /// The number of the line last returned (1 for the first).
    private(set) var lineNumber = 0

    init(chunks: MessageBody.Iterator, maxLineLength: Int) {
        self.chunks = chunks
        self.splitter = LineSplitter(maxLineLength: max(1, maxLineLength))
    }

    mutating func next() async throws -> Data? {
        while true {
            if let line = try splitter.nextLine() {
                lineNumber += 1
                return line
            }
            guard !ended else { return nil }
            if let chunk = try await chunks.next() {
                splitter.feed(chunk)
            } else {
                ended = true
                guard let last = try splitter.finish() else { return nil }
                lineNumber += 1
                return last
            }
        }
    }
}
