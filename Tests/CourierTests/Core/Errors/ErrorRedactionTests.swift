import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CoreTests {
    /// What an error's description may show of an answer or a redirect: nothing the client's
    /// redactor hides, and none of the request's own secrets.
    @Suite struct ErrorRedaction {
        @Test func aStatusErrorHidesTheRequestsTokenEchoedInTheBody() async throws {
            let stub = StubTransport(responses: [
                .status(403, body: "denied for Authorization: Bearer tok-SECRET-123", contentType: "text/plain")
            ])
            let client = StandardClientFixture.client(stub, tokenManager: StandardClientFixture.signedInManager())
            let error = await StandardClientFixture.networkError {
                try await client.send(Request<Item>.get("/me", policy: .authorizedRead))
            }
            #expect(error?.kind == .forbidden)
            #expect(error?.description.contains("tok-SECRET-123") == false)
        }

        @Test func aStatusErrorHidesWhatTheClientsRedactorHides() async throws {
            var redactor = Redactor()
            redactor.bodyFields.insert("favourite_colour")
            let stub = StubTransport(responses: [.json(#"{"favourite_colour": "teal-4242"}"#, status: 400)])
            let client = StandardClientFixture.client(stub, redactor: redactor)
            let error = await StandardClientFixture.networkError { try await client.send(Request<Item>.get("/people/1")) }
            #expect(error?.kind == .client)
            #expect(error?.description.contains("teal-4242") == false)
        }

        @Test func aServerMessageQuotingTheTokenIsScrubbed() async throws {
            let stub = StubTransport(responses: [
                .json(#"{"message": "token tok-SECRET-123 is revoked"}"#, status: 403)
            ])
            let client = StandardClientFixture.client(stub, tokenManager: StandardClientFixture.signedInManager())
            let error = await StandardClientFixture.networkError {
                try await client.send(Request<Item>.get("/me", policy: .authorizedRead))
            }
            #expect(error?.failedResponse?.message?.contains("tok-SECRET-123") == false)
            #expect(error?.failedResponse?.message?.contains("revoked") == true)
        }

        @Test func aRefusedRedirectsDescriptionHidesBothURLsSecrets() async throws {
            let stub = StubTransport(responses: [
                HTTPResponse(statusCode: 302, headers: ["Location": "https://app.example.org/cb?code=code-SECRET-42&state=s"])
            ])
            let client = CoreFixture.client(stub)
            let error = await CoreFixture.networkError {
                try await client.send(
                    Request<Void>.get("/oauth/authorize", query: ["api_key": "key-SECRET-7"])
                        .redirects(.decide { hop in hop.isCrossOrigin ? .fail(reason: "left the API") : .follow }))
            }
            #expect(error?.kind == .redirectRefused)
            #expect(error?.description.contains("SECRET") == false)
            #expect(error?.description.contains("app.example.org/cb") == true)
        }
    }
}
