import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierGraphQL
import CourierTesting

struct Hero: Decodable, Sendable, Hashable {
    var name: String
    var friends: [String]?
}

struct GetHero: GraphQLOperation {
    static let document = """
        # The hero of an episode. A "query Fake" in a comment is ignored.
        query GetHero($episode: String!) { hero(episode: $episode) { name friends } }
        """
    static let operationName = "GetHero"
    struct ResponseData: Decodable, Sendable { var hero: Hero }
    struct Variables: Encodable, Sendable { var episode: String }
    var variables: Variables
    init(episode: String = "JEDI") { variables = Variables(episode: episode) }
}

struct Ping: GraphQLOperation {
    static let document = "query Ping { ping }"
    static let operationName = "Ping"
    struct ResponseData: Decodable, Sendable { var ping: String }
}

struct RenameHero: GraphQLOperation {
    static let document = """
        mutation RenameHero($name: String!) { renameHero(name: $name) { name } }
        """
    static let operationName = "RenameHero"
    struct ResponseData: Decodable, Sendable { var renameHero: Hero }
    struct Variables: Encodable, Sendable { var name: String }
    var variables = Variables(name: "Luke")
}

extension APIEnvironment {
    static let graphQLStub = APIEnvironment(name: "stub", baseURL: URL(string: "https://api.example.com/v1")!)
}

/// A GraphQL client over a stub transport.
func makeGraphQL(
    _ stub: StubTransport,
    interceptors: [any Interceptor] = [RequestIDInterceptor(), RetryInterceptor(maximumRetries: 0)],
    configure: (inout GraphQLClient.Configuration) -> Void = { _ in }
) -> GraphQLClient {
    let client = APIClient(environment: .graphQLStub) {
        $0.transport = stub
        $0.interceptors = interceptors
    }
    return GraphQLClient(client: client, configure: configure)
}

/// A `application/graphql-response+json` response.
func graphQLResponse(_ body: String, status: Int = 200) -> HTTPResponse {
    .json(body, status: status, headers: ["Content-Type": "application/graphql-response+json; charset=utf-8"])
}

extension URLRequest {
    /// The JSON body as an object.
    var jsonBody: [String: Any]? {
        httpBody.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    /// The query item `name`.
    func queryItem(_ name: String) -> String? {
        url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false) }?
            .queryItems?.first { $0.name == name }?.value
    }
}
