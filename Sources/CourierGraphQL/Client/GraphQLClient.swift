import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends ``GraphQLOperation``s to one GraphQL endpoint through an `APIClient`, so the client's
/// whole pipeline applies: auth and token refresh, retries, the idempotency key, logging with
/// redaction, metrics, de-duplication of identical in-flight queries and the HTTP cache.
///
/// ```swift
/// let graphQL = GraphQLClient(client: client) {
///     $0.queryPolicy = .authorizedRead
///     $0.mutationPolicy = .authorizedWrite          // idempotency key: retried safely
///     $0.usesPersistedQueries = true                 // Apollo APQ
/// }
/// let items = try await graphQL.send(ListItems()).items   // a GraphQLOperation
/// ```
///
/// Transport (GraphQL-over-HTTP draft): `POST` with an `application/json` body
/// `{query, operationName, variables}` and `Accept: application/graphql-response+json,
/// application/json`; queries as `GET` with the parameters in the URL when
/// ``Configuration/queryMethod`` (or the operation's ``GraphQLOperation/queryMethod``) says
/// ``GraphQLQueryMethod/get``; mutations always `POST`.
///
/// How the pipeline sees a call:
/// - **Path template** `"/graphql query GetItem"`: logs, metrics and HAR records
///   (`_pathTemplate`) name the operation instead of the bare endpoint path.
/// - **Retries**: a query is safe (read-only) even over `POST`, so it is retried like a `GET`;
///   a mutation only when it carries an idempotency key (`EndpointPolicy.idempotency`).
/// - **De-duplication**: identical concurrent queries (same document, variables and headers)
///   share one request, `POST` included.
/// - **Token refresh**: an error whose `extensions.code` is in
///   ``Configuration/tokenRejectionCodes`` (`UNAUTHENTICATED`) is handled like a 401 by
///   `AuthInterceptor`: one refresh, one resend — for calls whose policy sends a token.
/// - **Persisted queries** (``Configuration/usesPersistedQueries``, Apollo's APQ): the first
///   request carries only `extensions.persistedQuery {version: 1, sha256Hash}`; on
///   `PersistedQueryNotFound` the call is sent once more with the full document and the hash,
///   which registers it. Both requests share the policy's `EndpointPolicy.deadline`: the second
///   gets what the first left of it (none left: `NetworkError.timedOut(nil)`, nothing sent). The
///   miss is recognised in every form servers send it: a 200, a 4xx with
///   `application/graphql-response+json`, or a 400 with plain `application/json` (Apollo Server
///   2/3, graphql-java…), as Apollo Client does. Each document is hashed once per client.
public final class GraphQLClient: Sendable {
    /// How a ``GraphQLClient`` talks to its endpoint.
    public struct Configuration: Sendable {
        /// The endpoint's path relative to the client's environment (or an absolute URL); `/graphql`.
        public var path: String
        /// How queries travel: ``GraphQLQueryMethod/post`` by default, ``GraphQLQueryMethod/get``
        /// to make them cacheable (the server must accept GET).
        public var queryMethod: GraphQLQueryMethod
        /// Whether to send Apollo automatic persisted queries (hash first, document on a miss).
        /// `false` by default; a server that answers `PersistedQueryNotSupported` turns it off
        /// for the rest of the client's life. A mutation under the caller's own idempotency key
        /// (`IdempotencyPolicy.key`) is sent with its document: its key never carries two bodies.
        public var usesPersistedQueries: Bool
        /// Error codes (`extensions.code`) meaning "the access token was refused" that start the
        /// token refresh like a 401; `["UNAUTHENTICATED"]` by default, empty to turn it off.
        /// Effective only with an `AuthInterceptor` in the pipeline and a policy that sends a token.
        public var tokenRejectionCodes: Set<String>
        /// The policy of queries: `EndpointPolicy.standard` by default (no token, default
        /// retries, HTTP caching of GET responses by their headers).
        public var queryPolicy: EndpointPolicy
        /// The policy of mutations: `EndpointPolicy.standard` by default — without an
        /// idempotency key a mutation is never retried. Use `EndpointPolicy.authorizedWrite` (or
        /// set `EndpointPolicy.idempotency`) when the server honours `Idempotency-Key`.
        public var mutationPolicy: EndpointPolicy
        /// Header fields sent with every operation (after the client's defaults, before `Accept`).
        public var headers: HTTPHeaders

