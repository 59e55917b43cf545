import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An ordered collection of HTTP header fields with case-insensitive lookup (RFC 9110 §5.1).
///
/// Names keep the spelling they were given; lookups ignore case. Every field line is kept as a
/// separate entry, in order: ``values(for:)`` returns them one by one, and ``subscript(_:)`` joins
/// them with `", "` as RFC 9110 §5.3 allows for list-based fields. `Set-Cookie` is never combined
/// (RFC 6265 §3: its `Expires` date contains a comma): read it with ``values(for:)``.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field: its name as spelled by the sender and its value.
    public struct Field: Sendable, Hashable {
        /// The field name, e.g. `Content-Type`.
        public var name: String
        /// The field value, without surrounding whitespace.
        public var value: String
        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in the order they were added.
    public private(set) var fields: [Field]

    /// Creates an empty set of headers.
    public init() { fields = [] }
    /// Creates headers from fields, keeping their order.
    public init(_ fields: [Field]) { self.fields = fields }
    /// Creates headers from a dictionary; order follows the sorted names so the result is stable.
    public init(_ dictionary: [String: String]) {
        fields = dictionary.sorted { $0.key < $1.key }.map { Field(name: $0.key, value: $0.value) }
    }
    /// Creates headers from a dictionary literal, keeping the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// All values of `name` joined with `", "` (RFC 9110 §5.3), or `nil` when absent. For
    /// `Set-Cookie`, which must not be combined (RFC 6265 §3), the first field's value; use
    /// ``values(for:)`` for every cookie. Setting replaces every field of that name; setting `nil`
    /// removes them.
    public subscript(_ name: String) -> String? {
        get {
            // The usual case — no field or one — without building an array of values.
            guard let first = fields.firstIndex(where: { $0.name.equalsFieldName(name) }) else { return nil }
            let rest = fields[(first + 1)...]
            guard rest.contains(where: { $0.name.equalsFieldName(name) }) else { return fields[first].value }
            if name.equalsFieldName("Set-Cookie") { return fields[first].value }
            return values(for: name).joined(separator: ", ")
        }
        set {
            if let newValue { replace(name, with: newValue) } else { remove(name) }
        }
    }

    /// Every field line named `name`, in order (case-insensitive match), e.g. each `Set-Cookie`.
    public func values(for name: String) -> [String] {
        fields.compactMap { $0.name.equalsFieldName(name) ? $0.value : nil }
    }

    /// `true` when at least one field is named `name` (case-insensitive).
    public func contains(_ name: String) -> Bool {
        fields.contains { $0.name.equalsFieldName(name) }
    }

    /// Makes room for `count` fields in all, so that adding up to that many allocates once.
    mutating func reserveCapacity(_ count: Int) { fields.reserveCapacity(count) }

    /// Appends a field, keeping existing fields of the same name.
    public mutating func add(_ name: String, _ value: String) { fields.append(Field(name: name, value: value)) }

    /// Removes every field named `name` and appends one with `value`.
    public mutating func replace(_ name: String, with value: String) {
        remove(name)
        add(name, value)
    }

    /// Removes every field named `name` (case-insensitive).
    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.equalsFieldName(name) }
    }

    /// The fields as a dictionary with repeated names joined by `", "` (first spelling wins).
    public var dictionary: [String: String] { dictionary(namesAreTokens: false) }

    /// ``dictionary``; with `namesAreTokens` (every name checked to be an RFC 9110 §5.1 token,
    /// so ASCII), names of different lengths are known to differ and are not compared.
    func dictionary(namesAreTokens: Bool) -> [String: String] {
        var result: [String: String] = [:]
        result.reserveCapacity(fields.count)
        for (index, field) in fields.enumerated() {
            let length = field.name.utf8.count
            // The earlier fields, not the dictionary's keys: an array walk, in order, so the
            // first spelling of a repeated name is the key.
            if let first = fields[..<index].first(where: {
                (!namesAreTokens || $0.name.utf8.count == length) && $0.name.equalsFieldName(field.name)
            }) {
                // `Cookie` is no list (RFC 6265 §5.4): its pairs are joined with "; ".
                let separator = field.name.equalsFieldName("Cookie") ? "; " : ", "
                result[first.name] = (result[first.name] ?? "") + separator + field.value
            } else {
                result[field.name] = field.value
            }
        }
        return result
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }
}

