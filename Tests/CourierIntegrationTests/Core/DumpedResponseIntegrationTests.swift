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