        /// A configuration with the defaults above for the endpoint at `path`.
        public init(path: String = "/graphql") {
            self.path = path
            self.queryMethod = .post
            self.usesPersistedQueries = false
            self.tokenRejectionCodes = ["UNAUTHENTICATED"]
            self.queryPolicy = .standard
            self.mutationPolicy = .standard
            self.headers = HTTPHeaders()
        }
    }

    /// The client whose pipeline every operation runs through.
    public let client: APIClient
    /// How this client talks to its endpoint.
    public let configuration: Configuration
    let documents = GraphQLDocumentRegistry()
    private let persistedQueriesRefused = Locked(false)

    /// Creates a GraphQL client on top of `client`.
    public init(client: APIClient, configuration: Configuration = Configuration()) {
        self.client = client
        self.configuration = configuration
    }

    /// Creates a GraphQL client for the endpoint at `path`, adjusted by `configure`.
    public convenience init(client: APIClient, path: String = "/graphql", configure: (inout Configuration) -> Void) {
        var configuration = Configuration(path: path)
        configure(&configuration)
        self.init(client: client, configuration: configuration)
    }

    // MARK: Sending

    /// Runs `operation` and returns its data; any GraphQL error fails the call, even with
    /// partial data (use ``response(for:)`` to take partial data).
    ///
    /// - Throws: ``GraphQLFailure`` when the response carries errors (every message, path and
    ///   code); `NetworkError` for everything else, as `APIClient.send(_:)-(E)` does —
    ///   `NetworkError.invalidRequest(_:)` without sending when the document has no operation
    ///   named ``GraphQLOperation/operationName`` or it is a subscription.
    public func send<Operation: GraphQLOperation>(_ operation: Operation) async throws -> Operation.ResponseData {
        let result = try await response(for: operation)
        guard result.errors.isEmpty else {
            throw GraphQLFailure(
                operationName: Operation.operationName, errors: result.errors,
                statusCode: result.response.statusCode, hasPartialData: true,
                extensions: result.extensions)
        }
        return result.data
    }

    /// Runs `operation` and returns its data together with any errors that came with it
    /// (partial data: the caller decides what to show).
    ///
    /// - Throws: ``GraphQLFailure`` when there is no data (errors only, or `data` nulled by an
    ///   error); `NetworkError` otherwise, as for ``send(_:)``.
    public func response<Operation: GraphQLOperation>(
        for operation: Operation
    ) async throws -> GraphQLResult<Operation.ResponseData> {
        let type = try documents.operationType(named: Operation.operationName, in: Operation.document)
        let call = Call(operation: operation, type: type, configuration: configuration)
        // A mutation under the caller's own idempotency key goes out once, with its document: a
        // hash-only attempt and its follow-up would carry one key with two bodies, which a server
        // that remembers keys refuses (draft-ietf-httpapi-idempotency-key-header: 422).
        let persisting =
            configuration.usesPersistedQueries && !persistedQueriesRefused.current
            && !(type == .mutation && call.hasCallerKey)
        guard persisting else {
            return try result(of: await exchange(call, document: true, hash: nil), call: call)
        }
        let hash = documents.sha256Hash(of: Operation.document)
        // Both requests go to the environment current now: a switch before either fails it
        // (`EnvironmentMismatch`, nothing sent) instead of sending the operation, a mutation
        // perhaps, to another server as another user.
        let environment = client.environment.id
        // One operation, one deadline (`EndpointPolicy.deadline` bounds the whole logical call):
        // the request that follows a miss gets only what the hash-only request left of it.
        let elapsed = Self.stopwatch(client.configuration.clock)
        let first = try await exchange(call, document: false, hash: hash, in: environment)
        if first.payload.errors.contains(where: \.isPersistedQueryNotFound) {
            // The server does not know the hash yet: send the document with it, once.
            let rest = try call.remainder(after: elapsed())
            return try result(of: await exchange(rest, document: true, hash: hash, in: environment), call: call)
        }
        if first.payload.errors.contains(where: \.isPersistedQueryNotSupported) {
            persistedQueriesRefused.set(true)
            let rest = try call.remainder(after: elapsed())
            return try result(of: await exchange(rest, document: true, hash: nil, in: environment), call: call)
        }
        return try result(of: first, call: call)
    }

