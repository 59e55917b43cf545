import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

@Suite("Certificate pinning against the reference server", .secretGuard)
struct PinningIntegrationTests {
    static let current = "n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaM="
    static let backup = "mt6CLBG7Uu5u3sdtY83KB03FYUxMEaEHh0q+IJmBHbo="

    func pinnedClient(pinning host: String) throws -> ObservedClient {
        let policy = try PinningPolicy(pins: [host: [Self.current, Self.backup]])
        return try ObservedClient(transport: TestTransport.make(pinning: policy))
    }

    @Test func unpinnedHostsWorkNormallyThroughThePinningTransport() async throws {
        let observed = try pinnedClient(pinning: "api.example.com")
        let response = try await observed.client.response(for: Request<HTTPResponse>.raw(.get, "/items"))
        #expect(response.statusCode == 200)
        #expect(try await TestServers.requestCount("GET /items", namespace: observed.namespace) == 1)
    }

    @Test func plainHTTPToAPinnedHostIsRefusedAndNeverSent() async throws {
        let host = try #require(try TestServers.apiURL().host)
        let observed = try pinnedClient(pinning: host)
        do {
            _ = try await observed.client.send(Request<HTTPResponse>.raw(.get, "/items"))
            Issue.record("a pinned host must not be reached over plain HTTP")
        } catch let error as NetworkError {
            #expect(error.pinningFailure == .insecureScheme(host: host))
        }
        let stats = try await TestServers.stats(namespace: observed.namespace)
        #expect(stats["totalRequests"] as? Int == 0, "nothing reached the server")
        #expect(observed.metrics.events.first?.errorKind == "pinning")
    }

    #if !canImport(Darwin)
    // PinningTransport (URLSession) cannot check pins on Linux; CurlTransport can (CourierCurlTests).
    @Test(TestTransport.urlSessionOnly) func onLinuxAPinnedHostFailsClosed() async throws {
        let api = try TestServers.apiURL()
        let host = try #require(api.host)
        let observed = try pinnedClient(pinning: host)
        let port = api.port.map { ":\($0)" } ?? ""
        do {
            _ = try await observed.client.send(
                Request<HTTPResponse>.raw(.get, "https://\(host)\(port)/ns/\(observed.namespace)/items"))
            Issue.record("Linux cannot check pins: the request must be refused")
        } catch let error as NetworkError {
            #expect(error.pinningFailure == .unsupportedPlatform(host: host))
            guard case .transport(let urlError) = error else {
                Issue.record("expected a transport error, got \(error)")
                return
            }
            #expect(urlError.code == .secureConnectionFailed)
        }
        #expect(observed.logger.entries.last?.summary.contains("pinning") == true)
    }
    #endif
}
