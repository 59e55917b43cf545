import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Partial content in the cache (RFC 9111 §3.3, §3.4; RFC 9110 §14): answering a single byte
/// range from a stored complete or partial response, storing `206` responses, and combining
/// parts of one representation into a complete response.
///
/// Ranges count bytes of the representation as sent. URLSession undoes content codings, so a
/// stored body with a `Content-Encoding` other than `identity` is never sliced, and such `206`s
/// are not stored.
enum PartialContent {
    /// `true` when `entry` can answer a request for `range` (`nil`: the whole representation)
    /// without the network: a complete entry answers anything satisfiable; a stored part answers
    /// only ranges wholly inside it (§3.4) and never a request for the whole.
    static func canAnswer(_ entry: CachedResponse, range: ByteRange?) -> Bool {
        guard let range else { return entry.statusCode != 206 }
        guard !isEncoded(entry.headers) else { return false }
        if entry.statusCode != 206 {
            return entry.statusCode == 200 && range.resolved(length: entry.body.count) != nil
        }
        guard let part = ContentRange(entry.headers), let wanted = range.resolved(length: part.completeLength) else {
            return false
        }
        return part.range.contains(wanted.lowerBound) && part.range.contains(wanted.upperBound)
    }

    /// `response` (built from a stored entry ``canAnswer(_:range:)`` accepted) cut to `range`:
    /// a `206` with `Content-Range` and `Content-Length` of the part (RFC 9110 §15.3.7).
    static func slice(_ response: HTTPResponse, to range: ByteRange) -> HTTPResponse {
        let stored: ClosedRange<Int>
        let length: Int
        if response.statusCode == 206, let part = ContentRange(response.headers) {
            stored = part.range
            length = part.completeLength
        } else {
            stored = 0...max(0, response.data.count - 1)
            length = response.data.count
        }
        guard let wanted = range.resolved(length: length), stored.contains(wanted.lowerBound),
            stored.contains(wanted.upperBound), wanted.upperBound - stored.lowerBound < response.data.count
        else { return response }
        var sliced = response
        let start = response.data.startIndex + (wanted.lowerBound - stored.lowerBound)
        sliced.data = response.data.subdata(in: start..<(start + wanted.count))
        sliced.statusCode = 206
        sliced.headers.replace("Content-Range", with: ContentRange(range: wanted, completeLength: length).fieldValue)
        sliced.headers.replace("Content-Length", with: String(wanted.count))
        return sliced
    }

    /// `true` when a `206` to `request` may be stored: the request asked for one byte range, the
    /// response's `Content-Range` is valid with a known complete length and matches the body, and
    /// the body is not content-coded.
    static func isStorable(_ response: HTTPResponse, for request: URLRequest) -> Bool {
        guard response.statusCode == 206, ByteRange(request) != nil, !isEncoded(response.headers),
            let part = ContentRange(response.headers)
        else { return false }
        return part.range.count == response.data.count
    }

    /// `stored` and `new`, two stored parts of the same representation, combined (RFC 9110 §14.3:
    /// only when both carry the same strong entity tag and complete length, and the parts touch or
    /// overlap). The header fields are the newer part's; the bytes of `new` win where they overlap.
    /// A combination that covers the whole representation becomes a complete `200` without
    /// `Content-Range`. `nil` when they cannot be combined.
    static func combine(_ stored: CachedResponse, with new: CachedResponse) -> CachedResponse? {
        guard stored.statusCode == 206, new.statusCode == 206,
            let tag = strongTag(new.headers), strongTag(stored.headers) == tag,
            let old = ContentRange(stored.headers), let part = ContentRange(new.headers),
            old.completeLength == part.completeLength,
            stored.body.count == old.range.count, new.body.count == part.range.count,
            old.range.lowerBound <= part.range.upperBound + 1, part.range.lowerBound <= old.range.upperBound + 1
        else { return nil }
        let union = min(old.range.lowerBound, part.range.lowerBound)...max(old.range.upperBound, part.range.upperBound)
        var bytes = Data(count: union.count)
        bytes.replaceSubrange(Self.offsets(old.range, in: union), with: stored.body)
        bytes.replaceSubrange(Self.offsets(part.range, in: union), with: new.body)
        var combined = new
        combined.body = bytes
        if union.lowerBound == 0, union.count == part.completeLength {
            combined.statusCode = 200
            combined.headers.remove("Content-Range")
        } else {
            combined.headers.replace(
                "Content-Range", with: ContentRange(range: union, completeLength: part.completeLength).fieldValue)
        }
        combined.headers.replace("Content-Length", with: String(union.count))
        return combined
    }

    /// The strong entity tag of `headers` (RFC 9110 §8.8.3), `nil` when absent or weak.
    static func strongTag(_ headers: HTTPHeaders) -> String? {
        guard let tag = headers.cacheValue("etag").map({ String(HeaderScanning.trim($0)) }), !tag.hasPrefix("W/") else {
            return nil
        }
        return tag
    }

    /// `true` when `headers` name a content coding other than `identity`.
    static func isEncoded(_ headers: HTTPHeaders) -> Bool {
        guard let coding = headers.cacheValue("content-encoding") else { return false }
        return coding.split(separator: ",").contains { HeaderScanning.trim($0).lowercased() != "identity" }
    }

    private static func offsets(_ range: ClosedRange<Int>, in union: ClosedRange<Int>) -> Range<Int> {
        (range.lowerBound - union.lowerBound)..<(range.upperBound - union.lowerBound + 1)
    }
}
