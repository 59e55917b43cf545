import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

@Suite("Redirect modes")
struct RedirectModeTests {
    /// A server whose `/hop/N` redirects (302) to `/hop/N+1` until `/hop/last`, which answers 200.
    static func chain(last: Int, location: @escaping @Sendable (Int) -> String = { "/v1/hop/\($0)" }) -> StubTransport {
        StubTransport { request in
            let url = request.url ?? URL(fileURLWithPath: "/")
            let number = Int(url.lastPathComponent) ?? 0
            if number < last {
                return HTTPResponse(statusCode: 302, headers: ["Location": location(number + 1)], url: url)
            }
            return HTTPResponse(statusCode: 200, body: Data("landed".utf8), url: url)
        }
    }

    @Test("follow is the default: every hop is sent and the final response returned")
    func followsByDefault() async throws {
        let stub = Self.chain(last: 3)
        let client = CoreFixture.client(stub)
        let response = try await client.response(for: Request<Data>.get("/hop/0"))
        #expect(response.statusCode == 200)
        #expect(stub.requestCount == 4)
        #expect(response.context.redirects.count == 3)
    }

    @Test("doNotFollow returns the 3xx as the response, whatever statuses the call accepts, with its Location")
    func doNotFollowReturnsTheRedirect() async throws {
        let stub = Self.chain(last: 3)
        let client = CoreFixture.client(stub)
        let response = try await client.response(for: Request<Void>.get("/hop/0").redirects(.doNotFollow))
        #expect(response.statusCode == 302)
        #expect(response.response.headers["Location"] == "/v1/hop/1")
        #expect(stub.requestCount == 1)
        #expect(response.context.redirects.isEmpty)

        let raw = try await client.send(Request<HTTPResponse>.raw(.get, "/hop/0").redirects(.doNotFollow))
        #expect(raw.statusCode == 302)
        #expect(stub.requestCount == 2)
    }

    @Test(
        "doNotFollow returns a redirect it could never follow (https → http, an unusable Location) instead of failing",
        arguments: ["http://127.0.0.1:8080/callback?code=abc", "https://[::1"])
    func doNotFollowReturnsAnUnfollowableRedirect(_ location: String) async throws {
        let stub = StubTransport(responses: [HTTPResponse(statusCode: 302, headers: ["Location": location])])
        let client = CoreFixture.client(stub)
        let response = try await client.response(for: Request<Void>.get("/oauth/authorize").redirects(.doNotFollow))
        #expect(response.statusCode == 302)
        #expect(response.response.headers["Location"] == location)
        #expect(stub.requestCount == 1)
    }

    @Test("a 3xx the call could not follow anyway is still an error when the call does not accept it")
    func unfollowableRedirectStaysAnError() async throws {
        let stub = StubTransport(responses: [HTTPResponse(statusCode: 300, headers: ["Location": "/v1/a"])])
        let client = CoreFixture.client(stub)
        await #expect(throws: NetworkError.self) {
            try await client.send(Request<Void>.get("/choices").redirects(.doNotFollow))
        }
    }

    @Test("decide sees each hop (from, to, status, number) and can stop: the redirect it stopped at is returned")
    func decideSeesEachHopAndStops() async throws {
        let stub = Self.chain(last: 5)
        let client = CoreFixture.client(stub)
        let seen = Locked<[RedirectHop]>([])
        let mode = RedirectMode.decide { hop in
            seen.withLock { $0.append(hop) }
            return hop.number < 3 ? .follow : .stop
        }
        let response = try await client.response(for: Request<Void>.get("/hop/0").redirects(mode))
        #expect(response.statusCode == 302)
        #expect(response.response.headers["Location"] == "/v1/hop/3")
        #expect(stub.requestCount == 3)
        let hops = seen.withLock { $0 }
        #expect(hops.map(\.number) == [1, 2, 3])
        #expect(hops.map(\.statusCode) == [302, 302, 302])
        #expect(hops.map(\.to.path) == ["/v1/hop/1", "/v1/hop/2", "/v1/hop/3"])
        #expect(hops.first?.from.path == "/v1/hop/0")
        #expect(hops.allSatisfy { !$0.isCrossOrigin && $0.method == "GET" })
    }

    @Test("decide can fail the call with a typed error naming the hop; nothing is sent to its target")
    func decideFails() async throws {
        let stub = Self.chain(last: 2) { "https://elsewhere.example.org/v1/hop/\($0)" }
        let client = CoreFixture.client(stub)
        let mode = RedirectMode.decide { hop in
            hop.isCrossOrigin ? .fail(reason: "left the API") : .follow
        }
        let error = await #expect(throws: NetworkError.self) {
            try await client.send(Request<Void>.get("/hop/0").header("X-API-Key", "k-1").redirects(mode))
        }
        guard case .redirectRefused(let refusal) = error else {
            Issue.record("expected redirectRefused, got \(String(describing: error))")
            return
        }
        #expect(refusal.reason == "left the API")
        #expect(refusal.hop.to.host == "elsewhere.example.org")
        #expect(refusal.hop.number == 1)
        #expect(error?.kind == .redirectRefused)
        #expect(stub.requestCount == 1)
    }

    @Test("a followed cross-origin hop drops X-API-Key in every mode that follows")
    func decidedHopKeepsTheSafetyRules() async throws {
        let stub = Self.chain(last: 1) { "https://cdn.example.org/v1/hop/\($0)" }
        let client = CoreFixture.client(stub)
        _ = try await client.send(
            Request<Void>.get("/hop/0").header("X-API-Key", "k-1").header("X-Trace", "t").redirects(.decide { _ in .follow }))
        let second = try #require(stub.requests.last)
        #expect(second.url?.host == "cdn.example.org")
        #expect(second.value(forHTTPHeaderField: "X-API-Key") == nil)
        #expect(second.value(forHTTPHeaderField: "X-Trace") == "t")
    }

    @Test("the hop limit applies to decided hops too")
    func hopLimit() async throws {
        let stub = Self.chain(last: 50)
        let client = CoreFixture.client(stub)
        let error = await #expect(throws: NetworkError.self) {
            try await client.send(Request<Void>.get("/hop/0").redirects(.decide { _ in .follow }))
        }
        #expect(error?.kind == .transport)
        #expect(stub.requestCount == 21)
    }
}
