import Foundation
import Testing
import Courier

/// Reads a streamed body whose content coding must fail, for the decoding tests.
enum CodingFailureReading {
    /// Reads `body` to its end: the bytes it handed out, and the reason of the
    /// `NetworkError.undecodableResponse` it ended with (`nil`, with an issue recorded, when it
    /// ended otherwise).
    static func read(
        _ body: MessageBody, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> (count: Int, reason: ResponseCodingFailure.Reason?) {
        var count = 0
        do {
            for try await chunk in body { count += chunk.count }
            Issue.record("the body ended without an error after \(count) bytes", sourceLocation: sourceLocation)
        } catch NetworkError.undecodableResponse(let failure) {
            return (count, failure.reason)
        } catch {
            Issue.record("expected undecodableResponse, got \(error)", sourceLocation: sourceLocation)
        }
        return (count, nil)
    }
}
