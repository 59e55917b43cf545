import Courier
import Foundation

/// What a download does with the response to one attempt (RFC 9110 §14 and §13.1.5).
package enum DownloadStep: Sendable, Equatable {
    /// Write the body starting at byte `offset` of the file: `0` for a whole representation
    /// (a `200`), the requested offset for a `206` that continues the partial data.
    /// `completeLength` is the representation's length in bytes when it is known for the bytes
    /// as they arrive (identity coding): for a `206` whose `Content-Range` ends in `/*` (complete
    /// length unknown, RFC 9110 §14.4), the length an earlier response announced for the same
    /// validator, else `nil` — the part's end is then no proof that the file is whole.
    /// `discardsPartial` is `true` when bytes already on disk must be dropped first (the server
    /// sent the whole file instead of the range).
    case write(offset: Int64, completeLength: Int64?, discardsPartial: Bool)
    /// The partial file already holds the whole representation: a `416` whose
    /// `Content-Range: bytes */N` has `N` equal to the requested offset (RFC 9110 §15.5.17).
    case complete(length: Int64)
    /// The partial data cannot be continued with this response (a `206` that does not start at
    /// the requested offset or belongs to another validator, a `416` for another length): drop
    /// the response and the partial data and ask again for the whole representation.
    case restart(reason: String)
    /// The response cannot be used at all (a `206` to a request without `Range`).
    case invalid(reason: String)
}

/// The byte-range rules of resumable downloads, free of I/O so that each rule is tested alone.
package enum DownloadRules {
    /// The `Range` field value asking for everything from `offset` on: `bytes=N-` (RFC 9110 §14.1.2).
    package static func rangeValue(from offset: Int64) -> String { "bytes=\(offset)-" }

    /// The strong validator of a response, exactly as sent, for a later `If-Range` (RFC 9110
    /// §13.1.5): its entity tag when the tag is strong (RFC 9110 §8.8.3; `W/` marks a weak one,
    /// which `If-Range` must not carry); without an entity tag, its `Last-Modified` date when that
    /// is strong by RFC 9110 §8.8.2.2 (the response's `Date` is at least 60 seconds later). `nil`
    /// when the response has neither — such a download is not resumable.
    package static func strongValidator(in headers: HTTPHeaders) -> String? {
        let tags = headers.values(for: "ETag")
        if let tag = tags.first.map(trim) {
            guard tags.count == 1, !tag.hasPrefix("W/"), isEntityTag(tag) else { return nil }
            return tag
        }
        let dates = headers.values(for: "Last-Modified")
        guard dates.count == 1, let modifiedText = dates.first.map(trim), let modified = HTTPDate.parse(modifiedText),
            let dateText = headers["Date"], let date = HTTPDate.parse(trim(dateText)),
            date.timeIntervalSince(modified) >= 60
        else { return nil }
        return modifiedText
    }

    /// `true` when the response's `Content-Encoding` names a coding other than `identity`:
    /// byte offsets then count encoded bytes, which the transport has already decoded, so
    /// neither lengths, ranges nor digests can be checked against the bytes written.
    package static func isContentCoded(_ headers: HTTPHeaders) -> Bool {
        headers.values(for: "Content-Encoding").joined(separator: ",").split(separator: ",").contains {
            let coding = trim(String($0)).lowercased()
            return !coding.isEmpty && coding != "identity"
        }
    }

    /// `true` when the server said it serves no ranges (`Accept-Ranges: none`, RFC 9110 §14.3).
    /// A server that says nothing may still honour `Range`; the answer tells.
    package static func refusesRanges(_ headers: HTTPHeaders) -> Bool {
        headers.values(for: "Accept-Ranges").contains { trim($0).lowercased() == "none" }
    }

    /// The length in bytes of the whole representation of a `200`, as it will arrive: its
    /// `Content-Length` when the body is not content-coded and the field is a single valid
    /// number; `nil` otherwise (chunked, compressed, or absent — unknown, never guessed).
    package static func completeLength(ofWhole headers: HTTPHeaders) -> Int64? {
        guard !isContentCoded(headers) else { return nil }
        let values = Set(headers.values(for: "Content-Length").flatMap { $0.split(separator: ",") }.map { trim(String($0)) })
        guard values.count == 1, let text = values.first else { return nil }
        return digits(text)
    }

    /// What to do with `response` (status and header fields; the body is still unread).
    ///
    /// - Parameters:
    ///   - response: The response to the attempt.
    ///   - requestedOffset: The `N` of the `Range: bytes=N-` that was sent, `nil` when the
    ///     request had no `Range`.
    ///   - validator: The `If-Range` value that was sent with the `Range`.
    ///   - knownLength: The complete length of the representation the partial bytes belong to,
    ///     when an earlier response announced it. A `206` or `416` that gives another complete
    ///     length is about another representation, whatever its validator says (a server that
    ///     ignores `If-Range`, or reuses an entity tag): its bytes would be spliced onto a prefix of
    ///     the old one, or the prefix taken for the whole file.
    package static func step(
        for response: HTTPResponse, requestedOffset: Int64?, validator: String?, knownLength: Int64? = nil
    ) -> DownloadStep {
        let headers = response.headers
        guard let offset = requestedOffset else {
            if response.statusCode == 206 { return .invalid(reason: "206 Partial Content to a request without Range") }
            return .write(offset: 0, completeLength: completeLength(ofWhole: headers), discardsPartial: false)
        }
        switch response.statusCode {
        case 206:
            guard !isContentCoded(headers) else { return .restart(reason: "206 with a content coding") }
            guard let part = DownloadContentRange(headers), case .bytes(let first, let last, let complete) = part else {
                return .restart(reason: "206 without a single satisfied byte Content-Range")
            }
            guard first == offset else { return .restart(reason: "206 Content-Range starts at \(first), not \(offset)") }
            guard let validator, strongValidator(in: headers) == validator else {
                return .restart(reason: "206 for another validator than \(validator ?? "none")")
            }
            if let knownLength, let complete, complete != knownLength {
                return .restart(reason: "206 for a representation of \(complete) bytes, not \(knownLength)")
            }
            // `bytes a-b/*`: the same validator means the same representation, so the length an
            // earlier response announced still holds — and a part that ends beyond it is another one.
            if complete == nil, let knownLength, last >= knownLength {
                return .restart(reason: "206 Content-Range ends at \(last), beyond the \(knownLength) bytes announced")
            }
            return .write(offset: offset, completeLength: complete ?? knownLength, discardsPartial: false)
        case 416:
            if let tag = strongValidator(in: headers), let validator, tag != validator {
                return .restart(reason: "416 for another validator")
            }
            // A weak tag, or a date too recent to be strong, still names a representation: one other
            // than the validator sent is another file (of the same length, or the partial bytes would
            // not be taken for the whole), which the old bytes must not stand for.
            if let validator, namesAnotherValidator(headers, than: validator) {
                return .restart(reason: "416 naming another validator than \(validator)")
            }
            guard let part = DownloadContentRange(headers), case .unsatisfied(let complete) = part else {
                return .restart(reason: "416 without Content-Range: bytes */length")
            }
            guard offset > 0, complete == offset else {
                return .restart(reason: "416: the representation has \(complete) bytes, the partial file \(offset)")
            }
            if let knownLength, knownLength != complete {
                return .restart(reason: "416 for a representation of \(complete) bytes, not \(knownLength)")
            }
            return .complete(length: complete)
        default:
            // The server ignored Range, or If-Range did not match: this is the whole (possibly
            // new) representation (RFC 9110 §13.1.5, §14.2).
            return .write(offset: 0, completeLength: completeLength(ofWhole: headers), discardsPartial: offset > 0)
        }
    }

    /// `true` when `headers` name a validator other than `validator` (the `If-Range` value sent),
    /// weak ones included: for an entity tag, any `ETag` field that is not exactly it; for a date,
    /// any `Last-Modified` field that is not exactly it. A response that names none says nothing.
    static func namesAnotherValidator(_ headers: HTTPHeaders, than validator: String) -> Bool {
        let field = validator.hasPrefix("\"") ? "ETag" : "Last-Modified"
        return headers.values(for: field).contains { trim($0) != validator }
    }

    static func trim(_ text: String) -> String { text.trimmingCharacters(in: .whitespaces) }

    /// A non-negative decimal number of at most 18 digits (no sign, no spaces).
    static func digits(_ text: some StringProtocol) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }

    /// `"opaque"` with visible characters other than `"` inside (RFC 9110 §8.8.3).
    private static func isEntityTag(_ tag: String) -> Bool {
        let bytes = Array(tag.utf8)
        guard bytes.count >= 2, bytes.first == 0x22, bytes.last == 0x22 else { return false }
        return bytes.dropFirst().dropLast().allSatisfy { $0 == 0x21 || ($0 >= 0x23 && $0 != 0x7F) }
    }
}

