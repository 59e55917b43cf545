/// The intermediate tree built while encoding a value for a query string.
///
/// A reference type so that containers handed out by the encoder can keep
/// writing into the node they were created for. Used only within a single
/// ``URLQueryEncoder/encode(_:)`` call; never shared across threads.
final class QueryNode {
    /// What the node holds.
    enum Kind {
        /// Nothing written yet (or the value chose to write nothing).
        case empty
        /// An explicit `nil`.
        case null
        /// A rendered scalar.
        case scalar(String)
        /// An object; children live in ``QueryNode/children``.
        case keyed
        /// An array; elements live in ``QueryNode/elements``.
        case unkeyed
        /// The value asked for incompatible containers; encoding fails.
        case conflict(String)

        /// A short noun for error messages.
        var name: String {
            switch self {
            case .empty: "nothing"
            case .null: "nil"
            case .scalar: "a scalar"
            case .keyed: "an object"
            case .unkeyed: "an array"
            case .conflict: "conflicting containers"
            }
        }
    }

    /// Where this node sits in the encoded value.
    let codingPath: [any CodingKey]
    private(set) var kind: Kind = .empty
    /// Object members by key; meaningful when `kind` is `.keyed`.
    var children: [String: QueryNode] = [:]
    /// Array elements in order; meaningful when `kind` is `.unkeyed`.
    var elements: [QueryNode] = []

    init(codingPath: [any CodingKey]) {
        self.codingPath = codingPath
    }

    /// Makes the node an object, unless it already is one; any other prior
    /// content turns it into a conflict.
    func becomeKeyed() {
        switch kind {
        case .empty: kind = .keyed
        case .keyed, .conflict: break
        default: kind = .conflict("requested a keyed container after writing \(kind.name)")
        }
    }

    /// Makes the node an array, unless it already is one; any other prior
    /// content turns it into a conflict.
    func becomeUnkeyed() {
        switch kind {
        case .empty: kind = .unkeyed
        case .unkeyed, .conflict: break
        default: kind = .conflict("requested an unkeyed container after writing \(kind.name)")
        }
    }

    /// Stores a single value (scalar or null). Writing twice is a conflict.
    func setSingleValue(_ value: Kind) {
        switch kind {
        case .empty: kind = value
        case .conflict: break
        default: kind = .conflict("wrote a single value after writing \(kind.name)")
        }
    }

    /// Takes over `other`'s content (a value encoded into a fresh node by a
    /// single-value container). Only an empty node may adopt; otherwise the
    /// node becomes a conflict, as for a second single value.
    func adopt(_ other: QueryNode) {
        guard case .empty = kind else {
            setSingleValue(other.kind)
            return
        }
        kind = other.kind
        children = other.children
        elements = other.elements
    }
}
