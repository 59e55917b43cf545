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

    /// `request` made conditional on `entry` (§4.3.1): `If-None-Match` with the stored entity tag
    /// (weak or strong, sent exactly as received) and `If-Modified-Since` with the stored
    /// `Last-Modified`. Unchanged when the entry has no validator.
    static func conditionalRequest(_ request: URLRequest, validating entry: CachedResponse) -> URLRequest {
        var conditional = request
        if let etag = entry.headers.cacheValue("etag") {
            conditional.setValue(etag, forHTTPHeaderField: "If-None-Match")
        }
        if let lastModified = entry.headers.cacheValue("last-modified") {
            conditional.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since")
        }
        return conditional
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
           let stored = entry.headers.cacheValue("last-modified") {
            return HeaderScanning.date(lastModified) == HeaderScanning.date(stored)
        }
        return true
    }

    /// The stored response freshened by a 304 (§4.3.4): every field the 304 sends replaces all
    /// stored fields of that name, except ``protectedFields``. The stored `Date` and `Age` always
    /// go, because they described the original exchange; the 304's own, if any, take their place,
    /// and `requestTime`/`responseTime` become those of the validation.
    static func freshen(
        _ entry: CachedResponse, with notModified: HTTPResponse, requestTime: Date, responseTime: Date
    ) -> CachedResponse {
        var updated = entry
        let incoming = notModified.headers.fields.filter { !protectedFields.contains($0.name.lowercased()) }
        let replaced = Set(incoming.map { $0.name.lowercased() }).union(["date", "age"])
        updated.headers = HTTPHeaders(entry.headers.fields.filter { !replaced.contains($0.name.lowercased()) } + incoming)
        updated.requestTime = requestTime
        updated.responseTime = responseTime
        return updated
    }

    /// `true` when a HEAD response's validators agree with the stored GET response, so its header
    /// fields may freshen it (§4.3.5).
    static func headResponse(_ head: HTTPResponse, agreesWith entry: CachedResponse) -> Bool {
        let tag = head.headers.cacheValue("etag"), storedTag = entry.headers.cacheValue("etag")
        if tag != nil || storedTag != nil {
            guard let tag, let storedTag else { return false }
            return weakTag(tag) == weakTag(storedTag)
        }
        let modified = head.headers.cacheValue("last-modified"), storedModified = entry.headers.cacheValue("last-modified")
        if modified != nil || storedModified != nil { return modified == storedModified }
        return true
    }

    /// The opaque tag without the weakness marker, for weak comparison.
    static func weakTag(_ tag: String) -> String {
        let trimmed = String(HeaderScanning.trim(tag))
        return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
    }
}
