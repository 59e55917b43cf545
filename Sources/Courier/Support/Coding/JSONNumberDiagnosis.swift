import Foundation

/// Finds the number behind a `JSONDecoder` failure that claims the body is not valid JSON.
///
/// Foundation's `JSONDecoder` reports a number that does not fit the type it is decoded into —
/// `9223372036854775808` or `12.5` into an `Int64`, `1e400` into anything — as
/// "The given data was not valid JSON" at the root, with no coding path, although the body is
/// valid JSON (RFC 8259 §6 puts no limit on a number's range or precision). On that error, and
/// only when the body really is valid JSON, Courier decodes again with some numbers replaced by
/// `0` (a binary search: at most about log2(n) + 1 extra decodes with the same decoder, only on
/// this failure path) to find the first number the type cannot hold, and reports it with its key
/// path, e.g. `items[1].id`.
package enum JSONNumberDiagnosis {
    /// A clearer error for `error`, or `nil` when `error` is not that decoder failure, the body
    /// is not valid JSON, or no single number explains it.
    package static func diagnose<T: Decodable>(
        _ error: any Error, decoding type: T.Type, from body: Data, with decoder: JSONDecoder
    ) -> DecodingError? {
        guard case DecodingError.dataCorrupted(let context)? = error as? DecodingError, context.codingPath.isEmpty,
            let numbers = JSONSyntax.numbers(in: body)
        else { return nil }
        let bytes = [UInt8](body)
        let decoder = silentCopy(of: decoder)
        func failsAsInvalid(keeping kept: ArraySlice<JSONSyntax.Number>, of all: [JSONSyntax.Number]) -> Bool {
            let keptStarts = Set(kept.map(\.range.lowerBound))
            var patched: [UInt8] = []
            patched.reserveCapacity(bytes.count)
            var cursor = 0
            for number in all where !keptStarts.contains(number.range.lowerBound) {
                patched += bytes[cursor..<number.range.lowerBound]
                patched.append(UInt8(ascii: "0"))
                cursor = number.range.upperBound
            }
            patched += bytes[cursor...]
            do {
                _ = try decoder.decode(T.self, from: Data(patched))
                return false
            } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
                return true
            } catch {
                return false
            }
        }
        // Numbers that fit no integer type or are not integers first; every number when those are
        // not the culprit (a -1 into a `UInt` beside a harmless `12.5`).
        let suspicious = numbers.filter(\.isOutsideInt64)
        let candidates =
            suspicious.isEmpty || failsAsInvalid(keeping: [], of: suspicious) ? numbers : suspicious
        guard !candidates.isEmpty, !failsAsInvalid(keeping: [], of: candidates) else { return nil }
        // Keeping a set of original numbers fails exactly when it holds a culprit.
        var range = candidates[...]
        while range.count > 1 {
            let half = range.prefix(range.count / 2)
            range = failsAsInvalid(keeping: half, of: candidates) ? half : range.dropFirst(half.count)
        }
        guard let culprit = range.first, failsAsInvalid(keeping: range, of: candidates) else { return nil }
        let description =
            "The number \(culprit.text) does not fit the type it is decoded into "
            + "(out of range, not an integer, or not finite); the body itself is valid JSON"
        return .dataCorrupted(.init(codingPath: culprit.path, debugDescription: description))
    }

    /// `decoder`'s settings without its ``LossyDecodingReporter``: the diagnostic decodes must not
    /// report the skips of the failed decode again.
    private static func silentCopy(of decoder: JSONDecoder) -> JSONDecoder {
        let copy = JSONDecoder()
        copy.dateDecodingStrategy = decoder.dateDecodingStrategy
        copy.dataDecodingStrategy = decoder.dataDecodingStrategy
        copy.nonConformingFloatDecodingStrategy = decoder.nonConformingFloatDecodingStrategy
        copy.keyDecodingStrategy = decoder.keyDecodingStrategy
        copy.allowsJSON5 = decoder.allowsJSON5
        copy.assumesTopLevelDictionary = decoder.assumesTopLevelDictionary
        var userInfo = decoder.userInfo
        userInfo[.lossyDecodingReporter] = nil
        copy.userInfo = userInfo
        return copy
    }
}

