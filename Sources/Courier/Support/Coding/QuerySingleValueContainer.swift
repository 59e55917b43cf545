/// Single-value container for ``URLQueryEncoder``: writes the encoder's own
/// node. Writing more than once marks the node as a conflict, which makes
/// the encode call fail. Primitive overloads forward to the generic path.
struct QuerySingleValueContainer: SingleValueEncodingContainer {
    let node: QueryNode
    let context: QueryEncodingContext

    var codingPath: [any CodingKey] { node.codingPath }

    mutating func encodeNil() throws {
        node.setSingleValue(.null)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try store(value)
    }

    mutating func encode(_ value: Bool) throws { try store(value) }
    mutating func encode(_ value: String) throws { try store(value) }
    mutating func encode(_ value: Double) throws { try store(value) }
    mutating func encode(_ value: Float) throws { try store(value) }
    mutating func encode(_ value: Int) throws { try store(value) }
    mutating func encode(_ value: Int8) throws { try store(value) }
    mutating func encode(_ value: Int16) throws { try store(value) }
    mutating func encode(_ value: Int32) throws { try store(value) }
    mutating func encode(_ value: Int64) throws { try store(value) }
    mutating func encode(_ value: UInt) throws { try store(value) }
    mutating func encode(_ value: UInt8) throws { try store(value) }
    mutating func encode(_ value: UInt16) throws { try store(value) }
    mutating func encode(_ value: UInt32) throws { try store(value) }
    mutating func encode(_ value: UInt64) throws { try store(value) }

    private func store<T: Encodable>(_ value: T) throws {
        node.adopt(try context.box(value, codingPath: codingPath))
    }
}
