import Foundation

/// Turns a ``QueryNode`` tree into query items: object members sorted by key
/// and named with brackets (`a[b][c]`), arrays per
/// ``URLQueryEncoder/ArrayEncoding``, nulls and empty values omitted.
struct QueryFlattener {
    let arrayEncoding: URLQueryEncoder.ArrayEncoding
    private(set) var items: [URLQueryItem] = []

    init(arrayEncoding: URLQueryEncoder.ArrayEncoding) {
        self.arrayEncoding = arrayEncoding
    }

    /// Appends the items for `node`, named `name` (empty for the root).
    mutating func flatten(_ node: QueryNode, name: String) throws {
        switch node.kind {
        case .empty, .null:
            return
        case .scalar(let text):
            items.append(URLQueryItem(name: name, value: text))
        case .keyed:
            for key in node.children.keys.sorted() {
                guard let child = node.children[key] else { continue }
                try flatten(child, name: name.isEmpty ? key : "\(name)[\(key)]")
            }
        case .unkeyed:
            try flattenArray(node, name: name)
        case .conflict(let reason):
            throw Self.invalid(node, "Value at \(CodingPathFormatter.string(node.codingPath)) \(reason)")
        }
    }

    private mutating func flattenArray(_ node: QueryNode, name: String) throws {
        var values: [String] = []
        for element in node.elements {
            switch element.kind {
            case .empty, .null:
                continue
            case .scalar(let text):
                values.append(text)
            case .keyed, .unkeyed, .conflict:
                throw Self.invalid(
                    element,
                    "Arrays in a query may contain only scalars; found \(element.kind.name) at "
                        + CodingPathFormatter.string(element.codingPath)
                )
            }
        }
        guard !values.isEmpty else { return }
        switch arrayEncoding {
        case .brackets:
            items += values.map { URLQueryItem(name: name + "[]", value: $0) }
        case .repeated:
            items += values.map { URLQueryItem(name: name, value: $0) }
        case .commaSeparated:
            items.append(URLQueryItem(name: name, value: values.joined(separator: ",")))
        }
    }

    private static func invalid(_ node: QueryNode, _ message: String) -> EncodingError {
        EncodingError.invalidValue(
            node.kind.name,
            EncodingError.Context(codingPath: node.codingPath, debugDescription: message)
        )
    }
}
