import Foundation

/// The parts of the last base URL a ``RequestBuilder`` parsed, so building an endpoint's URL is one
/// string concatenation and one `URL(string:)` (about 2 µs on Linux) instead of a `URLComponents`
/// round trip (about 10 µs) on every call. Holds one entry: a client sends to one environment at a
/// time, and a switch re-parses once.
///
/// It also remembers the last URLs built on that base (up to ``urlLimit``), by path, path values
/// and encoded query: an app calls the same endpoints again and again, and parsing the URL is the
/// largest part of building a request on Linux. Only URLs that were built are remembered: a path
/// that fails (a dot segment, a missing path value) fails again each time.
final class BaseURLCache: Sendable {
    /// What an endpoint adds to the base URL.
    struct URLKey: Hashable, Sendable {
        let path: String
        let pathValues: [String: String]
        let query: String?
    }

    private struct Entry: Sendable {
        let parts: Parts
        var urls: [URLKey: URL] = [:]
    }

    /// The most URLs remembered per base URL; the table starts again when it is full.
    static let urlLimit = 64

    /// A base URL split the way `URLComponents` would assemble it again.
    struct Parts: Sendable {
        /// The URL the parts come from.
        let baseURL: URL
        /// `scheme://authority`, the scheme lower-cased (RFC 3986 §3.1).
        let origin: String
        /// The percent-encoded path without a trailing `/` (may be empty).
        let path: String
        /// The percent-encoded path exactly as given, for an endpoint with an empty path.
        let fullPath: String
        /// The percent-encoded query, or `nil` when the base URL has none.
        let query: String?
        /// The percent-encoded fragment, or `nil`.
        let fragment: String?
    }

    private let entry = Locked<Entry?>(nil)

    /// The URL built earlier on `baseURL` for `key`, if any.
    func url(for key: URLKey, on baseURL: URL) -> URL? {
        entry.withLock { entry in
            guard let entry, entry.parts.baseURL == baseURL else { return nil }
            return entry.urls[key]
        }
    }

    /// Remembers `url`, built on `baseURL` for `key`.
    func remember(_ url: URL, for key: URLKey, on baseURL: URL) {
        entry.withLock { entry in
            guard entry?.parts.baseURL == baseURL else { return }
            if entry?.urls.count ?? 0 >= Self.urlLimit { entry?.urls.removeAll(keepingCapacity: true) }
            entry?.urls[key] = url
        }
    }

    /// The parts of `baseURL`, parsed on first use.
    ///
    /// - Throws: ``NetworkError/invalidRequest(_:)`` when `baseURL` cannot be parsed or is not an
    ///   absolute http(s) URL.
    func parts(of baseURL: URL) throws -> Parts {
        if let cached = entry.withLock({ $0?.parts }), cached.baseURL == baseURL { return cached }
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true) else {
            throw NetworkError.invalidRequest("base URL '\(baseURL)' cannot be parsed")
        }
        guard let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw NetworkError.invalidRequest("base URL '\(baseURL)' is not an absolute http(s) URL")
        }
        components.scheme = scheme
        let fullPath = components.percentEncodedPath
        let query = components.percentEncodedQuery
        let fragment = components.percentEncodedFragment
        components.percentEncodedPath = ""
        components.percentEncodedQuery = nil
        components.percentEncodedFragment = nil
        guard let origin = components.string else {
            throw NetworkError.invalidRequest("base URL '\(baseURL)' cannot be parsed")
        }
        let parts = Parts(
            baseURL: baseURL, origin: origin, path: fullPath.hasSuffix("/") ? String(fullPath.dropLast()) : fullPath,
            fullPath: fullPath, query: query, fragment: fragment)
        entry.set(Entry(parts: parts))
        return parts
    }
}
