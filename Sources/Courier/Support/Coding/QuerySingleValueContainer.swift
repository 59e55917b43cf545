/// Single-value container for ``URLQueryEncoder``: writes the encoder's own
/// node. Writing more than once marks the node as a conflict, which makes
/// the encode call fail. Primitive overloads come from ``QueryValueStoring``.
struct QuerySingleValueContainer: SingleValueEncodingContainer, QueryValueStoring {
    let node: QueryNode
    let context: QueryEncodingContext

    var codingPath: [any CodingKey] { node.codingPath }

    mutating func encodeNil() throws {
        node.setSingleValue(.null)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try store(value)
    }

    func store<T: Encodable>(_ value: T) throws {
        node.adopt(try context.box(value, codingPath: codingPath))
    }
}
