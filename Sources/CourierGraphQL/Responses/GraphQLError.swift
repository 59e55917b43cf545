import Foundation

/// One entry of a GraphQL response's `errors` array (GraphQL spec §7.1.2): what went wrong, where
/// in the document, where in the result, and the server's machine-readable details.
///
/// ```json
/// {"message": "Item 99 not found", "locations": [{"line": 1, "column": 14}],
///  "path": ["item"], "extensions": {"code": "NOT_FOUND"}}
/// ```
public struct GraphQLError: Sendable, Hashable, Decodable, CustomStringConvertible {
    /// A description for the developer (the spec requires it; an error without one reads
    /// `"(no message)"`). In what ``GraphQLClient`` returns or throws, a secret of the request it
    /// repeats — a secret-named variable's value, the token — reads `<redacted>`.
    public var message: String
    /// Where in the document the error arose, when the server says.
    public var locations: [Location]
    /// The response field the error belongs to, from the root (`["items", 2, "supplier"]`);
    /// empty for a request error (parse, validation, unknown persisted query).
    public var path: [GraphQLPathComponent]
    /// The server's extra details, e.g. `{"code": "UNAUTHENTICATED"}`; empty when none.
    public var extensions: [String: GraphQLValue]

    /// A point in the document, 1-based (GraphQL spec §7.1.2 "locations").
    public struct Location: Sendable, Hashable, Decodable {
        /// The line, from 1.
        public var line: Int
        /// The column, from 1.
        public var column: Int
        /// Creates a location.
        public init(line: Int, column: Int) {
            self.line = line
            self.column = column
        }
    }

    /// Creates an error.
    public init(
        message: String, locations: [Location] = [], path: [GraphQLPathComponent] = [],
        extensions: [String: GraphQLValue] = [:]
    ) {
        self.message = message
        self.locations = locations
        self.path = path
        self.extensions = extensions
    }

    private enum CodingKeys: String, CodingKey { case message, locations, path, extensions }

    /// Reads an entry leniently, so that one entry of another shape never costs the response its
    /// `data` and its other errors: members of the wrong type are left out, and an entry that is
    /// not an object (`"errors": ["Item not found"]`, as some servers send) becomes an error whose
    /// message is its text, or `"(no message)"`.
    public init(from decoder: any Decoder) throws {
        guard let container = try? decoder.container(keyedBy: CodingKeys.self) else {
            self = GraphQLError(message: (try? decoder.singleValueContainer().decode(String.self)) ?? "(no message)")
            return
        }
        message = (try? container.decodeIfPresent(String.self, forKey: .message)) ?? "(no message)"
        locations = (try? container.decodeIfPresent([Location].self, forKey: .locations)) ?? []
        path = (try? container.decodeIfPresent([GraphQLPathComponent].self, forKey: .path)) ?? []
        extensions = (try? container.decodeIfPresent([String: GraphQLValue].self, forKey: .extensions)) ?? [:]
    }

    /// `extensions.code`, the de-facto standard error code (`UNAUTHENTICATED`, `FORBIDDEN`,
    /// `BAD_USER_INPUT`, `PERSISTED_QUERY_NOT_FOUND`…), when the server sends one.
    public var code: String? { extensions["code"]?.stringValue }

    /// The path as text, e.g. `items[2].supplier`; empty for a request error.
    public var pathDescription: String {
        var text = ""
        for component in path {
            switch component {
            case .field(let name): text += text.isEmpty ? name : ".\(name)"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    /// `Item 99 not found (at item, code NOT_FOUND)`.
    public var description: String {
        var details: [String] = []
        if !path.isEmpty { details.append("at \(pathDescription)") }
        if let code { details.append("code \(code)") }
        return details.isEmpty ? message : "\(message) (\(details.joined(separator: ", ")))"
    }
}

/// One step of a ``GraphQLError/path``: a field name or a list index.
public enum GraphQLPathComponent: Sendable, Hashable, Decodable {
    /// A response key (field name or alias).
    case field(String)
    /// A position in a list, from 0.
    case index(Int)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let index = try? container.decode(Int.self) {
            self = .index(index)
        } else {
            self = .field(try container.decode(String.self))
        }
    }
}
