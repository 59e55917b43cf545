import Foundation

extension MessageBody {
    /// The body as newline-delimited JSON (NDJSON / JSON Lines): one value of `type` decoded from
    /// each line, in order, as lines arrive — memory stays bounded by one line.
    ///
    /// Lines end at LF or CRLF (see ``lines(maxLineLength:)``). **Blank lines** — empty or holding
    /// only spaces and tabs — are skipped (they still count for line numbers), so a trailing line
    /// end or a keep-alive newline is harmless.
    ///
    /// ```swift
    /// let stream = try await client.stream(ExportOrders())
    /// for try await order in stream.body.ndjson(as: Order.self) { try await store.insert(order) }
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type of each line's value.
    ///   - decoder: Decodes each line; ``APIClient/makeDecoder()`` (flexible ISO 8601 dates) by default.
    ///   - maxLineLength: The longest line accepted, in bytes (default 1 MiB).
    /// - Returns: A sequence that throws ``MessageBodyError/undecodableLine(number:reason:)`` naming the
    ///   first line that is not a `type` (1-based), ``MessageBodyError/lineTooLong(maxBytes:)``, or
    ///   what the body throws.
    public func ndjson<T: Decodable>(
        as type: T.Type, decoder: JSONDecoder = APIClient.makeDecoder(), maxLineLength: Int = 1 << 20
    ) -> NDJSONSequence<T> {
        NDJSONSequence(body: self, decoder: decoder, maxLineLength: maxLineLength)
    }
}

/// Values decoded one per line from an ``MessageBody`` (see ``MessageBody/ndjson(as:decoder:maxLineLength:)``).
public struct NDJSONSequence<Value: Decodable>: AsyncSequence, @unchecked Sendable {
    // `JSONDecoder` is not `Sendable` on every platform this targets; the sequence only reads it.
    /// One decoded value.
    public typealias Element = Value
    let body: MessageBody
    let decoder: JSONDecoder
    let maxLineLength: Int

    /// Creates the iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(lines: LineBytes(chunks: body.makeAsyncIterator(), maxLineLength: maxLineLength), decoder: decoder)
    }

    /// Iterates decoded values.
    public struct Iterator: AsyncIteratorProtocol {
        var lines: LineBytes
        let decoder: JSONDecoder

        /// The next value, `nil` at the end.
        ///
        /// - Throws: ``MessageBodyError/undecodableLine(number:reason:)``,
        ///   ``MessageBodyError/lineTooLong(maxBytes:)``, or what the body throws.
        public mutating func next() async throws -> Value? {
            while let line = try await lines.next() {
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                do {
                    return try decoder.decode(Value.self, from: line)
                } catch let error as DecodingError {
                    throw MessageBodyError.undecodableLine(number: lines.lineNumber, reason: error.debugSummary)
                } catch {
                    throw MessageBodyError.undecodableLine(number: lines.lineNumber, reason: "\(error)")
                }
            }
            return nil
        }
    }
}
