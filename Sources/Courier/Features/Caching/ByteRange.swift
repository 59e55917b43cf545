import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One byte range a request asks for with `Range: bytes=…` (RFC 9110 §14.1.2). The cache answers
/// single ranges only; a request with several ranges or another range unit goes to the origin.
struct ByteRange: Sendable, Hashable {
    enum Spec: Sendable, Hashable {
        /// `first-last`, or `first-` when `last` is `nil` (to the end).
        case from(first: Int, last: Int?)
        /// `-length`: the last `length` bytes.
        case suffix(length: Int)
    }

    let spec: Spec

    /// The single byte range of `request`'s `Range` field; `nil` when there is none, when it
    /// lists several ranges, uses another unit, or is malformed (RFC 9110 §14.2).
    init?(_ request: URLRequest) {
        guard let value = request.value(forHTTPHeaderField: "Range") else { return nil }
        self.init(value)
    }

    /// Parses a `Range` field value such as `bytes=0-99`, `bytes=100-` or `bytes=-5`.
    init?(_ value: String) {
        let trimmed = HeaderScanning.trim(value)
        guard trimmed.lowercased().hasPrefix("bytes="), !trimmed.contains(",") else { return nil }
        let parts = trimmed.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let first = HeaderScanning.trim(parts[0])
        let last = HeaderScanning.trim(parts[1])
        if first.isEmpty {
            guard let length = Self.digits(last), length > 0 else { return nil }
            spec = .suffix(length: length)
        } else {
            guard let start = Self.digits(first) else { return nil }
            if last.isEmpty {
                spec = .from(first: start, last: nil)
            } else {
                guard let end = Self.digits(last), end >= start else { return nil }
                spec = .from(first: start, last: end)
            }
        }
    }

    /// The bytes selected in a representation of `length` bytes, clamped as RFC 9110 §14.1.2
    /// says (a `last` beyond the end means the end); `nil` when unsatisfiable.
    func resolved(length: Int) -> ClosedRange<Int>? {
        guard length > 0 else { return nil }
        switch spec {
        case .from(let first, let last):
            guard first < length else { return nil }
            return first...min(last ?? (length - 1), length - 1)
        case .suffix(let count):
            return max(0, length - count)...(length - 1)
        }
    }

    private static func digits(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }
}

/// A `Content-Range: bytes first-last/complete-length` field of a `206` (RFC 9110 §14.4), with a
/// known complete length (the cache cannot combine parts of a representation of unknown length).
struct ContentRange: Sendable, Hashable {
    /// The bytes the part holds.
    let range: ClosedRange<Int>
    /// The length of the whole representation, in bytes.
    let completeLength: Int

    init(range: ClosedRange<Int>, completeLength: Int) {
        self.range = range
        self.completeLength = completeLength
    }

    /// Parses `headers`' `Content-Range`; `nil` when absent, repeated, or not a satisfied byte
    /// range with a complete length that contains it.
    init?(_ headers: HTTPHeaders) {
        let values = headers.cacheValues("content-range")
        guard values.count == 1 else { return nil }
        let text = HeaderScanning.trim(values[0])
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = text.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let first = Int(HeaderScanning.trim(bounds[0])), let last = Int(HeaderScanning.trim(bounds[1])),
            let length = Int(HeaderScanning.trim(parts[1])), first >= 0, first <= last, last < length
        else { return nil }
        range = first...last
        completeLength = length
    }

    /// The field value, e.g. `bytes 0-4/10`.
    var fieldValue: String { "bytes \(range.lowerBound)-\(range.upperBound)/\(completeLength)" }
}