    // MARK: Internals

    /// A closure that returns the time elapsed on `clock` since it was made.
    private static func stopwatch<C: Clock>(_ clock: C) -> @Sendable () -> Duration where C.Duration == Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// What one operation call needs to build its requests.
    private struct Call<Operation: GraphQLOperation>: Sendable {
        let operation: Operation
        let type: GraphQLOperationType
        let method: HTTPMethod
        var policy: EndpointPolicy
        let label: String

        init(operation: Operation, type: GraphQLOperationType, configuration: Configuration) {
            self.operation = operation
            self.type = type
            let usesGET = type == .query && (operation.queryMethod ?? configuration.queryMethod) == .get
            self.method = usesGET ? .get : .post
            self.policy = operation.policy ?? (type == .query ? configuration.queryPolicy : configuration.mutationPolicy)
            self.label = "\(configuration.path) \(type.rawValue) \(Operation.operationName)"
        }

        /// This call with what is left of its deadline once `elapsed` has passed, for the request
        /// that follows a persisted-query miss.
        ///
        /// - Throws: `NetworkError.timedOut(nil)`, nothing sent, when the deadline has passed.
        func remainder(after elapsed: Duration) throws -> Call {
            let left = policy.deadline - elapsed
            guard left > .zero else { throw NetworkError.timedOut(nil) }
            var rest = self
            rest.policy = policy.with(\.deadline, left)
            return rest
        }

        /// Whether every request of the call carries the caller's fixed `Idempotency-Key`.
        var hasCallerKey: Bool {
            if case .key = policy.idempotency { return true }
            return false
        }

        var variables: Operation.Variables? {
            Operation.Variables.self == GraphQLNoVariables.self ? nil : operation.variables
        }
    }

    private struct Exchange<ResponseData: Decodable & Sendable>: Sendable {
        let payload: GraphQLPayload<ResponseData>
        let response: HTTPResponse
        let context: RequestContext
    }

    /// Sends one request of `call`: with the document or only its hash.
    private func exchange<Operation: GraphQLOperation>(
        _ call: Call<Operation>, document: Bool, hash: String?, in environment: String? = nil
    ) async throws -> Exchange<Operation.ResponseData> {
        let endpoint = try makeEndpoint(call, document: document, hash: hash)
        // A query is read-only whatever its method: retried and shared like a GET.
        var traits = CallTraits(isDeclaredSafe: call.type == .query)
        if call.policy.auth != .none, !configuration.tokenRejectionCodes.isEmpty {
            let rejection = GraphQLTokenRejection(
                codes: configuration.tokenRejectionCodes, allowsData: call.type != .mutation)
            traits.rejectsAccessToken = { rejection.matches($0) }
        }
        let context = RequestContext(
            policy: call.policy, method: call.method, pathTemplate: call.label, onStart: nil, traits: traits)
        let response = try await client.response(for: endpoint, context: context, requiredEnvironment: environment)
        return Exchange(payload: response.value, response: response.response, context: response.context)
    }

