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

    /// Every status is decoded here: a 4xx with `application/graphql-response+json` is a GraphQL
    /// error, not a bare HTTP one.
    var statusValidation: StatusValidation { .none }

    /// - Throws: ``NetworkError`` for a status outside 2xx whose body is not a GraphQL response
    ///   in `application/graphql-response+json` (a proxy's 502 page, a legacy server's 4xx);
    ///   a decoding error for a 2xx body that is not a GraphQL response.
    func decode(_ response: HTTPResponse, context: ResponseDecodingContext) throws -> GraphQLPayload<ResponseData> {
        let success = (200..<300).contains(response.statusCode)
        if success {
            return try context.decoder.decode(GraphQLPayload<ResponseData>.self, from: response.body)
        }
        // Only the GraphQL media type vouches that a non-2xx body came from the GraphQL server and
        // not from an intermediary (GraphQL-over-HTTP draft, "application/json" status codes).
        guard GraphQLMediaType.of(response.headers["Content-Type"]) == GraphQLMediaType.graphQLResponse,
            let payload = try? context.decoder.decode(GraphQLPayload<ResponseData>.self, from: response.body),
            !payload.errors.isEmpty
        else {
            throw NetworkError(response: response)
        }
        return payload
    }
}
