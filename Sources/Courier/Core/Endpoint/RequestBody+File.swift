import Foundation

extension RequestBody {
    /// The contents of the file at `url`, streamed from disk (constant memory) and read afresh for
    /// every send — a retry or a 307/308 redirect re-reads it from the start. Same as
    /// `.stream(.file(url), contentType:)`.
    ///
    /// - Parameters:
    ///   - url: A `file:` URL. A file that cannot be opened fails the call with
    ///     ``NetworkError/invalidRequest(_:)``.
    ///   - contentType: The media type, e.g. `image/jpeg`.
    public static func file(_ url: URL, contentType: String = "application/octet-stream") -> RequestBody {
        .stream(.file(url), contentType: contentType)
    }

    /// The body's length in bytes when known before it is encoded.
    package var knownLength: Int64? {
        switch self {
        case .none: return 0
        case .data(let data, _): return Int64(data.count)
        case .stream(let stream, _): return stream.length.map(Int64.init)
        case .json, .form, .formEncodable: return nil
        }
    }
}
