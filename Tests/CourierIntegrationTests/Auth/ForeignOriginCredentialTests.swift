import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// An absolute URL on an origin the environment does not name (a link taken from a response, a
/// CDN) never gets the environment's credentials: an authorized call to it is refused before
/// anything is sent, and a public one goes without the environment's header fields. The second
/// reference server (`COURIER_API2_URL`, another port: another origin) proves it with its log.
@Suite("Credentials stay on the environment's origins (two reference servers)")
struct ForeignOriginCredentialTests {
    /// A signed-in client whose environment (the first server) carries an `X-API-Key` field.
    private func signedInClient(_ servers: TwoServers) async throws -> APIClient {
        let environment = try APIEnvironment(
            "staging", baseURLs: [APIEnvironment.defaultAPI: TwoServers.base(servers.first, servers.namespace)],
            headers: ["X-API-Key": "SECRET-ENV-KEY"])
        return try await AuthSession.signedInClient(environment).0
    }

    @Test(
        "an authorized call to another origin is refused and sends nothing",
        arguments: [EndpointPolicy.authorizedRead, EndpointPolicy.standard.with(\.auth, .optional)])
    func authorizedCallToAnotherOrigin(policy: EndpointPolicy) async throws {
        let servers = try TwoServers()
        let client = try await signedInClient(servers)
        let link = TwoServers.base(servers.second, servers.namespace).appendingPathComponent("echo/leak")
        do {
            _ = try await client.send(Request<Echo>.get(link.absoluteString, policy: policy))
            Issue.record("the call to another origin was sent")
        } catch let error as NetworkError {
            #expect(error.kind == .invalidRequest, "\(error)")
            #expect("\(error)".contains("not an origin of environment 'staging'"), "\(error)")
            // The origin with its port: two local servers differ only there.
            #expect("\(error)".contains("://\(link.host ?? ""):\(link.port ?? 0) is not"), "\(error)")
        }
        #expect(try await servers.log(servers.second).isEmpty)
    }

    @Test("a public call to another origin goes without the token and without the environment's fields")
    func publicCallToAnotherOrigin() async throws {
        let servers = try TwoServers()
        let client = try await signedInClient(servers)
        let link = TwoServers.base(servers.second, servers.namespace).appendingPathComponent("echo/public")
        _ = try await client.send(Request<Echo>.get(link.absoluteString, policy: .standard.with(\.auth, .none)))
        let seen = try #require(try await servers.log(servers.second).last { $0.path.hasSuffix("/echo/public") })
        #expect(seen.header("Authorization") == nil, "\(seen.headers)")
        #expect(seen.header("X-API-Key") == nil, "\(seen.headers)")
    }

    @Test("an absolute URL on the environment's own origin (a pagination link) keeps the token and fields")
    func absoluteURLOnTheOwnOrigin() async throws {
        let servers = try TwoServers()
        let client = try await signedInClient(servers)
        let link = TwoServers.base(servers.first, servers.namespace).appendingPathComponent("echo/next")
        _ = try await client.send(Request<Echo>.get(link.absoluteString, policy: .authorizedRead))
        let seen = try #require(try await servers.log(servers.first).last { $0.path.hasSuffix("/echo/next") })
        #expect(seen.header("Authorization")?.hasPrefix("Bearer ") == true, "\(seen.headers)")
        #expect(seen.header("X-API-Key") == "SECRET-ENV-KEY")
    }
}
