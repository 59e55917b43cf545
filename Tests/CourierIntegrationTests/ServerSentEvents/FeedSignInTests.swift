import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

extension ServerSentEventsIntegrationTests {
    /// Alice's authorized feed drops while Alice signs out and Bob signs in: the feed ends as
    /// signed out and never reconnects under Bob's token. It used to reconnect as Bob, sending
    /// Alice's `Last-Event-ID` with Bob's token and handing Bob's events to Alice's consumer.
    @Test func aFeedDroppedWhileAnotherUserSignsInDoesNotReconnectAsThatUser() async throws {
        struct Login: Encodable, Sendable {
            var username: String
            var password = "secret"
        }
        let namespace = TestServers.makeNamespace("sse")
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        let tokens = TokenManager(
            store: InMemoryTokenStore(), transport: URLSessionTransport(),
            grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("auth/refresh")))
        let clock = TestClock(mode: .manual)
        let client = try Self.client(namespace: namespace, clock: clock, interceptors: .standard(tokenManager: tokens))
        let alice = try await client.send(
            Request<OAuthTokenResponse>.post("/auth/login", body: Login(username: "alice"), policy: .authRefresh))
        try await tokens.signIn(alice.tokens())

        let feed = client.events(
            Self.feed("mine", ["auth": "1", "count": "0", "interval": "0.05"], policy: .authorizedRead),
            configuration: Self.noJitter)
        let states = Self.drive(feed, clock: clock)
        var events: [ServerSentEvent] = []
        var failure: (any Error)?
        do {
            for try await event in feed {
                events.append(event)
                if events.count == 3 {
                    try await tokens.signOut()
                    let bob = try await client.send(
                        Request<OAuthTokenResponse>.post("/auth/login", body: Login(username: "bob"), policy: .authRefresh))
                    try await tokens.signIn(bob.tokens())
                    _ = try await TestServers.control("POST", "_sse/mine/restart", namespace: namespace)
                }
                // Bounded, however slow the machine: a reconnection shows in the feed's record.
                if events.count > 3, try await Self.record("mine", namespace: namespace).connections >= 2 { break }
                if events.count > 200 { break }
            }
        } catch {
            failure = error
        }
        _ = await states.value
        #expect((failure as? NetworkError)?.kind == .signedOut, "\(String(describing: failure))")
        let record = try await Self.record("mine", namespace: namespace)
        #expect(record.connections == 1, "Alice's feed reconnected under Bob's sign-in: \(record.lastEventIds)")
        let sent = try await TestServers.requestLog(namespace: namespace, path: "/sse/mine")
        #expect(sent.count == 1)
    }
}
