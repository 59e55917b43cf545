import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
@testable import CourierGraphQL
import CourierTesting

/// Reading responses (GraphQL spec §7.1, GraphQL-over-HTTP draft "Status Codes").
@Suite struct ResponseTests {
    @Test func partialDataIsReturnedWithErrorsOrRefusedBySend() async throws {
        let body =
            #"{"data":{"hero":{"name":"R2-D2","friends":null}},"errors":[{"message":"Friends unavailable","path":["hero","friends"],"extensions":{"code":"UPSTREAM","retryable":true}}],"extensions":{"cost":3}}"#
        let stub = StubTransport(responses: [graphQLResponse(body), graphQLResponse(body)])
        let graphQL = makeGraphQL(stub)
        let result = try await graphQL.response(for: GetHero())
        #expect(result.data.hero == Hero(name: "R2-D2", friends: nil))
        #expect(result.isPartial)
        #expect(result.errors.map(\.description) == ["Friends unavailable (at hero.friends, code UPSTREAM)"])
        #expect(result.errors.first?.extensions["retryable"] == .bool(true))
        #expect(result.extensions["cost"] == .number(3))

        let failure = await #expect(throws: GraphQLFailure.self) { try await graphQL.send(GetHero()) }
        #expect(failure?.hasPartialData == true)
        #expect(failure?.codes == ["UPSTREAM"])
    }

    @Test func errorsWithNullDataCarryEveryMessagePathAndCode() async throws {
        let body =
            #"{"data":null,"errors":[{"message":"A","path":["hero"],"extensions":{"code":"FORBIDDEN"}},{"message":"B","locations":[{"line":1,"column":3}],"path":["hero",0,"name"]},{"message":"C","extensions":{"code":"FORBIDDEN"}}]}"#
        let stub = StubTransport(responses: [graphQLResponse(body)])
        let failure = await #expect(throws: GraphQLFailure.self) { try await makeGraphQL(stub).response(for: GetHero()) }
        #expect(failure?.errors.map(\.message) == ["A", "B", "C"])
        #expect(failure?.errors.map(\.pathDescription) == ["hero", "hero[0].name", ""])
        #expect(failure?.errors.map(\.code) == ["FORBIDDEN", nil, "FORBIDDEN"])
        #expect(failure?.errors[1].locations == [.init(line: 1, column: 3)])
        #expect(failure?.codes == ["FORBIDDEN"])
        #expect(failure?.hasPartialData == false)
        #expect(failure?.statusCode == 200)
    }

    /// A non-optional field nulled by an error: the errors explain it, not a decoding failure.
    @Test func dataNulledByAnErrorIsAFailureNotADecodingError() async throws {
        let body = #"{"data":{"hero":null},"errors":[{"message":"Hero is gone","path":["hero"]}]}"#
        let stub = StubTransport(responses: [graphQLResponse(body)])
        let failure = await #expect(throws: GraphQLFailure.self) { try await makeGraphQL(stub).response(for: GetHero()) }
        #expect(failure?.errors.map(\.message) == ["Hero is gone"])
    }

    /// The mutation ran and its result came back; an `errors` entry that is a string (not the
    /// spec's object) made the whole body a decoding failure, so the caller never learnt the
    /// mutation was applied (and might send it again).
    @Test func anErrorEntryThatIsNotAnObjectKeepsTheDataAndTheOtherErrors() async throws {
        let body =
            #"{"data":{"renameHero":{"name":"Luke"}},"errors":["Audit log unavailable",null,{"message":"Slow","extensions":{"code":"SLOW"}}]}"#
        let stub = StubTransport(responses: [graphQLResponse(body), graphQLResponse(body)])
        let graphQL = makeGraphQL(stub)
        let result = try await graphQL.response(for: RenameHero())
        #expect(result.data.renameHero.name == "Luke")
        #expect(result.errors.map(\.message) == ["Audit log unavailable", "(no message)", "Slow"])
        #expect(result.errors.map(\.code) == [nil, nil, "SLOW"])
        let failure = await #expect(throws: GraphQLFailure.self) { try await graphQL.send(RenameHero()) }
        #expect(failure?.hasPartialData == true)
        #expect(stub.requestCount == 2)
    }

