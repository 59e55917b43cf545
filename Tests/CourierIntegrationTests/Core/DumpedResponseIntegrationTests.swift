import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// What the value an authorized call returns shows of itself when an app dumps it.
@Suite struct DumpedResponseIntegrationTests {
    /// `dump(_:)` of the `Response` of an authorized `GET /me` printed the call's context whole —
    /// down to the request last handed to the transport, `allHTTPHeaderFields: ["Authorization":
    /// "Bearer eyJ…"]` — so an app dumping a response while debugging (or a crash reporter that
    /// reflects values) wrote the access token it never handled itself.
    @Test func aDumpedResponseOfAnAuthorizedCallShowsNoToken() async throws {
        let namespace = TestServers.makeNamespace("auth")
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        let (client, manager) = try await AuthSession.signedInClient(environment)
        let token = try #require(try await manager.validAccessToken())
        let me = try await client.response(for: AuthSession.me)
        #expect(me.value.username == "alice")
        // The server got the token with the call.
        let sent = try await TestServers.requestLog(namespace: namespace).filter { $0.path.hasSuffix("/me") }
        #expect(sent.map { $0.header("Authorization") } == ["Bearer \(token)"])

        var dumped = ""
        dump(me, to: &dumped)
        #expect(!dumped.contains(token), "\(dumped.prefix(2000))")
        #expect(dumped.contains(me.context.requestID.description))
        var context = ""
        dump(me.context, to: &context)
        #expect(!context.contains(token) && context.contains("/me"))
    }
}

extension DumpedResponseIntegrationTests {
    /// `print` and `dump(_:)` of a raw `HTTPResponse` showed the server's `Set-Cookie: session=…`
    /// and the URL's `access_token` whole, where a failed call's error (which holds the same
    /// response) shows them redacted.
    @Test func aPrintedOrDumpedResponseShowsNoCookieOrURLSecret() async throws {
        let (client, _) = try TestServers.apiClient()
        let response = try await client.send(
            Request<HTTPResponse>.raw(.get, "/cookies/set", query: ["session": "s-private-1", "access_token": "at-private-1"]))
        #expect(response.headers.values(for: "Set-Cookie").contains { $0.contains("s-private-1") })
        #expect(response.url?.absoluteString.contains("at-private-1") == true)

        var dumped = ""
        dump(response, to: &dumped)
        for text in ["\(response)", String(reflecting: response), dumped] {
            #expect(!text.contains("s-private-1") && !text.contains("at-private-1"), "\(text)")
            #expect(text.contains("200") && text.contains("session=<redacted>"), "\(text)")
        }
    }
}
