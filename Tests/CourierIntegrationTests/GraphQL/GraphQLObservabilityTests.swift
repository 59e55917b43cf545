import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierGraphQL
import CourierTesting

extension GraphQLIntegrationTests {
    /// Operation names in logs, metrics and HAR; variables redacted in logs.
    @Suite(.timeLimit(.minutes(1))) struct ObservabilityTests {
        typealias Ops = CatalogOperations

        struct SignIn: GraphQLOperation {
            static let document = """
                query SignIn($user: UserInput!) { items(filter: null) { id } }
                """
            static let operationName = "SignIn"
            struct ResponseData: Decodable, Sendable {}
            struct Variables: Encodable, Sendable {
                struct User: Encodable, Sendable {
                    var email: String
                    var password: String
                }
                var user: User
            }
            let variables = Variables(user: .init(email: "alice@example.com", password: "hunter2-secret"))
        }

        /// A filter with a field the server's schema does not have: graphql-core's answer repeats
        /// the whole variable value — `Variable '$filter' got invalid value {'password':
        /// 'pw-gql-private', …}` — and `GraphQLFailure`'s description (and each error's message)
        /// showed the password.
        struct FilterWithSecret: GraphQLOperation {
            static let document = """
                query FilterWithSecret($filter: ItemFilter) { items(filter: $filter) { id } }
                """
            static let operationName = "FilterWithSecret"
            struct ResponseData: Decodable, Sendable {}
            struct Variables: Encodable, Sendable {
                struct Filter: Encodable, Sendable {
                    var status: String
                    var password: String
                }
                var filter: Filter
            }
            let variables = Variables(filter: .init(status: "active", password: "pw-gql-private"))
        }

        @Test(arguments: [GraphQLQueryMethod.post, .get])
        func anErrorRepeatingASecretVariableHidesItInTheFailure(_ method: GraphQLQueryMethod) async throws {
            let (graphQL, _) = try TestServers.graphQLClient { $0.queryMethod = method }
            let failure: GraphQLFailure
            do {
                _ = try await graphQL.send(FilterWithSecret())
                Issue.record("expected the server's variable error")
                return
            } catch let error as GraphQLFailure {
                failure = error
            }
            // The server did repeat the variable (its name and the other values still read).
            let message = try #require(failure.errors.first?.message)
            #expect(message.contains("got invalid value") && message.contains("password") && message.contains("active"))
            for text in [String(describing: failure), failure.localizedDescription] + failure.errors.map(\.description) {
                #expect(!text.contains("pw-gql-private"), "\(method): \(text)")
            }
        }

        @Test func operationNamesReplaceTheBarePathInLogsMetricsAndHAR() async throws {
            let logger = CapturingNetworkLogger(minimumLevel: .info)
            let metrics = CapturingMetricsSink()
            let har = HARRecorder()
            let (graphQL, _) = try TestServers.graphQLClient(
                interceptors: .standard(
                    logger: logger, recorders: [har], metrics: metrics,
                    retry: RetryInterceptor(clock: TestClock())))
            _ = try await graphQL.send(Ops.GetItem(id: "1"))
            _ = try await graphQL.send(Ops.CreateItem(name: "Bulb"))

            #expect(metrics.events.map(\.pathTemplate) == ["/graphql query GetItem", "/graphql mutation CreateItem"])
            #expect(metrics.events.map(\.statusCode) == [200, 200])
            let summaries = logger.entries.map(\.summary)
            #expect(summaries.count == 2)
            #expect(summaries.first?.hasPrefix("← 200 POST /graphql query GetItem ") == true)
            #expect(summaries.last?.hasPrefix("← 200 POST /graphql mutation CreateItem ") == true)
            let entries = try #require(try JSONSerialization.jsonObject(with: har.jsonData()) as? [String: Any])
            let log = try #require(entries["log"] as? [String: Any])
            let harEntries = try #require(log["entries"] as? [[String: Any]])
            #expect(
                harEntries.map { $0["_pathTemplate"] as? String } == ["/graphql query GetItem", "/graphql mutation CreateItem"])
        }

        /// Secret-named variables are redacted in debug body previews by default; the whole
        /// `variables` object with ``Redactor/hidingGraphQLVariables()``, in POST bodies and GET URLs.
        @Test(arguments: [GraphQLQueryMethod.post, .get])
        func variablesAreRedactedInLogs(_ method: GraphQLQueryMethod) async throws {
            let debugLogging = EndpointPolicy.standard.with(\.logging, .debugSafe)
            for hidingAll in [false, true] {
                let logger = CapturingNetworkLogger(minimumLevel: .debug)
                let redactor = hidingAll ? Redactor().hidingGraphQLVariables() : Redactor()
                let (graphQL, _) = try TestServers.graphQLClient(interceptors: [
                    RequestIDInterceptor(), LoggingInterceptor(logger: logger, redactor: redactor), IdempotencyInterceptor(),
                ]) {
                    $0.queryPolicy = debugLogging
                    $0.queryMethod = method
                }
                // The server rejects the unused variable: what matters here is what was logged.
                _ = try? await graphQL.response(for: SignIn())
                let text = logger.text
                #expect(!text.contains("hunter2-secret"), "password leaked (\(method), hidingAll: \(hidingAll))")
                #expect(text.contains("/graphql query SignIn"))
                if hidingAll {
                    #expect(!text.contains("alice@example.com"), "variables shown (\(method))")
                } else {
                    #expect(text.contains("alice@example.com"))  // non-secret variables stay readable
                    #expect(text.contains("<redacted>"))
                }
            }
        }
    }
}
