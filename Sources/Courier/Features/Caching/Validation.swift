import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Conditional requests and `304 Not Modified` handling (RFC 9111 §4.3).
enum Validation {
    /// Header fields a 304 never replaces in the stored response: the stored body's framing and
    /// encoding (RFC 9111 §3.2) and hop-by-hop fields (§3.1).
    static let protectedFields: Set<String> = [
        "content-length", "content-encoding", "transfer-encoding", "content-range",
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade",
    ]

    /// Fields that make a caller's request conditional already; the cache leaves such requests alone.
    static let conditionalFields = ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range"]

    /// `true` when the stored response has a validator the origin can check (§4.3.1).
    static func hasValidator(_ entry: CachedResponse) -> Bool {
        entry.headers.cacheValue("etag") != nil || entry.headers.cacheValue("last-modified") != nil
    }

    /// `request` made conditional (§4.3.1): `If-None-Match` with the entity tags of `entry` and of
    /// every other stored variant in `others` (weak or strong, each sent exactly as received, the
    /// validated entry's first, §4.3.1 allows listing all), and `If-Modified-Since` with `entry`'s
    /// `Last-Modified`. Stored parts (206) are not offered. Unchanged when there is no validator.
    static func conditionalRequest(
        _ request: URLRequest, validating entry: CachedResponse?, others: [CachedResponse] = []
    ) -> URLRequest {
        var conditional = request
        let tags = entityTags(entry, others)
        if !tags.isEmpty {
            conditional.setValue(tags.joined(separator: ", "), forHTTPHeaderField: "If-None-Match")
        }
        if let lastModified = entry?.headers.cacheValue("last-modified") {
            conditional.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since")
        }
        return conditional
    }

    /// The distinct entity tags of `entry` and the complete responses among `others`, in order.
    static func entityTags(_ entry: CachedResponse?, _ others: [CachedResponse]) -> [String] {
        var tags: [String] = []
        let candidates = (entry.map { [$0] } ?? []) + others.filter { $0.statusCode != 206 }
        for candidate in candidates {
            guard let tag = candidate.headers.cacheValue("etag").map({ String(HeaderScanning.trim($0)) }),
                !tag.isEmpty, !tags.contains(tag)
            else { continue }
            tags.append(tag)
        }
        return tags
    }

    /// The stored response a 304 selects (§4.3.4): with an entity tag, the first of `validated`
    /// and `others` whose tag equals it by weak comparison (RFC 9110 §8.8.3.2); otherwise
    /// `validated`, if ``notModified(_:matches:)`` accepts it. `nil` when it selects nothing.
    static func selected(by response: HTTPResponse, validated: CachedResponse?, others: [CachedResponse]) -> CachedResponse? {
        if let tag = response.headers.cacheValue("etag") {
            let candidates = (validated.map { [$0] } ?? []) + others.filter { $0.statusCode != 206 }
            return candidates.first { entry in
                entry.headers.cacheValue("etag").map { weakTag($0) == weakTag(tag) } ?? false
            }
        }
        guard let validated, hasValidator(validated), notModified(response, matches: validated) else { return nil }
        return validated
    }

    /// `true` when `notModified` (a 304) may update `entry` (§4.3.4): when both carry an entity tag,
    /// the tags must be equal by weak comparison (RFC 9110 §8.8.3.2); when the 304 has none but a
    /// `Last-Modified`, that must equal the stored one; a 304 with neither selects the entry that
    /// was validated.
    static func notModified(_ notModified: HTTPResponse, matches entry: CachedResponse) -> Bool {
        if let tag = notModified.headers.cacheValue("etag") {
            guard let stored = entry.headers.cacheValue("etag") else { return false }
            return weakTag(tag) == weakTag(stored)
        }
        if let lastModified = notModified.headers.cacheValue("last-modified"),
            let stored = entry.headers.cacheValue("last-modified")
        {
            return HeaderScanning.date(lastModified) == HeaderScanning.date(stored)
        }
        return true
    }

    /// The stored response freshened by a 304 (§4.3.4): every field the 304 sends replaces all
    /// stored fields of that name, except ``protectedFields`` and the 304's hop-by-hop fields
    /// (``HopByHop``). The stored `Date` and `Age` always
    /// go, because they described the original exchange; the 304's own, if any, take their place,
    /// and `requestTime`/`responseTime` become those of the validation.
    static func freshen(
        _ entry: CachedResponse, with notModified: HTTPResponse, requestTime: Date, responseTime: Date
    ) -> CachedResponse {
        var updated = entry
        let incoming = HopByHop.removed(from: notModified.headers).fields.filter {
            !protectedFields.contains($0.name.lowercased())
        }
        let replaced = Set(incoming.map { $0.name.lowercased() }).union(["date", "age"])
        updated.headers = HTTPHeaders(entry.headers.fields.filter { !replaced.contains($0.name.lowercased()) } + incoming)
        updated.requestTime = requestTime
        updated.responseTime = responseTime
        return updated
    }

    /// `true` when a HEAD response's validators agree with the stored GET response, so its header
    /// fields may freshen it (§4.3.5), and its `Content-Length`, when it has one, is the stored
    /// one's (or the stored body's size).
    static func headResponse(_ head: HTTPResponse, agreesWith entry: CachedResponse) -> Bool {
        if let length = head.headers.cacheValue("content-length") {
            let stored = entry.headers.cacheValue("content-length") ?? String(entry.body.count)
            guard length.trimmingCharacters(in: .whitespaces) == stored.trimmingCharacters(in: .whitespaces) else {
                return false
            }
        }
        let tag = head.headers.cacheValue("etag")
        let storedTag = entry.headers.cacheValue("etag")
        if tag != nil || storedTag != nil {
            guard let tag, let storedTag else { return false }
            return weakTag(tag) == weakTag(storedTag)
        }
        let modified = head.headers.cacheValue("last-modified")
        let storedModified = entry.headers.cacheValue("last-modified")
        if modified != nil || storedModified != nil { return modified == storedModified }
        return true
    }

    /// The opaque tag without the weakness marker, for weak comparison.
    static func weakTag(_ tag: String) -> String {
        let trimmed = String(HeaderScanning.trim(tag))
        return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
    }
}
