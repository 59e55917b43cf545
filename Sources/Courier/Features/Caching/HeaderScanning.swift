import Foundation

/// Allocation-light header helpers for the cache's hot path. Header names and directive names are
/// ASCII (RFC 9110 §5.1), so comparisons here are byte-wise ASCII case-insensitive instead of going
/// through Foundation's locale-aware string comparison, which is many times slower on Linux.
enum HeaderScanning {
    /// `true` when `name` equals `lowercased` (which must already be lower-case ASCII), ignoring
    /// ASCII case.
    static func equals(_ name: String, lowercased: String) -> Bool {
        var left = name.utf8.makeIterator()
        var right = lowercased.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let a?, let b?):
                let folded = (a >= 0x41 && a <= 0x5A) ? a | 0x20 : a
                if folded != b { return false }
            default: return false
            }
        }
    }

    /// `text` without leading and trailing spaces and tabs (the only whitespace of HTTP fields,
    /// RFC 9110 §5.6.3).
    static func trim<S: StringProtocol>(_ text: S) -> Substring {
        var slice = Substring(text)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return slice
    }

    /// Parses an HTTP-date exactly (see ``StrictHTTPDate``): `nil` for anything RFC 9110 §5.6.7
    /// does not allow, so an invalid `Expires` counts as already expired (RFC 9111 §5.3).
    static func date(_ text: String) -> Date? {
        StrictHTTPDate.parse(text)
    }
}

extension HTTPHeaders {
    /// Every value of the field `lowercasedName` (lower-case ASCII), in order.
    func cacheValues(_ lowercasedName: String) -> [String] {
        var values: [String] = []
        for field in fields where HeaderScanning.equals(field.name, lowercased: lowercasedName) {
            values.append(field.value)
        }
        return values
    }

    /// The values of `lowercasedName` joined with `", "`, or `nil` when absent.
    func cacheValue(_ lowercasedName: String) -> String? {
        var result: String?
        for field in fields where HeaderScanning.equals(field.name, lowercased: lowercasedName) {
            result = result.map { $0 + ", " + field.value } ?? field.value
        }
        return result
    }

    /// A copy without the field `lowercasedName`, with `value` appended under `name` when given.
    func cacheReplacing(_ lowercasedName: String, name: String, with value: String?) -> HTTPHeaders {
        var kept = fields.filter { !HeaderScanning.equals($0.name, lowercased: lowercasedName) }
        if let value { kept.append(Field(name: name, value: value)) }
        return HTTPHeaders(kept)
    }
}
