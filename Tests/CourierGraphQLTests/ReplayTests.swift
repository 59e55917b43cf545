import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierGraphQL
import CourierTesting

/// GraphQL calls recorded with `HARFixtureRecorder` replay through `ReplayTransport`: the path
/// template `/graphql query GetHero` matches by its path part.
@Suite(.timeLimit(.minutes(1))) struct GraphQLReplayTests {
    @Test func aRecordedQueryReplays() async throws {
        let recorder = HARFixtureRecorder()
        let server = StubTransport { _ in graphQLResponse(#"{"data":{"hero":{"name":"R2-D2"}}}"#) }
        let recording = makeGraphQL(
            server, interceptors: [RequestIDInterceptor(), RetryInterceptor(maximumRetries: 0), recorder])
        #expect(try await recording.send(GetHero()).hero.name == "R2-D2")
        #expect(recorder.archive().entries.first?.pathTemplate == "/graphql query GetHero")

        let replay = ReplayTransport(archive: recorder.archive())
        let graphQL = GraphQLClient(client: APIClient(environment: .graphQLStub) { $0.transport = replay })
        #expect(try await graphQL.send(GetHero()).hero.name == "R2-D2")
        #expect(replay.mismatches.isEmpty, "\(replay.mismatches.map(\.description))")
    }
}
