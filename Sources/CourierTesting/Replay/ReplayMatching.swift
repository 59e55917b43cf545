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
    /// The redactor's marker: a recorded query value or path segment holding it was a secret the
    /// recorder learned from the exchange (a response body, a header), which the live request
    /// cannot know, so it matches any value.
    var marker: String

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
            query: queryMatches(key.queryItems, recorded: entry.queryItems),
            body: key.bodyDigest == entry.bodyDigest)
    }

    /// How closely a matching entry fits `key`, to choose among several that match: first the
    /// number of trailing path segments equal to the request's (`/items/42` is a better answer to
    /// `GET /items/42` than `/items/7`, which its template also fits), then the template's
    /// specificity (``specificity(ofTemplate:)``).
    func closeness(_ key: ReplayRequestKey, _ entry: ReplayEntry) -> [Int] {
        let live = key.path.split(separator: "/", omittingEmptySubsequences: false).reversed()
        let recorded = entry.path.split(separator: "/", omittingEmptySubsequences: false).reversed()
        let trailing = zip(live, recorded).prefix { Self.segment($0.0, equals: $0.1, marker: marker) }.count
        return [trailing] + Self.specificity(ofTemplate: entry.pathTemplate ?? entry.path)
    }

    private func pathMatches(_ path: String, _ entry: ReplayEntry) -> Bool {
        guard pathMatching == .template, let template = entry.pathTemplate, !template.isEmpty,
            template.hasPrefix("/")
        else {
            let live = path.split(separator: "/", omittingEmptySubsequences: false)
            let recorded = entry.path.split(separator: "/", omittingEmptySubsequences: false)
            return live.count == recorded.count
                && zip(live, recorded).allSatisfy { Self.segment($0.0, equals: $0.1, marker: marker) }
        }
        return Self.path(path, fits: template, marker: marker)
    }

    /// Whether the last segments of `path` fit `template` (`{name}` fits any one non-empty segment):
    /// a fixture recorded under one base URL replays under another. Only the template's path part
    /// counts: GraphQL's `/graphql query GetHero` is the path `/graphql`. A template segment
    /// holding `marker` (a secret scrubbed from the recording) fits any non-empty segment.
    static func path(_ path: String, fits template: String, marker: String? = nil) -> Bool {
        let templateSegments = pathPart(of: template).split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let pathSegments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard pathSegments.count >= templateSegments.count else { return false }
        for (pattern, segment) in zip(templateSegments, pathSegments.suffix(templateSegments.count)) {
            if pattern.hasPrefix("{"), pattern.hasSuffix("}") {
                if segment.isEmpty { return false }
            } else if !Self.segment(segment, equals: pattern, marker: marker) {
                return false
            }
        }
        return true
    }

    /// How specific a template is, to prefer among several that fit a path: more segments first,
    /// then more literal (non-`{name}`) segments — `/items/featured` before `/items/{id}`, and
    /// `/users/{user}/items/{id}` before `/items/{id}`.
    static func specificity(ofTemplate template: String) -> [Int] {
        let segments = pathPart(of: template).split(separator: "/", omittingEmptySubsequences: true)
        return [segments.count, segments.filter { !($0.hasPrefix("{") && $0.hasSuffix("}")) }.count]
    }

    /// The path part of a template: up to its first space.
    private static func pathPart(of template: String) -> Substring {
        template.prefix { $0 != " " }
    }

    /// Whether a live segment equals a recorded one (percent-decoded); a recorded segment holding
    /// `marker` equals any non-empty segment.
    private static func segment(_ live: Substring, equals recorded: Substring, marker: String?) -> Bool {
        let decoded = { (text: Substring) in text.removingPercentEncoding ?? String(text) }
        let recordedText = decoded(recorded)
        if let marker, !marker.isEmpty, recordedText.contains(marker) { return !live.isEmpty }
        return decoded(live) == recordedText
    }

    /// Whether the live query items equal the recorded ones, in any order across names and in
    /// order within a name; a recorded value holding the marker equals any value.
    private func queryMatches(_ live: [URLQueryItem], recorded: [URLQueryItem]) -> Bool {
        guard live.count == recorded.count else { return false }
        let byName = { (items: [URLQueryItem]) in
            items.enumerated().sorted { ($0.element.name, $0.offset) < ($1.element.name, $1.offset) }.map(\.element)
        }
        return zip(byName(live), byName(recorded)).allSatisfy { liveItem, recordedItem in
            guard liveItem.name == recordedItem.name else { return false }
            let recordedValue = recordedItem.value ?? ""
            if !marker.isEmpty, recordedValue.contains(marker) { return true }
            return (liveItem.value ?? "") == recordedValue
        }
    }
}
