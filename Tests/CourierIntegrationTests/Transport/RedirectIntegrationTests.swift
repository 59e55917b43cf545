import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// Credentials stay on their origin when URLSession follows a redirect.
@Suite("Redirects")
struct RedirectIntegrationTests {
    struct HTTPBinHeaders: Decodable { let headers: [String: String] }

    @Test("a redirect to another host drops Authorization and Cookie")
    func crossOriginRedirectDropsCredentials() async throws {
        let (client, _) = try TestServers.apiClient()
        let target = try TestServers.httpbinURL().appendingPathComponent("headers").absoluteString
        let request = Request<HTTPBinHeaders>.get("/status/302", query: ["location": target])
            .header("Authorization", "Bearer SECRET-REDIRECT-TOKEN")
            .header("Cookie", "sid=SECRET-REDIRECT-SID")
            .header("X-Trace", "kept")
        let seen = try await client.send(request).headers
        let names = Set(seen.keys.map { $0.lowercased() })
        #expect(!names.contains("authorization"), "httpbin saw \(seen)")
        #expect(!names.contains("cookie"), "httpbin saw \(seen)")
        #expect(seen.first { $0.key.lowercased() == "x-trace" }?.value == "kept")
    }

    @Test("a redirect on the same origin keeps Authorization")
    func sameOriginRedirectKeepsCredentials() async throws {
        let (client, namespace) = try TestServers.apiClient()
        let request = Request<Echo>.get("/status/302", query: ["location": "/ns/\(namespace)/echo/landed"])
            .header("Authorization", "Bearer same-origin-token")
        let echo = try await client.send(request)
        #expect(echo.routePath == "/echo/landed")
        #expect(echo.headers.first { $0.key.lowercased() == "authorization" }?.value == "Bearer same-origin-token")
    }

    @Test("a redirect to another origin drops every header the redactor treats as secret, unless allowed by name")
    func crossOriginRedirectDropsRedactedHeaders() async throws {
        let target = try TestServers.httpbinURL().appendingPathComponent("headers").absoluteString
        let request = Request<HTTPBinHeaders>.get("/status/302", query: ["location": target])
            .header("X-API-Key", "SECRET-REDIRECT-KEY")
            .header("X-Refresh-Token", "SECRET-REDIRECT-REFRESH")
            .header("X-Trace", "kept")
        let (client, _) = try TestServers.apiClient()
        let seen = try await client.send(request).headers
        let names = Set(seen.keys.map { $0.lowercased() })
        #expect(!names.contains("x-api-key") && !names.contains("x-refresh-token"), "httpbin saw \(seen)")
        #expect(seen.first { $0.key.lowercased() == "x-trace" }?.value == "kept")

        let (allowing, _) = try TestServers.apiClient { $0.redirects.forwardedCredentialHeaders = ["X-API-Key"] }
        let forwarded = try await allowing.send(request).headers
        #expect(forwarded.first { $0.key.lowercased() == "x-api-key" }?.value == "SECRET-REDIRECT-KEY")
        #expect(!forwarded.keys.contains { $0.lowercased() == "x-refresh-token" }, "httpbin saw \(forwarded)")
    }
}
