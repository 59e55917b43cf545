import Courier
import Foundation

/// One GraphQL operation as a type: its document, its name, its variables and the type its `data`
/// decodes into. Sent with ``GraphQLClient``, through the app's `APIClient` and its pipeline.
///
/// ```swift
/// struct GetItem: GraphQLOperation {
///     static let document = """
///         query GetItem($id: ID!) { item(id: $id) { id name price } }
///         """
///     static let operationName = "GetItem"
///     struct ResponseData: Decodable, Sendable { var item: Item }
///     struct Variables: Encodable, Sendable { var id: String }
///     let variables: Variables
/// }
/// let item = try await graphQL.send(GetItem(variables: .init(id: "1"))).item
/// ```
///
/// Whether the operation is a query or a mutation is read from the document (the definition named
/// ``operationName``), so a `mutation` can never be sent as a cacheable, retried `GET` by mistake.
/// Declare ``document`` as a `static let`: ``GraphQLClient`` analyses and hashes each distinct
/// document once and keeps the result.
public protocol GraphQLOperation: Sendable {
    /// The operation's variables, encoded with the client's `JSONEncoder` as the request's
    /// `variables` object. ``GraphQLNoVariables`` (the default) sends none.
    associatedtype Variables: Encodable & Sendable = GraphQLNoVariables
    /// What the response's `data` member decodes into (with the client's `JSONDecoder`). Make
    /// fields the schema declares nullable `Optional`, so partial data still decodes.
    associatedtype ResponseData: Decodable & Sendable

    /// The GraphQL document (GraphQL spec §2.2): the operation definition named ``operationName``
    /// and any fragments it spreads. It may hold other operations; only the named one runs.
    static var document: String { get }
    /// The name of the operation to run, sent as `operationName` and shown in logs, metrics and
    /// HAR records instead of the bare endpoint path.
    static var operationName: String { get }

    /// This call's variable values.
    var variables: Variables { get }
    /// The policy for this call instead of the client's ``GraphQLClient/Configuration/queryPolicy``
    /// or ``GraphQLClient/Configuration/mutationPolicy``; `nil` (the default) uses the client's.
    var policy: EndpointPolicy? { get }
    /// How this query travels instead of the client's ``GraphQLClient/Configuration/queryMethod``;
    /// `nil` (the default) uses the client's. Ignored for mutations, which always use `POST`.
    var queryMethod: GraphQLQueryMethod? { get }
}

extension GraphQLOperation {
    public var policy: EndpointPolicy? { nil }
    public var queryMethod: GraphQLQueryMethod? { nil }
}

extension GraphQLOperation where Variables == GraphQLNoVariables {
    /// No variables.
    public var variables: GraphQLNoVariables { GraphQLNoVariables() }
}

/// The variables of an operation that takes none: the request carries no `variables` member.
public struct GraphQLNoVariables: Encodable, Sendable, Hashable {
    /// Creates the empty value.
    public init() {}
}

/// The kind of a GraphQL operation (GraphQL spec §2.3), read from its document.
public enum GraphQLOperationType: String, Sendable, Hashable {
    /// A read-only fetch: safe to retry, to share with identical concurrent calls, and to send
    /// as a cacheable `GET` when asked.
    case query
    /// A write followed by a fetch: always `POST`, retried only with an idempotency key.
    case mutation
    /// A long-lived request for a stream of results; not supported over this request/response
    /// transport (``GraphQLClient`` refuses it with `NetworkError.invalidRequest(_:)`).
    case subscription
}

/// How a query travels (GraphQL-over-HTTP draft, "Request": GET and POST).
public enum GraphQLQueryMethod: Sendable, Hashable {
    /// `POST` with an `application/json` body `{query, operationName, variables}` — what every
    /// server supports.
    case post
    /// `GET` with `query`, `operationName`, `variables` and `extensions` in the URL's query
    /// (variables and extensions as JSON text): cacheable by the HTTP cache and by CDNs. Use it
    /// when the server supports it and the variables are not secret — a URL is logged by servers
    /// and proxies. Mutations are always sent with `POST`.
    case get
}
