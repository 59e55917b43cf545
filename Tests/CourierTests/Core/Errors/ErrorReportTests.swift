import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// What a failed call reports: the decoding failure's kind and its redacted snippet, server
    /// errors without tokens, and error comparison.
    @Suite struct ErrorReports {
        /// An OAuth server answering `text/plain` form-encoded (common; GitHub's legacy default):
        /// the body is not redacted at all in `bodySnippet` (text bodies skip structural redaction).
        @Test func decodingSnippetHidesTokenInTextBody() async throws {
            let stub = StubTransport(responses: [
                .status(
                    200, body: "access_token=at-SECRET-42424242&token_type=bearer&refresh_token=rt-SECRET-99999999",
                    contentType: "text/plain")
            ])
            let client = StandardClientFixture.client(stub)
            let error = await StandardClientFixture.networkError { try await client.send(Request<Item>.get("/token")) }
            let failure = StandardClientFixture.decodingFailure(error)
            #expect(failure?.bodySnippet.contains("at-SECRET-42424242") == false)
            #expect(failure?.bodySnippet.contains("rt-SECRET-99999999") == false)
            #expect(error?.description.contains("at-SECRET") == false)
        }

        /// A proxy/debug HTML page echoing the request's `Authorization` header: the snippet is
        /// "redacted like a log", but a log scrubs the request's secrets from the response preview
        /// and the snippet does not know them.
        @Test func decodingSnippetHidesTheRequestsOwnBearerToken() async throws {
            let stub = StubTransport(responses: [
                .status(
                    200, body: "<html><body>Request headers: Authorization: Bearer tok-SECRET-123</body></html>",
                    contentType: "text/html")
            ])
            let client = StandardClientFixture.client(stub, tokenManager: StandardClientFixture.signedInManager())
            let error = await StandardClientFixture.networkError {
                try await client.send(Request<Item>.get("/me", policy: .authorizedRead))
            }
            let failure = StandardClientFixture.decodingFailure(error)
            #expect(failure?.kind == .unexpectedContentType)
            #expect(failure?.bodySnippet.contains("tok-SECRET-123") == false)
        }

        /// `.standard(redactor:)` takes the app's redactor, but `DecodingFailure` always redacts
        /// with `Redactor()`: a field the app declared secret shows in the snippet.
        @Test func decodingSnippetUsesTheClientsRedactor() async throws {
            var redactor = Redactor()
            redactor.bodyFields.insert("favourite_colour")
            let stub = StubTransport(responses: [.json(#"{"favourite_colour": "teal-4242", "name": "Ann"}"#)])
            let client = StandardClientFixture.client(stub, redactor: redactor)
            let error = await StandardClientFixture.networkError { try await client.send(Request<Item>.get("/people/1")) }
            let failure = StandardClientFixture.decodingFailure(error)
            #expect(failure?.kind == .typeMismatch)
            #expect(failure?.bodySnippet.contains("teal-4242") == false)
        }

        /// `FailedResponse.snippet` (and so `NetworkError.description`/`failureReason`, which apps log)
        /// is the raw body: a 500 whose JSON echoes a token leaks it, although the same body in a
        /// decoding failure would be redacted.
        @Test func serverErrorDescriptionDoesNotLeakTokens() async throws {
            let stub = StubTransport(responses: [
                .json(#"{"refresh_token": "rt-SECRET-77777777", "trace": "x"}"#, status: 500)
            ])
            let client = StandardClientFixture.client(stub, retry: RetryInterceptor(clock: TestClock()))
            let error = await StandardClientFixture.networkError {
                try await client.send(Request<Item>.get("/x", policy: .standard.with(\.retry, .none)))
            }
            #expect(error?.kind == .server)
            #expect(error?.failedResponse?.snippet.contains("rt-SECRET-77777777") == false)
            #expect(error?.description.contains("rt-SECRET-77777777") == false)
        }

        /// A body of only whitespace/newline (what some frameworks send for "no content") is
        /// classified `malformedBody`, not `emptyBody`.
        @Test func whitespaceOnlyBodyIsEmptyBody() async throws {
            let stub = StubTransport(responses: [.status(200, body: "\n", contentType: "application/json")])
            let client = StandardClientFixture.client(stub)
            let error = await StandardClientFixture.networkError { try await client.send(Request<Item>.get("/x")) }
            #expect(StandardClientFixture.decodingFailure(error)?.kind == .emptyBody)
        }

        /// A captive-portal page that starts with a UTF-8 BOM and claims `application/json`
        /// (or has no type) is `malformedBody`, not `unexpectedContentType`.
        @Test func htmlWithByteOrderMarkIsUnexpectedContentType() async throws {
            var body = Data([0xEF, 0xBB, 0xBF])
            body.append(Data("<!DOCTYPE html><html><title>Sign in to Wi-Fi</title></html>".utf8))
            let stub = StubTransport(responses: [
                HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: body)
            ])
            let client = StandardClientFixture.client(stub)
            let error = await StandardClientFixture.networkError { try await client.send(Request<Item>.get("/x")) }
            #expect(StandardClientFixture.decodingFailure(error)?.kind == .unexpectedContentType)
        }

        /// `NetworkError ==` is documented as comparing "the response's status, code and body", but
        /// it compares every field of `FailedResponse`, headers included: the same 404 with another
        /// `Date` or `X-Request-ID` is unequal, so `#expect(error == .notFound(…))` is brittle.
        @Test func equalityIgnoresVolatileHeaders() async throws {
            let a = HTTPResponse(statusCode: 404, headers: ["Date": "Mon, 01 Jan 2024 00:00:00 GMT"], body: Data("{}".utf8))
            let b = HTTPResponse(statusCode: 404, headers: ["Date": "Mon, 01 Jan 2024 00:00:01 GMT"], body: Data("{}".utf8))
            #expect(NetworkError.notFound(FailedResponse(a)) == NetworkError.notFound(FailedResponse(b)))
        }

        /// `Endpoint` doc: "`Optional` gives `nil` on an empty body". `Data?` gives empty `Data`.
        @Test func optionalDataIsNilOnNoContent() async throws {
            let stub = StubTransport(responses: [.status(204)])
            let client = StandardClientFixture.client(stub)
            let value = try await client.send(Request<Data?>.get("/avatar"))
            #expect(value == nil)
        }
    }
}
