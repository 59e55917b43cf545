import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPResponse {
    /// The most bytes of a streamed body read when the response is an error rather than the
    /// stream the caller asked for: enough for any error document, never a whole export.
    static let errorBodyLimit = 64 << 10

    /// This response with its body in memory: a buffered body as it is; of a stream, at most
    /// `limit` bytes (the rest is not read and the transfer is cancelled) — for mapping a status
    /// the caller does not accept to a ``NetworkError`` with its error body.
    ///
    /// - Throws: What reading the stream throws (``NetworkError``).
    func buffered(upTo limit: Int = errorBodyLimit) async throws -> HTTPResponse {
        guard !body.isBuffered else { return self }
        var bytes = Data()
        for try await chunk in body {
            bytes.append(chunk.prefix(limit - bytes.count))
            if bytes.count >= limit { break }
        }
        var buffered = self
        buffered.data = bytes
        return buffered
    }
}
