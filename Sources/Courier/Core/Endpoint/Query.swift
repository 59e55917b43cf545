import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An endpoint's query parameters: explicit items in the order given, or an `Encodable` value
/// turned into items by the client's ``URLQueryEncoder`` (keys sorted, so the URL is stable).
///
/// ```swift
/// let query: Query = ["status": "active", "q": searchText, "page": nil]   // nil is omitted
/// let filter: Query = .encodable(ItemFilter(status: .active, ids: [1, 2]))
/// ```
/// Values are percent-encoded by the client: `+` is sent as `%2B`, space as `%20`.
public struct Query: Sendable, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
    enum Storage: Sendable {
        case items([URLQueryItem])
        case encodable(any Encodable & Sendable)
    }

    let storage: Storage

    /// No parameters.
    public init() { storage = .items([]) }
    /// These items, in this order. Items with a `nil` value are sent as a bare name (`?flag`).
    public init(_ items: [URLQueryItem]) { storage = .items(items) }

    /// Parameters from a literal, in literal order; `nil` values are omitted.
    public init(dictionaryLiteral elements: (String, String?)...) {
        storage = .items(elements.compactMap { name, value in value.map { URLQueryItem(name: name, value: $0) } })
    }

    /// Items from an array literal, in order.
    public init(arrayLiteral elements: URLQueryItem...) { storage = .items(elements) }

    /// Parameters encoded from `value` by the client's ``URLQueryEncoder`` when the request is built.
    public static func encodable(_ value: any Encodable & Sendable) -> Query { Query(storage: .encodable(value)) }

    private init(storage: Storage) { self.storage = storage }

    /// `true` when there is nothing to send.
    package var isEmpty: Bool {
        if case .items(let items) = storage { return items.isEmpty }
        return false
    }

    /// The items, encoding an `Encodable` value with `encoder`.
    /// - Throws: `EncodingError` when the value cannot be expressed as query items.
    package func items(using encoder: URLQueryEncoder) throws -> [URLQueryItem] {
        switch storage {
        case .items(let items): return items
        case .encodable(let value): return try encoder.encode(value)
        }
    }
}
