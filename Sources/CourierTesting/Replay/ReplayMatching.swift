import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// A live request reduced to what ``ReplayTransport`` compares with a ``ReplayEntry``: method,
/// path, redacted query and the digest of the redacted body.
struct ReplayRequestKey: Sendable {
    var method: String
    var path: String
    var queryItems: [URLQueryItem]
    var bodyDigest: String?
    var bodyText: String?

    init(_ request: URLRequest, redactor: Redactor) {
        method = request.httpMethod ?? "GET"
        let url = request.url.map { redactor.redact(url: $0) } ?? ""
        path = ReplayEntry.path(ofURLText: url)
        queryItems = HARLog.queryString(of: url).map { URLQueryItem(name: $0.name, value: $0.value) }
        let headers = HTTPHeaders(request.allHTTPHeaderFields ?? [:])
        if let body = request.httpBody {
            bodyDigest = HARLog.bodyDigest(
                of: body, contentType: headers["Content-Type"], headers: headers, url: request.url, redactor: redactor)
            bodyText = redactor.preview(of: body, contentType: headers["Content-Type"], limit: 4096)?.text
        }
    }

    /// `GET /items/42?page=1 (body sha256:ab12…)`.
    var summary: String {
        let query = queryItems.isEmpty ? "" : "?" + ReplayEntry.queryText(queryItems)
        return "\(method) \(path)\(query)" + (bodyDigest.map { " (body \(ReplayDiff.short($0)))" } ?? "")
    }
}

/// Compares requests with entries, field by field.
struct ReplayMatcher: Sendable {
    var pathMatching: ReplayTransport.PathMatching

    struct Comparison: Sendable {
        var method: Bool
        var path: Bool
        var query: Bool
        var body: Bool
        var matches: Bool { method && path && query && body }
        /// Closeness: method outweighs path, path outweighs query, query outweighs body.
        var score: Int { (method ? 8 : 0) + (path ? 4 : 0) + (query ? 2 : 0) + (body ? 1 : 0) }
    }

    func compare(_ key: ReplayRequestKey, _ entry: ReplayEntry) -> Comparison {
        Comparison(
            method: key.method.uppercased() == entry.method.uppercased(),
            path: pathMatches(key.path, entry),
            query: Self.sorted(key.queryItems) == Self.sorted(entry.queryItems),
            body: key.bodyDigest == entry.bodyDigest)
    }

    private func pathMatches(_ path: String, _ entry: ReplayEntry) -> Bool {
        guard pathMatching == .template, let template = entry.pathTemplate, !template.isEmpty,
            template.hasPrefix("/")
        else { return path == entry.path }
        return Self.path(path, fits: template)
    }

    /// Whether the last segments of `path` fit `template` (`{name}` fits any one non-empty segment):
    /// a fixture recorded under one base URL replays under another.
    static func path(_ path: String, fits template: String) -> Bool {
        let templateSegments = template.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let pathSegments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard pathSegments.count >= templateSegments.count else { return false }
        for (pattern, segment) in zip(templateSegments, pathSegments.suffix(templateSegments.count)) {
            if pattern.hasPrefix("{"), pattern.hasSuffix("}") {
                if segment.isEmpty { return false }
            } else if (segment.removingPercentEncoding ?? String(segment)) != pattern {
                return false
            }
        }
        return true
    }

    private static func sorted(_ items: [URLQueryItem]) -> [String] {
        items.map { "\($0.name)=\($0.value ?? "")" }.sorted()
    }
}
