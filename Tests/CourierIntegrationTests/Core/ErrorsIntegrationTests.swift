import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreIntegrationTests {
    /// Error paths against the reference server (issue 2, items 1, 6 and 7).
    @Suite struct Errors {
        @Test("an HTML 502 is .server with status, content type and snippet, promptly, exactly one outcome")
        func html502() async throws {
            let (client, namespace) = try TestServers.apiClient()
            // Warm the connection first: the bound is about Courier's handling of the 502 (no
            // retry, no wait for more bytes), not about connection setup while the suite starts.
            _ = try await client.send(Request<Echo>.get("/echo/warm-up"))
            let outcomes = Locked<[String]>([])
            let clock = ContinuousClock()
            let start = clock.now
            do {
                // Retries off: the bound is about mapping, and the default pipeline retries a 502.
                let item = try await client.send(Request<CoreLive.Item>.get("/html-502", policy: .standard.with(\.retry, .none)))
                outcomes.withLock { $0.append("value \(item)") }
            } catch let error as NetworkError {
                outcomes.withLock { $0.append("error") }
                guard case .server(let response) = error else {
                    Issue.record("expected server, got \(error)")
                    return
                }
                #expect(response.statusCode == 502)
                #expect(response.contentType == "text/html")
                #expect(response.snippet.contains("<title>502 Bad Gateway</title>"))
                #expect(response.snippet.hasPrefix("<html> <head>"))
                #expect(response.headers["Server"] == "nginx/1.24.0 (Ubuntu)")
                #expect(error.userMessage == "Something went wrong on our side.")
            } catch {
                outcomes.withLock { $0.append("other \(error)") }
            }
            let elapsed = clock.now - start
            // A hang waiting for more bytes would last the 60 s idle timeout; 15 s leaves room for a
            // loaded CI machine without hiding one.
            #expect(elapsed < .seconds(15))
            #expect(outcomes.current == ["error"])
            #expect(try await TestServers.requestCount("GET /html-502", namespace: namespace) == 1)
        }

        @Test(
            "status → case, from the real server",
            arguments: [
                (401, "unauthorized"), (403, "forbidden"), (404, "notFound"), (409, "conflict"), (418, "client"),
                (500, "server"), (503, "server"),
            ])
        func statusTable(status: Int, expected: String) async throws {
            let (client, _) = try TestServers.apiClient()
            let error = await CoreLive.networkError { try await client.send(Request<Void>.get("/status/\(status)")) }
            let kind: String
            switch error {
            case .unauthorized?: kind = "unauthorized"
            case .forbidden?: kind = "forbidden"
            case .notFound?: kind = "notFound"
            case .conflict?: kind = "conflict"
            case .client?: kind = "client"
            case .server?: kind = "server"
            default: kind = String(describing: error)
            }
            #expect(kind == expected)
            #expect(error?.statusCode == status)
            #expect(error?.failedResponse?.contentType == "application/json")
        }

        @Test("429 carries Retry-After (seconds and HTTP-date)")
        func rateLimited() async throws {
            let (client, _) = try TestServers.apiClient()
            let seconds = await CoreLive.networkError {
                // Not retried: the standard policy would wait the 7 s twice before failing.
                try await client.send(
                    Request<Void>.get("/status/429", query: ["retryAfter": "7"]).policy(.standard.with(\.retry, .none)))
            }
            guard case .rateLimited(let retryAfter, let response)? = seconds else {
                Issue.record("expected rateLimited, got \(String(describing: seconds))")
                return
            }
            #expect(retryAfter == .seconds(7))
            #expect(response.statusCode == 429)
            // A client of its own: this one holds its next call to the host for the 7 s (fleet safety).
            let (another, _) = try TestServers.apiClient()
            let dated = await CoreLive.networkError {
                try await another.send(
                    Request<Void>.get("/status/429", query: ["retryAfter": "date+120"]).policy(.standard.with(\.retry, .none)))
            }
            guard case .rateLimited(.date(let date)?, _)? = dated else {
                Issue.record("expected rateLimited with a date, got \(String(describing: dated))")
                return
            }
            let delay = date.timeIntervalSinceNow
            #expect(delay > 100 && delay < 140)
        }

        @Test("422 from the items validation carries the server's field messages")
        func validation() async throws {
            let (client, namespace) = try TestServers.apiClient()
            let error = await CoreLive.networkError {
                try await client.send(Request<CoreLive.Item>.post("/items", body: ["name": " ", "price": "free"]))
            }
            guard case .unprocessable(let problem)? = error else {
                Issue.record("expected unprocessable, got \(String(describing: error))")
                return
            }
            #expect(problem.message == "Validation failed")
            #expect(problem.fieldErrors == ["name": ["must not be empty"], "price": ["must be a number"]])
            #expect(problem.response.code == "validation_failed")
            let stats = try await TestServers.stats(namespace: namespace)
            #expect((stats["items"] as? [String: Any])?["created"] as? Int == 0)
        }

        @Test("known-error messages replace the server's for their status only")
        func knownErrors() async throws {
            let (client, _) = try TestServers.apiClient()
            let conflict = await CoreLive.networkError {
                try await client.send(Request<Void>.post("/status/409").addKnownError(409, "This e-mail is taken."))
            }
            #expect(conflict?.userMessage == "This e-mail is taken.")
            let missing = await CoreLive.networkError {
                try await client.send(Request<Void>.get("/items/999").addKnownError(409, "This e-mail is taken."))
            }
            #expect(missing?.userMessage == "Item 999 not found")
        }

        @Test("raw-status mode returns 409, 429 and 503 as values", arguments: [409, 429, 503])
        func rawStatus(status: Int) async throws {
            let (client, _) = try TestServers.apiClient()
            let response = try await client.send(Request<HTTPResponse>.raw(.get, "/status/\(status)", query: ["retryAfter": "2"]))
            #expect(response.statusCode == status)
            #expect(response.headers["Retry-After"] == "2")
            let body = try JSONSerialization.jsonObject(with: response.data) as? [String: Any]
            #expect(body?["status"] as? Int == status)
        }

        struct Accepting: Endpoint {
            typealias Response = HTTPResponse
            let status: Int
            var path: String { "/status/\(status)" }
            var statusValidation: StatusValidation { .codes([200, 202, 304]) }
        }

        @Test(".codes accepts only the listed statuses", arguments: [(202, true), (201, false), (404, false)])
        func acceptedCodes(status: Int, accepted: Bool) async throws {
            let (client, _) = try TestServers.apiClient()
            if accepted {
                #expect(try await client.send(Accepting(status: status)).statusCode == status)
            } else {
                let error = await CoreLive.networkError { try await client.send(Accepting(status: status)) }
                #expect(error?.statusCode == status)
            }
        }

        @Test("/envelope-error (200) becomes .rejected(insufficient_funds); /envelope-ok passes")
        func envelopes() async throws {
            struct Account: Decodable, Sendable {
                var id: Int
                var name: String
                var balance: Double
            }
            struct Envelope: Decodable, Sendable {
                var ok: Bool
                var data: Account
            }
            let (client, _) = try TestServers.apiClient { $0.validators = [ErrorEnvelopeValidator()] }
            let error = await CoreLive.networkError { try await client.send(Request<EmptyResponse>.get("/envelope-error")) }
            guard case .rejected(let problem)? = error else {
                Issue.record("expected rejected, got \(String(describing: error))")
                return
            }
            #expect(problem.code == "insufficient_funds")
            #expect(problem.message == "Not enough money")
            #expect(problem.response.statusCode == 200)
            let envelope = try await client.send(Request<Envelope>.get("/envelope-ok"))
            #expect(envelope.ok && envelope.data.id == 42 && envelope.data.balance == 100.25)
        }

        @Test("a connection refused is .transport with the URLError")
        func connectionRefused() async throws {
            // Port 9 (discard) has no listener on the loopback interface here.
            let client = APIClient(
                environment: APIEnvironment(name: "closed", baseURL: URL(string: "http://127.0.0.1:9")!),
                configure: TestTransport.configure)
            let error = await CoreLive.networkError { try await client.send(Request<Void>.get("/x")) }
            guard case .transport(let urlError)? = error else {
                Issue.record("expected transport, got \(String(describing: error))")
                return
            }
            #expect(urlError.code == .cannotConnectToHost)
        }
    }
}
