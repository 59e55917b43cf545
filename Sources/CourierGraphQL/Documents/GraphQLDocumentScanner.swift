import Foundation

/// Finds the named operation definitions of a GraphQL document (GraphQL spec §2.3) without a full
/// parser: it tokenises names at the top level — outside `{…}` selection sets and `(…)` variable
/// definitions, skipping comments and (block) strings — and reads `query|mutation|subscription Name`.
///
/// Fragment definitions (`fragment query on T`) and anonymous operations (`{ … }`) are skipped;
/// ``GraphQLClient`` sends named operations only.
enum GraphQLDocumentScanner {
    /// The operation type of every named operation in `document`, by name.
    static func operations(in document: String) -> [String: GraphQLOperationType] {
        let bytes = Array(document.utf8)
        var result: [String: GraphQLOperationType] = [:]
        var index = 0
        var braceDepth = 0
        var parenDepth = 0
        var previousName: String?
        var pendingType: GraphQLOperationType?

        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "#"):
                while index < bytes.count, bytes[index] != 0x0A, bytes[index] != 0x0D { index += 1 }
                continue
            case UInt8(ascii: "\""):
                index = skipString(bytes, from: index)
                previousName = nil
                pendingType = nil
                continue
            case UInt8(ascii: "{"):
                braceDepth += 1
            case UInt8(ascii: "}"):
                braceDepth = max(0, braceDepth - 1)
            case UInt8(ascii: "("):
                parenDepth += 1
            case UInt8(ascii: ")"):
                parenDepth = max(0, parenDepth - 1)
            default:
                if isNameStart(byte) {
                    let start = index
                    while index < bytes.count, isNameContinue(bytes[index]) { index += 1 }
                    guard braceDepth == 0, parenDepth == 0 else { continue }
                    let name = String(decoding: bytes[start..<index], as: UTF8.self)
                    if let type = pendingType {
                        result[name] = result[name] ?? type
                        pendingType = nil
                    } else if previousName != "fragment", let type = GraphQLOperationType(rawValue: name) {
                        pendingType = type
                    }
                    previousName = name
                    continue
                }
            }
            if byte != 0x20, byte != 0x09, byte != 0x0A, byte != 0x0D, byte != UInt8(ascii: ",") {
                // Any punctuator ends a `keyword Name` pair (`query (` or `query {` is anonymous).
                pendingType = nil
                previousName = nil
            }
            index += 1
        }
        return result
    }

    /// The index after the string starting at `start` (a `"…"` string with escapes, or a
    /// `"""…"""` block string where only `\"""` is an escape).
    private static func skipString(_ bytes: [UInt8], from start: Int) -> Int {
        let quote = UInt8(ascii: "\"")
        func isTripleQuote(at i: Int) -> Bool {
            i + 2 < bytes.count && bytes[i] == quote && bytes[i + 1] == quote && bytes[i + 2] == quote
        }
        if isTripleQuote(at: start) {
            var i = start + 3
            while i < bytes.count {
                if bytes[i] == UInt8(ascii: "\\"), isTripleQuote(at: i + 1) {
                    i += 4
                    continue
                }
                if isTripleQuote(at: i) { return i + 3 }
                i += 1
            }
            return bytes.count
        }
        var i = start + 1
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "\\"): i += 2
            case quote, 0x0A, 0x0D: return i + 1
            default: i += 1
            }
        }
        return bytes.count
    }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == UInt8(ascii: "_")
    }

    private static func isNameContinue(_ byte: UInt8) -> Bool {
        isNameStart(byte) || (byte >= 0x30 && byte <= 0x39)
    }
}