extension HTTPHeaders {
    /// RFC 9110 §5.6.2 `tchar`: ALPHA, DIGIT and ``!#$%&'*+-.^_`|~`` — the bytes of a field name
    /// (§5.1) and of an authentication scheme or parameter name (§11).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        byte.isASCIIAlphanumeric || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }

    /// Reads the header fields of an `HTTPURLResponse` (order as Foundation reports them; lookups
    /// are case-insensitive, so order only matters for display).
    ///
    /// URLSession joins repeated fields with `", "` on every platform. A joined `Set-Cookie` is
    /// split back into one field per cookie, in order (see ``splitSetCookie(_:)``); other fields
    /// stay joined, which RFC 9110 §5.3 makes equivalent for list-based fields.
    package init(_ response: HTTPURLResponse) {
        var fields: [Field] = []
        let all = response.allHeaderFields
        fields.reserveCapacity(all.count)
        for (key, value) in all {
            guard let name = key as? String else { continue }
            let text = value as? String ?? "\(value)"
            if name.equalsFieldName("Set-Cookie") {
                for cookie in Self.splitSetCookie(text) { fields.append(Field(name: name, value: cookie)) }
            } else {
                fields.append(Field(name: name, value: text))
            }
        }
        self.init(fields)
    }

    /// Splits `Set-Cookie` values that were joined with `,` back into one value per field line.
    ///
    /// A comma starts a new cookie only when what follows is `name=` (an RFC 6265 §4.1.1
    /// `cookie-name` token and `=`): the comma inside an `Expires` date (`Wed, 21 Oct 2037 …`) is
    /// followed by a digit and a space, and a `cookie-value` never contains a comma.
    package static func splitSetCookie(_ joined: String) -> [String] {
        let bytes = Array(joined.utf8)
        var parts: [String] = []
        var start = 0
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: ","), startsCookie(bytes, at: index + 1) {
                parts.append(trimmed(bytes[start..<index]))
                start = index + 1
            }
            index += 1
        }
        parts.append(trimmed(bytes[start..<bytes.count]))
        return parts.filter { !$0.isEmpty }
    }

    /// Whether `bytes[index...]` is optional whitespace, a token and `=`.
    private static func startsCookie(_ bytes: [UInt8], at index: Int) -> Bool {
        var index = index
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
        let nameStart = index
        while index < bytes.count, HTTPHeaders.isTokenByte(bytes[index]) { index += 1 }
        return index > nameStart && index < bytes.count && bytes[index] == UInt8(ascii: "=")
    }

    private static func trimmed(_ slice: ArraySlice<UInt8>) -> String {
        String(decoding: slice, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }

    /// Reads the header fields of a `URLRequest`, sorted by name so the order is stable.
    package init(_ request: URLRequest) {
        self.init(request.allHTTPHeaderFields ?? [:])
    }
}

extension String {
    /// Whether two field names are equal ignoring case (RFC 9110 §5.1). Names are ASCII tokens:
    /// compared byte by byte, which on Linux is far cheaper than `caseInsensitiveCompare`, the
    /// fallback for anything else.
    func equalsFieldName(_ other: String) -> Bool {
        var lhs = self
        var rhs = other
        let ascii = lhs.withUTF8 { lhs in
            rhs.withUTF8 { rhs -> Bool? in
                guard lhs.count == rhs.count else {
                    return lhs.allSatisfy({ $0 < 0x80 }) && rhs.allSatisfy({ $0 < 0x80 }) ? false : nil
                }
                for (left, right) in zip(lhs, rhs) {
                    guard left < 0x80, right < 0x80 else { return nil }
                    if left == right { continue }
                    let lowerLeft = (0x41...0x5A).contains(left) ? left | 0x20 : left
                    let lowerRight = (0x41...0x5A).contains(right) ? right | 0x20 : right
                    if lowerLeft != lowerRight { return false }
                }
                return true
            }
        }
        return ascii ?? (caseInsensitiveCompare(other) == .orderedSame)
    }
}
