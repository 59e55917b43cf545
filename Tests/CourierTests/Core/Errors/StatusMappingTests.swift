import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// Statuses outside the accepted set become the `NetworkError` case the UI acts on (issue 2, item 7).
    @Suite struct StatusMapping {
        enum Kind: String, CaseIterable {
            case unauthorized, forbidden, notFound, conflict, unprocessable, rateLimited, server, client, other
        }

        static func kind(of error: NetworkError?) -> Kind {
            switch error {
            case .unauthorized?: return .unauthorized
            case .forbidden?: return .forbidden
            case .notFound?: return .notFound
            case .conflict?: return .conflict
            case .unprocessable?: return .unprocessable
            case .rateLimited?: return .rateLimited
            case .server?: return .server
            case .client?: return .client
            default: return .other
            }
        }

        @Test(
            "status → case",
            arguments: [
                (400, Kind.client), (401, .unauthorized), (403, .forbidden), (404, .notFound), (405, .client),
                (409, .conflict), (410, .notFound), (418, .client), (422, .unprocessable), (429, .rateLimited),
                (451, .client), (500, .server), (502, .server), (503, .server), (504, .server), (302, .server),
            ])
        func mapping(status: Int, expected: Kind) async throws {
            let stub = StubTransport(responses: [.json(#"{"error":{"code":"c","message":"m"}}"#, status: status)])
            let error = await CoreFixture.networkError {
                try await CoreFixture.client(stub).send(Request<Void>.get("/s"))
            }
            #expect(Self.kind(of: error) == expected)
            #expect(error?.statusCode == status)
            #expect(error?.failedResponse?.code == "c")
            #expect(error?.failedResponse?.message == "m")
        }

        @Test("NetworkError(response:) maps the same table without a client")
        func directMapping() {
            for (status, kind) in [(401, Kind.unauthorized), (404, .notFound), (499, .client), (599, .server)] {
                #expect(Self.kind(of: NetworkError(response: HTTPResponse(statusCode: status))) == kind)
            }
        }

        @Test("422 carries the server's message and field messages")
        func validationProblem() async throws {
            let body =
                #"{"error":{"code":"validation_failed","message":"Validation failed","fields":{"name":["must not be empty"],"price":["is required","must be a number"]}}}"#
            let stub = StubTransport(responses: [.json(body, status: 422)])
            let error = await CoreFixture.networkError {
                try await CoreFixture.client(stub).send(Request<Void>.post("/items", body: ["name": ""]))
            }
            guard case .unprocessable(let problem)? = error else {
                Issue.record("expected unprocessable, got \(String(describing: error))")
                return
            }
            #expect(problem.message == "Validation failed")
            #expect(problem.fieldErrors == ["name": ["must not be empty"], "price": ["is required", "must be a number"]])
            #expect(problem.response.code == "validation_failed")
            #expect(error?.userMessage == "Validation failed")
        }

        @Test("422 field messages from top-level `errors` with string values")
        func validationProblemFlatShape() {
            let response = HTTPResponse.json(#"{"message":"Bad","errors":{"email":"is taken"}}"#, status: 422)
            guard case .unprocessable(let problem) = NetworkError(response: response) else {
                Issue.record("expected unprocessable")
                return
            }
            #expect(problem.message == "Bad")
            #expect(problem.fieldErrors == ["email": ["is taken"]])
        }

        @Test(
            "429 carries Retry-After as seconds or as a date",
            arguments: [
                ("120", RetryAfter.seconds(120)),
                ("Sun, 06 Nov 1994 08:49:37 GMT", .date(Date(timeIntervalSince1970: 784_111_777))),
            ])
        func rateLimited(header: String, expected: RetryAfter) async throws {
            let stub = StubTransport(responses: [
                .status(
                    429, body: "slow down", contentType: "text/plain",
                    headers: ["Retry-After": header])
            ])
            let error = await CoreFixture.networkError { try await CoreFixture.client(stub).send(Request<Void>.get("/r")) }
            guard case .rateLimited(let retryAfter, let response)? = error else {
                Issue.record("expected rateLimited, got \(String(describing: error))")
                return
            }
            #expect(retryAfter == expected)
            #expect(response.snippet == "slow down")
        }

        @Test("429 without (or with a malformed) Retry-After has retryAfter nil", arguments: [nil, "soon"] as [String?])
        func rateLimitedWithoutHint(header: String?) {
            var headers = HTTPHeaders()
            if let header { headers.add("Retry-After", header) }
            guard case .rateLimited(let retryAfter, _) = NetworkError(response: HTTPResponse(statusCode: 429, headers: headers))
            else {
                Issue.record("expected rateLimited")
                return
            }
            #expect(retryAfter == nil)
        }

        @Test("an HTML 502 is a server error with status, media type and a whitespace-collapsed snippet")
        func htmlServerError() async throws {
            let html =
                "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n</body>\n</html>\n"
            let stub = StubTransport(responses: [.status(502, body: html, contentType: "text/html; charset=utf-8")])
            let error = await CoreFixture.networkError {
                try await CoreFixture.client(stub).send(Request<CoreFixture.Item>.get("/items/1"))
            }
            guard case .server(let response)? = error else {
                Issue.record("expected server, got \(String(describing: error))")
                return
            }
            #expect(response.statusCode == 502)
            #expect(response.contentType == "text/html")
            #expect(response.snippet.hasPrefix("<html> <head><title>502 Bad Gateway</title></head> <body>"))
            #expect(response.message == nil)
            #expect(error?.userMessage == "Something went wrong on our side.")
        }

        @Test("FailedResponse keeps at most 64 KiB of body and a 512-byte snippet")
        func bounds() {
            let big = String(repeating: "x", count: 100_000)
            let failed = FailedResponse(HTTPResponse.status(500, body: big, contentType: "text/plain"))
            #expect(failed.body.count == FailedResponse.bodyLimit)
            #expect(failed.snippet.utf8.count == 512)
        }

        @Test("a 5xx's own text never reaches the user; a 4xx's does")
        func serverTextOnlyForClientErrors() async throws {
            let stub = StubTransport(responses: [
                .json(#"{"message":"upstream connect error: pool db-3 exhausted"}"#, status: 503),
                .json(#"{"message":"The title is too long"}"#, status: 400),
            ])
            let client = CoreFixture.client(stub)
            let server = await CoreFixture.networkError { try await client.send(Request<Void>.post("/items")) }
            #expect(server?.failedResponse?.message == "upstream connect error: pool db-3 exhausted")
            #expect(server?.userMessage == "Something went wrong on our side.")
            let client4xx = await CoreFixture.networkError { try await client.send(Request<Void>.post("/items")) }
            #expect(client4xx?.userMessage == "The title is too long")
        }

        @Test(
            "a server's message is one displayable line: controls and bidi overrides removed, whitespace collapsed, 300 characters at most",
            arguments: [
                (#"{"message":"Title\n\n  too\tlong\u0007"}"#, "Title too long"),
                (#"{"message":"Pay \u202Eevil\u202C now"}"#, "Pay evil now"),
                (#"{"message":"   \n\t "}"#, nil),
                (#"{"message":"\u0000\u001B[31m", "detail":"Fallback detail"}"#, "[31m"),
                (#"{"message":"", "detail":"Fallback detail"}"#, "Fallback detail"),
                (#"{"message":"👨‍👩‍👧 family name taken"}"#, "👨‍👩‍👧 family name taken"),
            ] as [(String, String?)])
        func serverTextIsDisplayable(body: String, shown: String?) async throws {
            let client = CoreFixture.client(StubTransport(responses: [.json(body, status: 400)]))
            let error = await CoreFixture.networkError { try await client.send(Request<Void>.post("/items")) }
            #expect(error?.failedResponse?.message == shown)
            #expect(error?.userMessage == shown ?? "The request was not accepted.")
        }

        @Test("a long server message and long field errors are cut at 300 characters with an ellipsis")
        func longServerTextIsCut() async throws {
            let long = String(repeating: "é", count: 5000)
            let body = #"{"message":"\#(long)","errors":{"name":["\#(long)"]}}"#
            let client = CoreFixture.client(StubTransport(responses: [.json(body, status: 400), .json(body, status: 422)]))
            let error = await CoreFixture.networkError { try await client.send(Request<Void>.post("/items")) }
            let message = try #require(error?.failedResponse?.message)
            #expect(message.count == 300 && message.hasSuffix("…"))
            let invalid = await CoreFixture.networkError { try await client.send(Request<Void>.post("/items")) }
            guard case .unprocessable(let problem)? = invalid else {
                Issue.record("expected unprocessable, got \(String(describing: invalid))")
                return
            }
            #expect(problem.fieldErrors["name"]?.first?.count == 300)
        }

        @Test("known-error messages win over the server's message, per status")
        func knownErrors() async throws {
            let stub = StubTransport(responses: [
                .json(#"{"error":{"code":"dup","message":"duplicate key value"}}"#, status: 409),
                .json(#"{"error":{"code":"nf","message":"Item 9 not found"}}"#, status: 404),
            ])
            let client = CoreFixture.client(stub)
            let request = Request<Void>.post("/accounts", body: ["email": "a@b.c"])
                .addKnownError(409, "An account with this e-mail already exists.")
            let conflict = await CoreFixture.networkError { try await client.send(request) }
            #expect(conflict?.userMessage == "An account with this e-mail already exists.")
            #expect(conflict?.failedResponse?.code == "dup")
            // A status without a known message falls back to the server's message.
            let notFound = await CoreFixture.networkError { try await client.send(request) }
            #expect(notFound?.userMessage == "Item 9 not found")
        }

        struct DeleteAccount: Endpoint {
            typealias Response = Void
            var path: String { "/account" }
            var method: HTTPMethod { .delete }
            var knownErrors: [Int: String] { [403: "Only the owner can delete the account."] }
        }

        @Test("an Endpoint type's knownErrors reach the error")
        func endpointKnownErrors() async throws {
            let stub = StubTransport(responses: [.status(403)])
            let error = await CoreFixture.networkError { try await CoreFixture.client(stub).send(DeleteAccount()) }
            guard case .forbidden(let response)? = error else {
                Issue.record("expected forbidden, got \(String(describing: error))")
                return
            }
            #expect(response.message == "Only the owner can delete the account.")
        }

        @Test("raw-status mode returns 409, 429 and 503 as values with headers and body", arguments: [409, 429, 503])
        func rawStatus(status: Int) async throws {
            let stub = StubTransport(responses: [.json(#"{"state":"pending"}"#, status: status, headers: ["Retry-After": "3"])])
            let response = try await CoreFixture.client(stub).send(Request<HTTPResponse>.raw(.post, "/jobs/1/poll"))
            #expect(response.statusCode == status)
            #expect(response.headers["retry-after"] == "3")
            #expect(String(decoding: response.data, as: UTF8.self) == #"{"state":"pending"}"#)
            #expect(stub.requests.first?.httpMethod == "POST")
        }

        @Test("raw-status mode skips response validators")
        func rawStatusSkipsValidators() async throws {
            let stub = StubTransport(responses: [.json(#"{"ok":false,"error":{"code":"x","message":"y"}}"#)])
            let client = CoreFixture.client(stub) { $0.validators = [ErrorEnvelopeValidator()] }
            let response = try await client.send(Request<HTTPResponse>.raw(.get, "/envelope"))
            #expect(response.statusCode == 200)
        }

        struct CreateJob: Endpoint {
            typealias Response = HTTPResponse
            var path: String { "/jobs" }
            var method: HTTPMethod { .post }
            var statusValidation: StatusValidation { .codes([200, 202]) }
        }

        @Test(
            ".codes accepts exactly the listed statuses",
            arguments: [(200, true), (202, true), (201, false), (204, false), (409, false)])
        func acceptedCodes(status: Int, accepted: Bool) async throws {
            let stub = StubTransport(responses: [.status(status)])
            let client = CoreFixture.client(stub)
            if accepted {
                #expect(try await client.send(CreateJob()).statusCode == status)
            } else {
                let error = await CoreFixture.networkError { try await client.send(CreateJob()) }
                #expect(error?.statusCode == status)
            }
        }

        @Test("StatusValidation.accepts")
        func statusValidation() {
            #expect(StatusValidation.successful.accepts(200) && StatusValidation.successful.accepts(299))
            #expect(!StatusValidation.successful.accepts(199) && !StatusValidation.successful.accepts(300))
            #expect(StatusValidation.none.accepts(503) && StatusValidation.none.accepts(101))
            #expect(StatusValidation.codes([304]).accepts(304) && !StatusValidation.codes([304]).accepts(200))
        }

        @Test(
            "server messages are read from the common error body shapes",
            arguments: [
                (#"{"error":{"code":"a","message":"m1"}}"#, "a", "m1"),
                (#"{"code":"b","message":"m2"}"#, "b", "m2"),
                (#"{"error":"invalid_grant","error_description":"m3"}"#, "invalid_grant", "m3"),
                (
                    #"{"type":"https://example.test/probs/out-of-credit","title":"m4","detail":"m5"}"#,
                    "https://example.test/probs/out-of-credit", "m5"
                ),
            ] as [(String, String?, String?)])
        func errorBodyShapes(body: String, code: String?, message: String?) {
            let failed = FailedResponse(HTTPResponse.json(body, status: 400))
            #expect(failed.code == code)
            #expect(failed.message == message)
        }

        @Test("a non-JSON or oversized body gives no code or message")
        func noDetails() {
            #expect(FailedResponse(.status(500, body: "oops", contentType: "text/plain")).message == nil)
            #expect(FailedResponse(.json("[1,2]", status: 500)).code == nil)
        }
    }
}
