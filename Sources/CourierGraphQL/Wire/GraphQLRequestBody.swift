import Foundation

/// A GraphQL-over-HTTP request's parameters (GraphQL-over-HTTP draft, "Request Parameters"):
/// `query` (absent for a hash-only persisted query), `operationName`, `variables` and
/// `extensions`; absent members are left out.
struct GraphQLRequestBody<Variables: Encodable & Sendable>: Encodable, Sendable {
    var query: String?
    var operationName: String
    var variables: Variables?
    var extensions: Extensions?

    /// The `extensions` member Courier sends: Apollo's automatic persisted query marker.
    struct Extensions: Encodable, Sendable, Hashable {
        var persistedQuery: PersistedQuery
    }

    /// `{"version": 1, "sha256Hash": "<hex>"}` (Apollo APQ protocol, version 1).
    struct PersistedQuery: Encodable, Sendable, Hashable {
        var version = 1
        var sha256Hash: String
    }
}
