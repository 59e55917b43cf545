import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// What the reference server's `GET /cookies` says it received.
private struct CookiesSeen: Decodable, Sendable {
    var cookie: String?
    var cookies: [String: String]
}

@Suite("Session isolation and logout", .secretGuard)
struct SessionIsolationIntegrationTests {
    @Test func afterLogoutNoRequestCarriesThePreviousAccountsCookie() async throws {
        let observed = try ObservedClient()
        let client = observed.client
        _ = try await client.send(Request<HTTPResponse>.raw(.get, "/cookies/set", query: ["sid": "SECRET-SID"]))
        let before = try await client.send(Request<CookiesSeen>.get("/cookies").verboseLogging)
        #expect(before.cookies["sid"] == "SECRET-SID", "the session cookie is stored and sent back")

        try await client.resetSession()

        let after = try await client.send(Request<CookiesSeen>.get("/cookies").verboseLogging)
        #expect(after.cookie == nil)
        #expect(after.cookies.isEmpty)
        // Server-side truth from the request log: the last /cookies request had no Cookie header.
        let log = try await TestServers.requestLog(namespace: observed.namespace, path: "/cookies")
        #expect(log.count == 2)
        #expect(log.first?.header("Cookie")?.contains("sid=") == true)
        #expect(log.last?.header("Cookie") == nil)
    }

    @Test func anotherClientNeverSeesThisClientsCookies() async throws {
        let first = try ObservedClient()
        let second = try ObservedClient(namespace: first.namespace)
        _ = try await first.client.send(Request<HTTPResponse>.raw(.get, "/cookies/set", query: ["sid": "SECRET-SID"]))
        let seen = try await second.client.send(Request<CookiesSeen>.get("/cookies"))
        #expect(seen.cookie == nil, "each client has its own cookie storage, never the shared jar")
        #expect(HTTPCookieStorage.shared.cookies?.contains { $0.value == "SECRET-SID" } != true)
    }

    @Test func logoutAlsoDropsTheAccountsCachedResponses() async throws {
        let cache = HTTPCache(partition: { "account-1" })
        let observed = try ObservedClient(inner: cache.interceptors())
        let resource = Request<HTTPResponse>.raw(.get, "/cache/resource/profile", query: ["cc": "max-age=600"])
        _ = try await observed.client.send(resource)
        _ = try await observed.client.send(resource)
        #expect(try await resourceRequests("profile", namespace: observed.namespace) == 1, "the second read is a cache hit")

        // One call: the cache interceptor in the pipeline is itself a session participant.
        try await observed.client.resetSession()

        _ = try await observed.client.send(resource)
        #expect(try await resourceRequests("profile", namespace: observed.namespace) == 2, "nothing cached survives logout")
    }

    private func resourceRequests(_ name: String, namespace: String) async throws -> Int {
        let stats = try await TestServers.stats(namespace: namespace)
        return ((stats["cache"] as? [String: Any])?[name] as? [String: Any])?["requests"] as? Int ?? -1
    }
}
