import Foundation
import Courier

/// One recorded request of a HAR fixture as ``ReplayTransport`` matches it: what a mismatch diff
/// and the unused-entries report show.
public struct ReplayEntry: Sendable, Hashable, CustomStringConvertible {
    /// Position in the file's `log.entries`, from 0.
    public var index: Int
    /// The request method, e.g. `GET`.
    public var method: String
    /// The recorded URL, redacted.
    public var url: String
    /// The URL's path, percent-encoded as recorded, e.g. `/ns/t-1/items/42`.
    public var path: String
    /// The call's path template (`_pathTemplate`), e.g. `/items/{id}`; `nil` when none was recorded.
    public var pathTemplate: String?
    /// The query parameters, decoded, redacted values as recorded, in recorded order.
    public var queryItems: [URLQueryItem]
    /// `sha256:` and the hex SHA-256 of the redacted request body (`_bodyDigest`); `nil` for none.
    public var bodyDigest: String?
    /// The redacted request body text (`postData.text`), when recorded.
    public var bodyText: String?
    /// The recorded response status (RFC 9110 §15); 0 when the exchange failed without one.
    public var statusCode: Int

    /// `#3 GET /items/{id} → 200`.
    public var description: String {
        "#\(index) \(method) \(pathTemplate ?? path)\(queryItems.isEmpty ? "" : "?" + ReplayEntry.queryText(queryItems)) → \(statusCode)"
    }

    /// `a=1&b=2`, for diffs.
    static func queryText(_ items: [URLQueryItem]) -> String {
        items.map { "\($0.name)=\($0.value ?? "")" }.joined(separator: "&")
    }

    /// The path of a URL's text (between the authority and `?`/`#`), without parsing it as a URL —
    /// a redacted URL holds a marker such as `<redacted>` that `URL` would reject.
    static func path(ofURLText text: String) -> String {
        var rest = Substring(text)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        guard let slash = rest.firstIndex(of: "/") else { return "/" }
        let path = rest[slash...].prefix { $0 != "?" && $0 != "#" }
        return path.isEmpty ? "/" : String(path)
    }
}