/// A validating RFC 8259 scanner that records every number literal with its key path.
package enum JSONSyntax {
    struct Number {
        var path: [any CodingKey]
        var range: Range<Int>
        var text: String

        /// Not an integer literal in `Int64.min...Int64.max` (fraction, exponent or out of range).
        var isOutsideInt64: Bool { Int64(text) == nil }
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int?
        init(stringValue: String) { self.stringValue = stringValue }
        init(intValue: Int) {
            self.stringValue = "Index \(intValue)"
            self.intValue = intValue
        }
    }

    /// Nesting deeper than this is not scanned (no unbounded recursion on hostile input).
    static let maxDepth = 512

    /// Whether `data` is one valid JSON value (RFC 8259; numbers of any size, one leading BOM allowed).
    package static func isValid(_ data: Data) -> Bool { numbers(in: data) != nil }

    /// Every number literal in `data` in document order, or `nil` when `data` is not valid JSON.
    static func numbers(in data: Data) -> [Number]? {
        var scanner = Scanner(bytes: [UInt8](data))
        if scanner.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { scanner.index = 3 }
        guard scanner.value(path: [], depth: 0) else { return nil }
        scanner.skipWhitespace()
        return scanner.index == scanner.bytes.count ? scanner.numbers : nil
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var numbers: [Number] = []

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func value(path: [any CodingKey], depth: Int) -> Bool {
            guard depth <= JSONSyntax.maxDepth else { return false }
            skipWhitespace()
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "{"): return object(path: path, depth: depth)
            case UInt8(ascii: "["): return array(path: path, depth: depth)
            case UInt8(ascii: "\""): return string() != nil
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number(path: path)
            }
        }

        private mutating func object(path: [any CodingKey], depth: Int) -> Bool {
            members(closedBy: UInt8(ascii: "}")) { scanner, _ in scanner.keyedMember(path: path, depth: depth) }
        }

        /// One `"key": value` member of an object.
        private mutating func keyedMember(path: [any CodingKey], depth: Int) -> Bool {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = string() else { return false }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return false }
            index += 1
            return value(path: path + [Key(stringValue: key)], depth: depth + 1)
        }

        private mutating func array(path: [any CodingKey], depth: Int) -> Bool {
            members(closedBy: UInt8(ascii: "]")) { scanner, element in
                scanner.value(path: path + [Key(intValue: element)], depth: depth + 1)
            }
        }

        /// An object's or array's members, from its opening bracket through `close`: `member`
        /// parses the member with the given index (from 0); members are separated by commas.
        private mutating func members(closedBy close: UInt8, _ member: (inout Scanner, Int) -> Bool) -> Bool {
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == close {
                index += 1
                return true
            }
            var count = 0
            while true {
                guard member(&self, count) else { return false }
                count += 1
                skipWhitespace()
                guard index < bytes.count else { return false }
                if bytes[index] == close {
                    index += 1
                    return true
                }
                guard bytes[index] == UInt8(ascii: ",") else { return false }
                index += 1
            }
        }

        /// A string's decoded text (escapes undone well enough for key names), or `nil` if malformed.
        private mutating func string() -> String? {
            index += 1
            var text: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return String(decoding: text, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index + 1 < bytes.count else { return nil }
                    let escaped = bytes[index + 1]
                    if escaped == UInt8(ascii: "u") {
                        guard index + 5 < bytes.count,
                            bytes[(index + 2)...(index + 5)].allSatisfy({
                                ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66)
                            })
                        else { return nil }
                        text += Array("\\u".utf8) + bytes[(index + 2)...(index + 5)]
                        index += 6
                    } else {
                        guard "\"\\/bfnrt".utf8.contains(escaped) else { return nil }
                        text.append(
                            escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\") || escaped == UInt8(ascii: "/")
                                ? escaped : 0x20)
                        index += 2
                    }
                case 0x00..<0x20:
                    return nil
                default:
                    text.append(byte)
                    index += 1
                }
            }
            return nil
        }

        private mutating func literal(_ word: String) -> Bool {
            let expected = Array(word.utf8)
            guard bytes.count - index >= expected.count, Array(bytes[index..<(index + expected.count)]) == expected else {
                return false
            }
            index += expected.count
            return true
        }

        /// RFC 8259 §6: `-? int frac? exp?`.
        private mutating func number(path: [any CodingKey]) -> Bool {
            let start = index
            func digits() -> Int {
                let from = index
                while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
                return index - from
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count else { return false }
            if bytes[index] == UInt8(ascii: "0") { index += 1 } else if digits() == 0 { return false }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { return false }
            }
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { return false }
            }
            numbers.append(Number(path: path, range: start..<index, text: String(decoding: bytes[start..<index], as: UTF8.self)))
            return true
        }
    }
}
