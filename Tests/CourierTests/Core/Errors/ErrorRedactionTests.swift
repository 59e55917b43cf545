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

        /// A server that repeats what it was sent — the token of the query, the password of the
        /// body — in its error message, its body or a 422's field messages: the error's texts (its
        /// description, `localizedDescription`, the field errors) hide it as the logs do. Only the
        /// request's header secrets were hidden before.
        @Test func anErrorHidesTheQueryTokenAndBodyPasswordTheServerRepeats() async throws {
            struct Login: Encodable, Sendable {
                var user: String
                var password: String
            }
            let stub = StubTransport(responses: [
                .json(#"{"message": "wrong password pw-SECRET-77 for token qs-SECRET-42"}"#, status: 401),
                .json(#"{"message": "invalid", "errors": {"password": ["pw-SECRET-77 is too common"]}}"#, status: 422),
                .status(200, body: "<p>welcome back, pw-SECRET-77 and qs-SECRET-42</p>", contentType: "text/html"),
            ])
            let client = StandardClientFixture.client(stub)
            let login = Request<Item>.post(
                "/login", body: Login(user: "ann", password: "pw-SECRET-77"), query: ["access_token": "qs-SECRET-42"])
            var errors: [NetworkError] = []
            for _ in 0..<3 {
                if let error = await StandardClientFixture.networkError({ try await client.send(login) }) { errors.append(error) }
            }
            #expect(errors.map(\.kind) == [.unauthorized, .unprocessable, .decoding])
            for error in errors {
                var texts = [error.description, error.localizedDescription, error.userMessage]
                if case .unprocessable(let problem) = error { texts += problem.fieldErrors.values.flatMap { $0 } }
                for text in texts { #expect(!text.contains("SECRET"), "\(text)") }
            }
            #expect(errors.first?.failedResponse?.message == "wrong password <redacted> for token <redacted>")
            if case .unprocessable(let problem)? = errors.dropFirst().first {
                #expect(problem.fieldErrors == ["password": ["<redacted> is too common"]])
            }
        }

        /// An error envelope in a 200 (``ErrorEnvelopeValidator``) that repeats the request's
        /// bearer token or query key: its problem's message and code, and so the error's
        /// description and `localizedDescription`, hide them. Nothing of the request was hidden.
        @Test func anErrorEnvelopeHidesTheRequestsSecretsItRepeats() async throws {
            let stub = StubTransport(responses: [
                .json(#"{"ok": false, "error": {"code": "key-SECRET-7", "message": "token tok-SECRET-123 is revoked"}}"#)
            ])
            let client = StandardClientFixture.client(
                stub, tokenManager: StandardClientFixture.signedInManager(), validators: [ErrorEnvelopeValidator()])
            let error = await StandardClientFixture.networkError {
                try await client.send(Request<Item>.get("/me", query: ["api_key": "key-SECRET-7"], policy: .authorizedRead))
            }
            guard case .rejected(let problem)? = error else {
                Issue.record("expected rejected, got \(String(describing: error))")
                return
            }
            #expect(problem.message == "token <redacted> is revoked")
            #expect(problem.code == "<redacted>")
            for text in [error?.description, error?.localizedDescription, problem.response.description] {
                #expect(text?.contains("SECRET") == false, "\(text ?? "")")
            }
        }

        /// `dump(error)` — what a crash reporter or a debug print of the error writes — showed the
        /// raw `Set-Cookie` of a failed response and the URL a `URLError` keeps, with the query
        /// token and the password it was sent with: the mirrors show the redacted view.
        @Test func aDumpedErrorShowsNoCookieOrURLSecret() async throws {
            let failingURL = try #require(
                URL(string: "https://ann:pw-SECRET-77@api.example.test/v1/me?access_token=qs-SECRET-42"))
            let stub = StubTransport(responses: [
                .success(
                    .status(
                        500, body: "<p>oops</p>", contentType: "text/html",
                        headers: ["Set-Cookie": "sid=sid-SECRET-9; Path=/; HttpOnly"])),
                .failure(URLError(.cannotConnectToHost, userInfo: [NSURLErrorFailingURLErrorKey: failingURL])),
            ])
            let client = StandardClientFixture.client(stub)
            let read = Request<Item>.get("/me", policy: EndpointPolicy.standard.with(\.retry, .none))
            var dumps: [String] = []
            for _ in 0..<2 {
                guard let error = await StandardClientFixture.networkError({ try await client.send(read) }) else { continue }
                var text = ""
                dump(error, to: &text)
                dumps.append(text)
            }
            #expect(dumps.count == 2)
            for text in dumps { #expect(!text.contains("SECRET"), "\(text)") }
            #expect(dumps.first?.contains("sid=<redacted>; Path=/; HttpOnly") == true)
            #expect(dumps.last?.contains("transport") == true)
        }

        /// A transport that refuses the URL (`URLError.badURL`, `.unsupportedURL`): the
        /// `invalidRequest` error named the failing URL as it was, query token and password.
        @Test func aBadURLErrorHidesTheURLsSecrets() async throws {
            let url = try #require(
                URL(string: "https://ann:pw-SECRET-77@api.example.test/v1/me?access_token=qs-SECRET-42&page=2"))
            let stub = StubTransport(responses: [.failure(URLError(.badURL, userInfo: [NSURLErrorFailingURLErrorKey: url]))])
            let client = StandardClientFixture.client(stub)
            let error = await StandardClientFixture.networkError { try await client.send(Request<Item>.get("/me")) }
            #expect(error?.kind == .invalidRequest)
            #expect(
                error?.description
                    == "invalid request: bad URL: https://ann:<redacted>@api.example.test/v1/me?access_token=<redacted>&page=2")
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
