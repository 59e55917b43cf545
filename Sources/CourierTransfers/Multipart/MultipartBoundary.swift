import Courier
import Foundation

/// Boundaries of `multipart/form-data` bodies (RFC 2046 §5.1.1, RFC 7578 §4.1).
enum MultipartBoundary {
    /// Random characters in a generated boundary: 40 of 62 letters and digits, about 238 bits.
    /// A delimiter can only be missed if a file part happens to contain `CRLF--` and these exact
    /// 48 characters: for a file of `n` bytes the probability is below `n × 2⁻²³⁸` (for a 1 TiB
    /// file, below 2⁻¹⁹⁸). In-memory parts are checked instead.
    static let randomCount = 40
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

    /// A new random boundary, `courier-` and ``randomCount`` letters and digits (48 characters).
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = Array("courier-".utf8)
        for _ in 0..<randomCount { bytes.append(alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))]) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `boundary` is 1–70 `bchars` not ending in a space (RFC 2046 §5.1.1).
    static func isValid(_ boundary: String) -> Bool {
        let bytes = Array(boundary.utf8)
        guard (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " ") else { return false }
        return bytes.allSatisfy { $0.isASCIIAlphanumeric || "'()+_,-./:=? ".utf8.contains($0) }
    }

    /// Whether `boundary` occurs anywhere in `data` (stricter than the delimiter `CRLF--boundary`).
    static func occurs(_ boundary: String, in data: Data) -> Bool {
        data.range(of: Data(boundary.utf8)) != nil
    }
}
