import Foundation
import Courier

/// The catalog's item, as the reference server sends it.
struct Item: Codable, Sendable, Identifiable {
    let id: Int
    var name: String
    var price: Double
    var status: ItemStatus
    var tags: [String]
    let createdAt: Date
    let updatedAt: Date
}

/// An item's lifecycle state; values a newer server invents decode to `unknown` instead of failing.
enum ItemStatus: ExtensibleEnum {
    case active, archived
    case unknown(String)
    static let knownCases: [ItemStatus] = [.active, .archived]
    var rawValue: String {
        switch self {
        case .active: "active"
        case .archived: "archived"
        case .unknown(let raw): raw
        }
    }
}

/// A page of items.
struct ItemPage: Decodable, Sendable {
    let items: [Item]
    let total: Int
    let limit: Int
    let offset: Int
}

/// What the create and replace calls send.
struct ItemDraft: Encodable, Sendable {
    var name: String
    var price: Double
    var status: String = "active"
    var tags: [String] = []
}

/// The filter of the list screen, sent as query parameters (keys sorted, nil omitted).
struct ItemFilter: Encodable, Sendable {
    var status: String?
    var q: String?
    var limit: Int?
    var offset: Int?
}
