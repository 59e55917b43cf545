import Courier
import Foundation

/// What a ``GraphQLClient`` learned about each distinct document: its operations (scanned once)
/// and its SHA-256 for automatic persisted queries (computed once, when first needed). The work
/// is done under the registry's lock, so concurrent first uses of one document still compute it
/// once. Bounded: past ``limit`` documents it starts over.
final class GraphQLDocumentRegistry: Sendable {
    private struct Entry: Sendable {
        var operations: [String: GraphQLOperationType]?
        var sha256Hash: String?
    }

    private struct State: Sendable {
        var entries: [String: Entry] = [:]
        var hashComputations = 0
    }

    /// Most documents remembered; an app has a fixed set, so this only guards against documents
    /// built at run time.
    let limit: Int
    private let state = Locked(State())

    init(limit: Int = 1024) { self.limit = max(1, limit) }

    /// SHA-256 computations so far (for tests: one per distinct document).
    var hashComputations: Int { state.withLock { $0.hashComputations } }

    /// The type of the operation `name` in `document`.
    /// - Throws: ``NetworkError/invalidRequest(_:)`` when the document defines no operation of that
    ///   name, or when it is a subscription.
    func operationType(named name: String, in document: String) throws -> GraphQLOperationType {
        let operations = update(document) { entry, _ in
            if let known = entry.operations { return known }
            let scanned = GraphQLDocumentScanner.operations(in: document)
            entry.operations = scanned
            return scanned
        }
        guard let type = operations[name] else {
            throw NetworkError.invalidRequest("the GraphQL document defines no operation named \(name)")
        }
        guard type != .subscription else {
            throw NetworkError.invalidRequest("\(name) is a subscription, which needs a streaming transport")
        }
        return type
    }

    /// The lower-case hex SHA-256 of the document's UTF-8 bytes, as Apollo's automatic persisted
    /// queries send it in `extensions.persistedQuery.sha256Hash`; computed once per document.
    func sha256Hash(of document: String) -> String {
        update(document) { entry, computations in
            if let known = entry.sha256Hash { return known }
            let hex = SHA256.hash(Array(document.utf8)).map { byte in
                (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }.joined()
            computations += 1
            entry.sha256Hash = hex
            return hex
        }
    }

    private func update<T>(_ document: String, _ body: (inout Entry, inout Int) -> T) -> T {
        state.withLock { state in
            if state.entries[document] == nil, state.entries.count >= limit { state.entries.removeAll() }
            var entry = state.entries[document] ?? Entry()
            let result = body(&entry, &state.hashComputations)
            state.entries[document] = entry
            return result
        }
    }
}
