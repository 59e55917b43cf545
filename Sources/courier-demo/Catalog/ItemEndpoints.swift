import Foundation
import Courier

/// The items API, one type per operation: reading this file is reading the API's documentation.
enum ItemsAPI {
    struct List: Endpoint {
        typealias Response = ItemPage
        let filter: ItemFilter
        var path: String { "/items" }
        var query: Query { .encodable(filter) }
    }

    struct Get: Endpoint {
        typealias Response = Item
        let id: Int
        var path: String { "/items/\(id)" }
        var pathTemplate: String? { "/items/{id}" }
        var knownErrors: [Int: String] { [404: "This item was removed."] }
    }

    struct Create: Endpoint {
        typealias Response = Item
        let draft: ItemDraft
        var path: String { "/items" }
        var method: HTTPMethod { .post }
        var body: RequestBody { .json(draft) }
        var statusValidation: StatusValidation { .codes([201]) }
    }

    struct Rename: Endpoint {
        typealias Response = Item
        let id: Int
        let name: String
        let price: Double
        var path: String { "/items/\(id)" }
        var pathTemplate: String? { "/items/{id}" }
        var method: HTTPMethod { .patch }
        var body: RequestBody { .json(["name": AnyCodableValue.string(name), "price": .number(price)]) }
    }

    struct Delete: Endpoint {
        typealias Response = Void
        let id: Int
        var path: String { "/items/\(id)" }
        var pathTemplate: String? { "/items/{id}" }
        var method: HTTPMethod { .delete }
    }

    /// The misbehaving corners of the reference server, to show the error paths.
    struct BrokenGateway: Endpoint {
        typealias Response = Item
        var path: String { "/html-502" }
    }

    struct Slow: Endpoint {
        typealias Response = EmptyResponse
        var path: String { "/slow" }
        var query: Query { ["seconds": "5"] }
    }
}

/// A tiny JSON value for PATCH bodies that mix types.
enum AnyCodableValue: Encodable, Sendable {
    case string(String)
    case number(Double)

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        }
    }
}