/// A `Content-Range` field (RFC 9110 §14.4) in the two forms a download meets:
/// `bytes first-last/complete` on a `206` and `bytes */complete` on a `416`.
package enum DownloadContentRange: Sendable, Equatable {
    /// `bytes first-last/complete`; `complete` is `nil` for `*` (unknown).
    case bytes(first: Int64, last: Int64, complete: Int64?)
    /// `bytes */complete`.
    case unsatisfied(complete: Int64)

    /// Parses the single `Content-Range` of `headers`; `nil` when absent, repeated, another
    /// unit, or malformed (last before first, a complete length not beyond last).
    package init?(_ headers: HTTPHeaders) {
        let values = headers.values(for: "Content-Range")
        guard values.count == 1, let value = values.first else { return nil }
        self.init(value)
    }

    /// Parses a field value such as `bytes 0-99/1000`, `bytes 0-99/*` or `bytes */1000`.
    package init?(_ value: String) {
        let text = DownloadRules.trim(value)
        guard text.count > 6, text.prefix(6).lowercased() == "bytes " else { return nil }
        let parts = text.dropFirst(6).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let range = DownloadRules.trim(String(parts[0]))
        let lengthText = DownloadRules.trim(String(parts[1]))
        if range == "*" {
            guard let complete = DownloadRules.digits(lengthText) else { return nil }
            self = .unsatisfied(complete: complete)
            return
        }
        let bounds = range.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = DownloadRules.digits(bounds[0]), let last = DownloadRules.digits(bounds[1]),
            first <= last
        else { return nil }
        if lengthText == "*" {
            self = .bytes(first: first, last: last, complete: nil)
            return
        }
        guard let complete = DownloadRules.digits(lengthText), last < complete else { return nil }
        self = .bytes(first: first, last: last, complete: complete)
    }
}
