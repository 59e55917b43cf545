import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One GraphQL-over-HTTP exchange as a Courier ``Endpoint``, so it runs through the client's
/// whole pipeline. Built by ``GraphQLClient``; every status reaches ``decode(_:context:)``, which
/// reads GraphQL bodies and turns the rest into the usual ``NetworkError``.
struct GraphQLHTTPEndpoint<ResponseData: Decodable & Sendable>: Endpoint {
    typealias Response = GraphQLPayload<ResponseData>

    let path: String
    let method: HTTPMethod
    let query: Query
    let headers: HTTPHeaders
    let body: RequestBody
    let policy: EndpointPolicy
    let pathTemplate: String?
    /// Whether the request carried `extensions.persistedQuery`: then a non-2xx JSON body whose
    /// errors are Apollo's APQ answers is read as GraphQL, whatever its media type.
    var carriesPersistedQuery = false

    /// Every status is decoded here: a 4xx with `application/graphql-response+json` is a GraphQL
    /// error, not a bare HTTP one.
    var statusValidation: StatusValidation { .none }

    /// A non-2xx body is GraphQL when its type is `application/graphql-response+json`, or — for a
    /// request with a persisted-query hash — when it is JSON (`application/json`, any `+json`)
    /// whose errors are `PersistedQueryNotFound` / `PersistedQueryNotSupported`: many servers
    /// (Apollo Server 2/3, graphql-java…) answer an APQ miss with 400 and `application/json`, and
    /// Apollo Client reads the errors of such a response too.
    ///
    /// - Throws: ``NetworkError`` for a status outside 2xx whose body is not such a GraphQL
    ///   response (a proxy's 502 page, a legacy server's 4xx); a decoding error for a 2xx body
    ///   that is not a GraphQL response.
    func decode(_ response: HTTPResponse, context: ResponseDecodingContext) throws -> GraphQLPayload<ResponseData> {
        let success = (200..<300).contains(response.statusCode)
        if success {
            return try context.decoder.decode(GraphQLPayload<ResponseData>.self, from: response.data)
        }
        // Only the GraphQL media type vouches that a non-2xx body came from the GraphQL server and
        // not from an intermediary (GraphQL-over-HTTP draft, "application/json" status codes).
        let mediaType = GraphQLMediaType.of(response.headers["Content-Type"])
        if mediaType == GraphQLMediaType.graphQLResponse,
            let payload = try? context.decoder.decode(GraphQLPayload<ResponseData>.self, from: response.data),
            !payload.errors.isEmpty
        {
            return payload
        }
        if carriesPersistedQuery, GraphQLMediaType.isJSON(mediaType),
            let payload = try? context.decoder.decode(GraphQLPayload<ResponseData>.self, from: response.data),
            payload.errors.contains(where: { $0.isPersistedQueryNotFound || $0.isPersistedQueryNotSupported })
        {
            return payload
        }
        throw NetworkError(response: response)
    }
}