    private func makeEndpoint<Operation: GraphQLOperation>(
        _ call: Call<Operation>, document: Bool, hash: String?
    ) throws -> GraphQLHTTPEndpoint<Operation.ResponseData> {
        var headers = configuration.headers
        headers.replace("Accept", with: GraphQLMediaType.accept)
        let body = GraphQLRequestBody(
            query: document ? Operation.document : nil,
            operationName: Operation.operationName,
            variables: call.variables,
            extensions: hash.map { .init(persistedQuery: .init(sha256Hash: $0)) })
        var query = Query()
        var requestBody = RequestBody.none
        let encoder = Self.envelopeEncoder(from: client.configuration.encoder)
        if call.method == .get {
            query = Query(try Self.queryItems(for: body, encoder: encoder))
        } else {
            do {
                requestBody = .data(try encoder.encode(body), contentType: "application/json")
            } catch {
                throw NetworkError.invalidRequest("the GraphQL variables could not be encoded: \(error)")
            }
        }
        var endpoint = GraphQLHTTPEndpoint<Operation.ResponseData>(
            path: configuration.path, method: call.method, query: query, headers: headers,
            body: requestBody, policy: call.policy, pathTemplate: call.label)
        endpoint.carriesPersistedQuery = hash != nil
        return endpoint
    }

    /// The encoder of the request envelope: the client's strategies for dates, data and floats,
    /// but never its key strategy — `operationName`, `extensions.persistedQuery.sha256Hash` and the
    /// variables' names are the GraphQL spelling, whatever a REST API's `.convertToSnakeCase` does.
    static func envelopeEncoder(from client: JSONEncoder) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = client.dateEncodingStrategy
        encoder.dataEncodingStrategy = client.dataEncodingStrategy
        encoder.nonConformingFloatEncodingStrategy = client.nonConformingFloatEncodingStrategy
        encoder.outputFormatting = client.outputFormatting
        encoder.userInfo = client.userInfo
        return encoder
    }

    /// The GET parameters (GraphQL-over-HTTP draft, "GET"): `variables` and `extensions` as JSON text.
    static func queryItems<Variables>(
        for body: GraphQLRequestBody<Variables>, encoder: JSONEncoder
    ) throws -> [URLQueryItem] {
        var items: [URLQueryItem] = []
        if let document = body.query { items.append(URLQueryItem(name: "query", value: document)) }
        items.append(URLQueryItem(name: "operationName", value: body.operationName))
        do {
            if let variables = body.variables {
                items.append(
                    URLQueryItem(name: "variables", value: String(decoding: try encoder.encode(variables), as: UTF8.self)))
            }
            if let extensions = body.extensions {
                items.append(
                    URLQueryItem(name: "extensions", value: String(decoding: try encoder.encode(extensions), as: UTF8.self)))
            }
        } catch {
            throw NetworkError.invalidRequest("the GraphQL variables could not be encoded: \(error)")
        }
        return items
    }

    private func result<Operation: GraphQLOperation>(
        of exchange: Exchange<Operation.ResponseData>, call: Call<Operation>
    ) throws -> GraphQLResult<Operation.ResponseData> {
        var payload = exchange.payload
        // A message may repeat what the request sent (`Variable '$input' got invalid value
        // {'password': …}`): hidden, as in a status error's message.
        let messages = exchange.context.hidingSentSecrets(in: payload.errors.map(\.message))
        for index in payload.errors.indices { payload.errors[index].message = messages[index] }
        guard let data = payload.data else {
            guard !payload.errors.isEmpty else {
                throw NetworkError.decoding(
                    DecodingFailure(
                        underlying: GraphQLPayload<Operation.ResponseData>.NotAGraphQLResponse(), codingPath: "data",
                        typeName: "\(Operation.ResponseData.self)", response: exchange.response))
            }
            throw GraphQLFailure(
                operationName: Operation.operationName, errors: payload.errors,
                statusCode: exchange.response.statusCode, hasPartialData: false,
                extensions: payload.extensions)
        }
        return GraphQLResult(
            data: data, errors: payload.errors, extensions: payload.extensions,
            response: exchange.response, context: exchange.context)
    }
}

extension GraphQLError {
    /// Apollo APQ's "hash not registered" answer (`extensions.code` or the message, as Apollo
    /// Client matches it), in whatever response form it came.
    var isPersistedQueryNotFound: Bool {
        code == "PERSISTED_QUERY_NOT_FOUND" || message == "PersistedQueryNotFound"
    }

    /// Apollo APQ's "this server does not do persisted queries" answer.
    var isPersistedQueryNotSupported: Bool {
        code == "PERSISTED_QUERY_NOT_SUPPORTED" || message == "PersistedQueryNotSupported"
    }
}
