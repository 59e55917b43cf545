import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierGraphQL
import CourierTesting

extension GraphQLIntegrationTests {
    /// `UNAUTHENTICATED` in a 200 starts the same refresh flow as a 401.
    @Suite(.timeLimit(.minutes(1))) struct AuthTests {
        typealias Ops = CatalogOperations

        /// The client believes its expired token is valid (reactive mode), so only the server's
        /// GraphQL error can tell it: one refresh, one resend, the new token's data.
        @Test func unauthenticatedCodeRefreshesOnceAndResends() async throws {
            let session = try await AuthSession.start(mode: .reactive)
            let graphQL = GraphQLClient(client: session.client) { $0.queryPolicy = .authorizedRead }
            let result = try await graphQL.response(for: Ops.Viewer())

            let refreshed = try #require(AuthSession.jti(session.store.read()?.accessToken))
            #expect(refreshed != AuthSession.jti(session.signedIn.accessToken))
            #expect(result.data.viewer.username == "alice")
            #expect(result.data.viewer.tokenId == refreshed)
            #expect(result.context.attempt == 2)

            let stats = try await GraphQLServerStats.fetch(session.namespace)
            #expect(stats.stats.refreshCalls == 1)
            #expect(stats.int("unauthenticated") == 1)
            #expect(stats.executions("Viewer") == 2)
            #expect(stats.stats.authorized == 1)
        }

        /// The mapping is per client: without the code in the list the error reaches the caller
        /// and nothing is refreshed.
        @Test func withoutTheCodeMappingNothingIsRefreshed() async throws {
            let session = try await AuthSession.start(mode: .reactive)
            let graphQL = GraphQLClient(client: session.client) {
                $0.queryPolicy = .authorizedRead
                $0.tokenRejectionCodes = []
            }
            do {
                _ = try await graphQL.send(Ops.Viewer())
                Issue.record("expected UNAUTHENTICATED")
            } catch let failure as GraphQLFailure {
                #expect(failure.codes == ["UNAUTHENTICATED"])
                #expect(failure.errors.first?.path == [.field("viewer")])
            }
            let stats = try await GraphQLServerStats.fetch(session.namespace)
            #expect(stats.stats.refreshCalls == 0)
            #expect(stats.int("unauthenticated") == 1)
        }

        /// A refreshed token that is refused again is not refreshed a second time.
        @Test func secondRejectionIsReturnedNotRefreshedAgain() async throws {
            let session = try await AuthSession.start(mode: .reactive)
            // NOT_FOUND listed as a rejection code: the server sends it on every attempt, whatever
            // the token, so the second one must be returned as is.
            let graphQL = GraphQLClient(client: session.client) {
                $0.queryPolicy = .authorizedRead
                $0.tokenRejectionCodes = ["UNAUTHENTICATED", "NOT_FOUND"]
            }
            do {
                _ = try await graphQL.send(Ops.GetItem(id: "99"))
                Issue.record("expected NOT_FOUND")
            } catch let failure as GraphQLFailure {
                #expect(failure.codes == ["NOT_FOUND"])
            }
            let stats = try await GraphQLServerStats.fetch(session.namespace)
            #expect(stats.stats.refreshCalls == 1)
            #expect(stats.executions("GetItem") == 2)
        }
    }
}
