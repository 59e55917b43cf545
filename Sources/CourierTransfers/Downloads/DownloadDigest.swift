import Courier
import Foundation

/// A SHA-256 digest the server sent for a download, and what it covers.
///
/// Courier checks SHA-256 only (the one algorithm every platform here can compute without a
/// dependency); a response that offers only other algorithms is not checked.
package struct DownloadDigest: Sendable, Equatable {
    /// What the digest was computed over.
    package enum Scope: Sendable, Equatable {
        /// The whole selected representation — `Repr-Digest` (RFC 9530 §3) or the legacy
        /// `Digest` (RFC 3230 §4.3.2) — so a file assembled from several responses is checked whole.
        case representation
        /// The bytes of this one response — `Content-Digest` (RFC 9530 §2): on a `206` only the part.
        case content
    }

    /// The 32 digest bytes.
    package let sha256: [UInt8]
    /// What they cover.
    package let scope: Scope
    /// The field it came from, for error messages (`Repr-Digest`, `Content-Digest`, `Digest`).
    package let field: String

    /// The digest to check for `headers`: `Repr-Digest` first, then `Content-Digest`, then
    /// `Digest`; only their `sha-256` member. `nil` when there is none, when it is malformed,
    /// or when the body is content-coded (RFC 9530 digests are over the encoded bytes, which
    /// the transport has already decoded).
    package static func expected(in headers: HTTPHeaders) -> DownloadDigest? {
        guard !DownloadRules.isContentCoded(headers) else { return nil }
        if let bytes = structuredSHA256(headers.values(for: "Repr-Digest")) {
            return DownloadDigest(sha256: bytes, scope: .representation, field: "Repr-Digest")
        }
        if let bytes = structuredSHA256(headers.values(for: "Content-Digest")) {
            return DownloadDigest(sha256: bytes, scope: .content, field: "Content-Digest")
        }
        if let bytes = legacySHA256(headers.values(for: "Digest")) {
            return DownloadDigest(sha256: bytes, scope: .representation, field: "Digest")
        }
        return nil
    }

    /// A whole representation's digest kept from an earlier response (resume data); `nil` unless
    /// `sha256` has 32 bytes.
    static func representation(sha256: Data) -> DownloadDigest? {
        guard sha256.count == 32 else { return nil }
        return DownloadDigest(sha256: Array(sha256), scope: .representation, field: "Repr-Digest")
    }

    /// The `sha-256` member of an RFC 9530 dictionary (`sha-256=:BASE64:, sha-512=:…:`, RFC 8941
    /// §3.2 byte sequences); parameters after `;` are ignored.
    static func structuredSHA256(_ values: [String]) -> [UInt8]? {
        for member in values.flatMap({ $0.split(separator: ",") }) {
            let pair = member.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, DownloadRules.trim(String(pair[0])) == "sha-256" else { continue }
            let value = DownloadRules.trim(String(pair[1].split(separator: ";", maxSplits: 1).first ?? ""))
            guard value.count >= 2, value.hasPrefix(":"), value.hasSuffix(":") else { return nil }
            return decode(String(value.dropFirst().dropLast()))
        }
        return nil
    }

    /// The `SHA-256` instance digest of a legacy `Digest` field (`SHA-256=BASE64`, algorithm
    /// names case-insensitive, RFC 3230 §4.3.2, RFC 5843).
    static func legacySHA256(_ values: [String]) -> [UInt8]? {
        for member in values.flatMap({ $0.split(separator: ",") }) {
            let pair = member.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, DownloadRules.trim(String(pair[0])).lowercased() == "sha-256" else { continue }
            return decode(DownloadRules.trim(String(pair[1])))
        }
        return nil
    }

    private static func decode(_ base64: String) -> [UInt8]? {
        guard let data = Data(base64Encoded: base64), data.count == 32 else { return nil }
        return Array(data)
    }

    /// The hex form, for error messages.
    package static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
