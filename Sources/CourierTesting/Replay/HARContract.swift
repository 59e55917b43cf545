import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// Contract tests over a HAR fixture: every recorded response of an endpoint must decode with the
/// endpoint's `Response` type, so a server change that breaks the app's models shows up as soon as
/// the fixture is re-recorded.
///
/// ```swift
/// let archive = try HARContract.archive(contentsOf: URL(fileURLWithPath: "Fixtures/items.har"))
/// let items = try HARContract.decodeResponses(of: GetItem(id: 0), in: archive)
/// #expect(!items.isEmpty)
/// ```
public enum HARContract {
    /// A recorded response that did not decode: which entry, and the decoder's error.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The entries that failed, with the error each threw (`DecodingError` summarised).
        public var failures: [(entry: ReplayEntry, error: String)]

        /// One line per failed entry: `#3 GET /items/{id} → 200: missing key 'name' at items[0]`.
        public var description: String {
            (["\(failures.count) recorded response(s) did not decode:"]
                + failures.map { "  \($0.entry): \($0.error)" }).joined(separator: "\n")
        }
    }

    /// Reads a HAR file.
    /// - Throws: The file system's error, or `DecodingError` when it is not a HAR 1.2 archive.
    public static func archive(contentsOf url: URL) throws -> HARLog {
        try JSONDecoder().decode(HARLog.self, from: Data(contentsOf: url))
    }

    /// Decodes, with `endpoint`'s `Endpoint.decode`, every recorded response of an
    /// entry with the endpoint's method and path template (the endpoint's `Endpoint.pathTemplate`,
    /// else its `Endpoint.path`) whose status the endpoint accepts.
    ///
    /// - Parameters:
    ///   - endpoint: Any value of the endpoint type; only its method, template, accepted statuses
    ///     and decoding are used.
    ///   - archive: The fixture.
    ///   - decoder: The decoder your client uses; by default the client's default,
    ///     `APIClient.makeDecoder()` (flexible ISO 8601 dates), so a model that decodes from the
    ///     server decodes from its recording.
    /// - Returns: The decoded values, in file order (empty when no entry is the endpoint's).
    /// - Throws: ``Failure`` listing every entry that did not decode.
    public static func decodeResponses<E: Endpoint>(
        of endpoint: E, in archive: HARLog, decoder: JSONDecoder = APIClient.makeDecoder()
    ) throws -> [E.Response] {
        let template = endpoint.pathTemplate ?? endpoint.path
        let replay = ReplayTransport(archive: archive)
        let context = ResponseDecodingContext(method: endpoint.method, decoder: decoder)
        var values: [E.Response] = []
        var failures: [(ReplayEntry, String)] = []
        for (entry, recorded) in zip(replay.entries, archive.entries)
        where entry.method.uppercased() == endpoint.method.rawValue.uppercased()
            && (entry.pathTemplate ?? entry.path) == template && endpoint.statusValidation.accepts(entry.statusCode)
        {
            let response = ReplayTransport.response(of: recorded) ?? HTTPResponse(statusCode: entry.statusCode)
            do {
                values.append(try endpoint.decode(response, context: context))
            } catch {
                failures.append((entry, summary(of: error)))
            }
        }
        guard failures.isEmpty else { throw Failure(failures: failures) }
        return values
    }

    private static func summary(of error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing key '\(key.stringValue)' at \(path(context.codingPath))"
        case DecodingError.typeMismatch(let type, let context):
            return "expected \(type) at \(path(context.codingPath)): \(context.debugDescription)"
        case DecodingError.valueNotFound(let type, let context):
            return "null where \(type) was expected at \(path(context.codingPath))"
        case DecodingError.dataCorrupted(let context):
            return "\(context.debugDescription) at \(path(context.codingPath))"
        default:
            return String(describing: error)
        }
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.isEmpty ? "the top level" : codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
    }
}
