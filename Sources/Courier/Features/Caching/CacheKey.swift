import Foundation

/// The primary key of stored responses (RFC 9111 §2): the account partition and the normalised
/// target URI. Variants selected by `Vary` live under the same key (see `CachedResponse.variantID`).
///
/// The URI is normalised so equivalent spellings share entries: scheme and host lower-cased,
/// the default port (80 for http, 443 for https) and the fragment removed, an empty path written
/// as `/`. The query is kept exactly as sent, because its order may matter to the server.
public struct CacheKey: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The account the entry belongs to, e.g. the signed-in user's ID; clearing a partition
    /// removes only its entries.
    public var partition: String
    /// The normalised absolute URI, e.g. `https://api.example.com/items?page=2`.
    public var url: String

    /// Creates a key from an already normalised URI.
    public init(partition: String, url: String) {
        self.partition = partition
        self.url = url
    }

    /// Creates a key for `url` in `partition`, normalising the URL.
    package init(partition: String, url: URL) {
        self.init(partition: partition, url: CacheKey.normalize(url))
    }

    /// `partition|url`.
    public var description: String { "\(partition)|\(url)" }

    /// The normalised form of `url` used in keys (see the type's documentation).
    package static func normalize(_ url: URL) -> String {
        let text = url.absoluteString
        if isNormalized(text) { return text }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return url.absoluteString
        }
        components.fragment = nil
        components.scheme = components.scheme?.lowercased()
        if let host = components.percentEncodedHost { components.percentEncodedHost = host.lowercased() }
        if let port = components.port,
            (components.scheme == "http" && port == 80) || (components.scheme == "https" && port == 443)
        {
            components.port = nil
        }
        if components.percentEncodedPath.isEmpty { components.percentEncodedPath = "/" }
        return components.string ?? url.absoluteString
    }

    /// `true` when `text` is already in normal form, checked byte-wise (the common case; avoids
    /// `URLComponents`): lower-case scheme and authority, a path, no fragment, no default port.
    private static func isNormalized(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.contains(0x23) else { return false }  // '#'
        let isHTTP = text.hasPrefix("http://")
        let isHTTPS = text.hasPrefix("https://")
        guard isHTTP || isHTTPS else { return false }
        let authority = bytes.dropFirst(isHTTPS ? 8 : 7).prefix { $0 != 0x2F && $0 != 0x3F }  // up to '/' or '?'
        guard !authority.isEmpty, !authority.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return false }
        let afterAuthority = bytes.dropFirst((isHTTPS ? 8 : 7) + authority.count)
        guard afterAuthority.first == 0x2F else { return false }  // a path must follow
        let port = isHTTPS ? ":443" : ":80"
        return !String(decoding: authority, as: UTF8.self).hasSuffix(port)
    }

    /// The origin (scheme, host, port) of a normalised URL string, for the same-origin rule of
    /// invalidation (RFC 9111 §4.4).
    static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(host):\(port)"
    }
}
