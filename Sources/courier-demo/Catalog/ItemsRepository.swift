import Foundation
import Courier

/// Talks to the items API; knows endpoints, not screens.
struct ItemsRemoteDataSource: Sendable {
    let client: APIClient

    func list(_ filter: ItemFilter) async throws -> ItemPage { try await client.send(ItemsAPI.List(filter: filter)) }
    func item(_ id: Int) async throws -> Item { try await client.send(ItemsAPI.Get(id: id)) }
    func create(_ draft: ItemDraft) async throws -> Item { try await client.send(ItemsAPI.Create(draft: draft)) }
    func rename(_ id: Int, to name: String, price: Double) async throws -> Item {
        try await client.send(ItemsAPI.Rename(id: id, name: name, price: price))
    }
    func delete(_ id: Int) async throws { try await client.send(ItemsAPI.Delete(id: id)) }
}

/// What a screen can be showing.
enum ScreenState<Value: Sendable>: Sendable {
    case loaded(Value)
    case failed(message: String, error: NetworkError)
    case idle
}

/// The feature's single entry point: turns calls into screen states, so feature code never sees
/// URLs, headers or status codes.
struct ItemsRepository: Sendable {
    let remote: ItemsRemoteDataSource

    func activeItems(matching text: String? = nil) async -> ScreenState<[Item]> {
        await state { try await remote.list(ItemFilter(status: "active", q: text, limit: 10, offset: 0)).items }
    }

    func item(_ id: Int) async -> ScreenState<Item> { await state { try await remote.item(id) } }

    func create(_ draft: ItemDraft) async -> ScreenState<Item> { await state { try await remote.create(draft) } }

    private func state<T: Sendable>(_ work: () async throws -> T) async -> ScreenState<T> {
        do {
            return .loaded(try await work())
        } catch let error as NetworkError {
            return error.isCancellation ? .idle : .failed(message: error.userMessage, error: error)
        } catch {
            let mapped = NetworkError(error)
            return .failed(message: mapped.userMessage, error: mapped)
        }
    }
}
