/// Keyed container for ``URLQueryEncoder``: each key becomes a child node
/// of the object node. Primitive overloads forward to the generic path.
struct QueryKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: QueryNode
    let context: QueryEncodingContext

    var codingPath: [any CodingKey] { node.codingPath }

    mutating func encodeNil(forKey key: Key) throws {
        let child = QueryNode(codingPath: codingPath + [key])
        child.setSingleValue(.null)
        node.children[key.stringValue] = child
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try store(value, forKey: key)
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws { try store(value, forKey: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try store(value, forKey: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try store(value, forKey: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try store(value, forKey: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try store(value, forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try store(value, forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try store(value, forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try store(value, forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try store(value, forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try store(value, forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try store(value, forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try store(value, forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try store(value, forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try store(value, forKey: key) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        childEncoder(forKey: key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        childEncoder(forKey: key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        childEncoder(forKey: SuperCodingKey())
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        childEncoder(forKey: key)
    }

    private func store<T: Encodable>(_ value: T, forKey key: Key) throws {
        node.children[key.stringValue] = try context.box(value, codingPath: codingPath + [key])
    }

    private func childEncoder(forKey key: any CodingKey) -> QueryValueEncoder {
        let child = QueryNode(codingPath: codingPath + [key])
        node.children[key.stringValue] = child
        return QueryValueEncoder(node: child, context: context)
    }
}
