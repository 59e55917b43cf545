/// Unkeyed container for ``URLQueryEncoder``: each value becomes the next
/// element node of the array node. Primitive overloads come from
/// ``QueryValueStoring``.
struct QueryUnkeyedContainer: UnkeyedEncodingContainer, QueryValueStoring {
    let node: QueryNode
    let context: QueryEncodingContext

    var codingPath: [any CodingKey] { node.codingPath }
    var count: Int { node.elements.count }

    mutating func encodeNil() throws {
        let element = QueryNode(codingPath: nextPath)
        element.setSingleValue(.null)
        node.elements.append(element)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try store(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        nextEncoder().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        nextEncoder().unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        nextEncoder()
    }

    private var nextPath: [any CodingKey] {
        codingPath + [ArrayIndexKey(node.elements.count)]
    }

    func store<T: Encodable>(_ value: T) throws {
        node.elements.append(try context.box(value, codingPath: nextPath))
    }

    private func nextEncoder() -> QueryValueEncoder {
        let element = QueryNode(codingPath: nextPath)
        node.elements.append(element)
        return QueryValueEncoder(node: element, context: context)
    }
}