    @Test func undecodableDataWithoutErrorsIsADecodingError() async throws {
        let stub = StubTransport(responses: [graphQLResponse(#"{"data":{"hero":{"nom":"R2"}}}"#)])
        let error = await #expect(throws: NetworkError.self) { try await makeGraphQL(stub).send(GetHero()) }
        guard case .decoding(let failure)? = error else {
            Issue.record("expected decoding, got \(String(describing: error))")
            return
        }
        #expect(failure.codingPath == "data.hero.name")
    }

    @Test func bodyThatIsNotAGraphQLResponseIsADecodingError() async throws {
        let stub = StubTransport(responses: [.json(#"{"ok":true}"#)])
        let error = await #expect(throws: NetworkError.self) { try await makeGraphQL(stub).send(GetHero()) }
        guard case .decoding? = error else {
            Issue.record("expected decoding, got \(String(describing: error))")
            return
        }
    }

    @Test func fourHundredWithGraphQLMediaTypeIsAGraphQLFailure() async throws {
        let stub = StubTransport(responses: [
            graphQLResponse(
                #"{"errors":[{"message":"Syntax Error: Expected Name, found <EOF>.","locations":[{"line":1,"column":20}]}]}"#,
                status: 400)
        ])
        let failure = await #expect(throws: GraphQLFailure.self) { try await makeGraphQL(stub).send(GetHero()) }
        #expect(failure?.statusCode == 400)
        #expect(failure?.errors.first?.message == "Syntax Error: Expected Name, found <EOF>.")
    }

    /// `application/json` with 4xx may come from anything on the way (GraphQL-over-HTTP draft):
    /// it stays an HTTP error, as does a proxy's HTML 502.
    @Test func non2xxWithoutGraphQLMediaTypeIsAnHTTPError() async throws {
        let stub = StubTransport(responses: [
            .json(#"{"errors":[{"message":"nope"}]}"#, status: 403),
            .status(502, body: "<html>Bad Gateway</html>", contentType: "text/html"),
        ])
        let graphQL = makeGraphQL(stub)
        let forbidden = await #expect(throws: NetworkError.self) { try await graphQL.send(GetHero()) }
        guard case .forbidden? = forbidden else {
            Issue.record("expected forbidden, got \(String(describing: forbidden))")
            return
        }
        let badGateway = await #expect(throws: NetworkError.self) { try await graphQL.send(GetHero()) }
        #expect(badGateway?.statusCode == 502)
    }

    @Test func legacyJSONResponseWithErrorsIn200IsRead() async throws {
        let stub = StubTransport(responses: [.json(#"{"errors":[{"message":"Cannot query field \"x\""}]}"#)])
        let failure = await #expect(throws: GraphQLFailure.self) { try await makeGraphQL(stub).send(GetHero()) }
        #expect(failure?.errors.map(\.message) == [#"Cannot query field "x""#])
    }

    @Test func tokenRejectionMatchesOnlyListedCodesInErrors() {
        let rejection = GraphQLTokenRejection(codes: ["UNAUTHENTICATED"])
        #expect(rejection.matches(.json(#"{"data":null,"errors":[{"message":"x","extensions":{"code":"UNAUTHENTICATED"}}]}"#)))
        #expect(!rejection.matches(.json(#"{"data":{"note":"UNAUTHENTICATED"}}"#)))
        #expect(!rejection.matches(.json(#"{"errors":[{"message":"UNAUTHENTICATED","extensions":{"code":"FORBIDDEN"}}]}"#)))
        #expect(!rejection.matches(.status(502, body: "UNAUTHENTICATED", contentType: "text/plain")))
        #expect(!GraphQLTokenRejection(codes: []).matches(.json(#"{"errors":[{"extensions":{"code":"UNAUTHENTICATED"}}]}"#)))
    }
}
