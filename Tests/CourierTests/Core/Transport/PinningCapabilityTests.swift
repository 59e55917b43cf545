import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("PinningTransport follows raisesServerTrustChallenges (both branches run on Linux, no network)")
struct PinningCapabilityTests {
    static func pinnedRequest() throws -> URLRequest {
        URLRequest(url: try #require(TransportFixtures.url))
    }

    @Test("without server-trust challenges a pinned host fails closed before anything is sent")
    func unsupportedWithoutChallenges() async throws {
        let base = URLSessionTransport(configuration: .ephemeral, capabilities: .foundationNetworking)
        let transport = PinningTransport(policy: try TransportFixtures.policy(), base: base)
        do {
            _ = try await transport.send(try Self.pinnedRequest())
            Issue.record("a pinned host must be refused")
        } catch let error as URLError {
            #expect(error.pinningFailure == .unsupportedPlatform(host: "api.example.com"))
        }
    }

    @Test("with server-trust challenges, a session whose delegate is not Courier's cannot check pins and is refused")
    func foreignDelegateRefused() async throws {
        let base = URLSessionTransport(session: URLSession(configuration: .ephemeral), capabilities: .apple)
        let transport = PinningTransport(policy: try TransportFixtures.policy(), base: base)
        for call in [
            { try await transport.send(try Self.pinnedRequest()) },
            {
                try await transport.stream(try Self.pinnedRequest(), options: StreamingOptions())
            },
        ] as [@Sendable () async throws -> HTTPResponse] {
            do {
                _ = try await call()
                Issue.record("a pinned host must be refused")
            } catch let error as URLError {
                #expect(error.pinningFailure == .trustHandledElsewhere(host: "api.example.com"))
            }
        }
    }

    @Test("plain http to a pinned host is refused whatever the platform can do", arguments: [true, false])
    func insecureScheme(challenges: Bool) async throws {
        let capabilities = TransportFixtures.capabilities(.foundationNetworking) { $0.raisesServerTrustChallenges = challenges }
        let base = URLSessionTransport(configuration: .ephemeral, capabilities: capabilities)
        let transport = PinningTransport(policy: try TransportFixtures.policy(), base: base)
        let request = URLRequest(url: try #require(URL(string: "http://api.example.com/items")))
        do {
            _ = try await transport.send(request)
            Issue.record("plain http to a pinned host must be refused")
        } catch let error as URLError {
            #expect(error.pinningFailure == .insecureScheme(host: "api.example.com"))
        }
    }
}
