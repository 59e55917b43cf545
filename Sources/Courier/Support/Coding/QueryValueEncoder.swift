/// The `Encoder` handed to values encoded by ``URLQueryEncoder``. Each
/// instance writes into one ``QueryNode``.
struct QueryValueEncoder: Encoder {
    let node: QueryNode
    let context: QueryEncodingContext

    var codingPath: [any CodingKey] { node.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { context.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeKeyed()
        return KeyedEncodingContainer(QueryKeyedContainer<Key>(node: node, context: context))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeUnkeyed()
        return QueryUnkeyedContainer(node: node, context: context)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        QuerySingleValueContainer(node: node, context: context)
    }
}

/// The key used for `superEncoder()` of a keyed container, matching
/// Foundation's `JSONEncoder`.
struct SuperCodingKey: CodingKey {
    let stringValue = "super"
    let intValue: Int? = nil

    init() {}

    init?(stringValue: String) {
        guard stringValue == "super" else { return nil }
    }

    init?(intValue: Int) {
        return nil
    }
}
