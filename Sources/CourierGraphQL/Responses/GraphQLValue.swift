import Foundation

/// A JSON value of a GraphQL response that has no fixed shape: an error's `extensions`, the
/// response's `extensions` (GraphQL spec §7.1.2).
public enum GraphQLValue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// Any JSON number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([GraphQLValue])
    /// An object.
    case object([String: GraphQLValue])

    /// The string, when the value is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The member `key`, when the value is an object that has it.
    public subscript(key: String) -> GraphQLValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public init(from decoder: any Decoder) throws {
        // The commonest shapes first: each shape tried in vain costs a `DecodingError`, and a
        // nested object tried as a list first decoded it twice (a 5.8 MB tracing `extensions`
        // took 1.2–1.9 s, against 0.3 s typed).
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode([String: GraphQLValue].self) {
            self = .object(value)
        } else if let value = try? container.decode([GraphQLValue].self) {
            self = .array(value)
        } else {
            self = .bool(try container.decode(Bool.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Compact JSON-like text, e.g. `{"code": "NOT_FOUND"}`.
    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return String(value)
        case .number(let value):
            return value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        case .string(let value): return "\"\(value)\""
        case .array(let values): return "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .object(let members):
            return "{" + members.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}
