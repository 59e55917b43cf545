import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

@Suite("Pinning configuration and matching")
struct PinningPolicyTests {
    static let current = "n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaM="
    static let backup = "mt6CLBG7Uu5u3sdtY83KB03FYUxMEaEHh0q+IJmBHbo="
    static let other = "EQ0GTPsJIrIAzMmjppP4PDPmgkIsrAF5q9yuY5cv7t8="

    func digest(_ base64: String) throws -> [UInt8] { try SPKIPin(base64: base64).digest }

    @Test func aHostWithoutABackupPinIsAConfigurationError() {
        #expect(throws: PinningConfigurationError.missingBackupPin(host: "api.example.com")) {
            try HostPins(host: "api.example.com", pins: [Self.current])
        }
        #expect(throws: PinningConfigurationError.missingBackupPin(host: "api.example.com")) {
            try HostPins(host: "API.example.com.", pins: [Self.current, "sha256/" + Self.current])
        }
        #expect(throws: PinningConfigurationError.missingBackupPin(host: "api.example.com")) {
            try PinningPolicy(pins: ["api.example.com": [Self.current]])
        }
    }

    @Test(arguments: ["", "https://api.example.com", "api.example.com:443", "api.example.com/v1", "*.example.com"])
    func hostsMustBeBareNames(host: String) {
        #expect(throws: PinningConfigurationError.invalidHost(host)) {
            try HostPins(host: host, pins: [Self.current, Self.backup])
        }
    }

    @Test func invalidPinsAndDuplicateHostsAreRejected() throws {
        #expect(throws: PinningConfigurationError.invalidPin(host: "a.example.com", pin: "abc")) {
            try HostPins(host: "a.example.com", pins: [Self.current, "abc"])
        }
        let hosts = try HostPins(host: "a.example.com", pins: [Self.current, Self.backup])
        #expect(throws: PinningConfigurationError.duplicateHost("a.example.com")) {
            try PinningPolicy([hosts, try HostPins(host: "A.example.com", pins: [Self.backup, Self.other])])
        }
    }

    @Test func aChainPassesWhenAnyOfItsKeysIsPinned() throws {
        let policy = try PinningPolicy(pins: ["api.example.com": [Self.current, Self.backup]])
        #expect(policy.evaluate(host: "api.example.com", digests: [try digest(Self.other), try digest(Self.backup)]) == nil)
        #expect(policy.evaluate(host: "API.EXAMPLE.COM", digests: [try digest(Self.current)]) == nil)
        let failure = policy.evaluate(host: "api.example.com", digests: [try digest(Self.other)])
        #expect(failure == .pinMismatch(host: "api.example.com", presented: [Self.other]))
        #expect(policy.evaluate(host: "api.example.com", digests: []) != nil, "no key at all never passes")
        #expect(policy.evaluate(host: "cdn.example.com", digests: [try digest(Self.other)]) == nil, "unpinned host")
    }

    @Test func subdomainsArePinnedOnlyWhenAskedAndTheNearestEntryWins() throws {
        let policy = try PinningPolicy([
            HostPins(host: "example.com", pins: [Self.current, Self.backup], includesSubdomains: true),
            HostPins(host: "api.example.com", pins: [Self.backup, Self.other]),
            HostPins(host: "example.org", pins: [Self.current, Self.backup]),
        ])
        #expect(policy.pins(for: "example.com")?.host == "example.com")
        #expect(policy.pins(for: "img.cdn.example.com")?.host == "example.com")
        #expect(policy.pins(for: "api.example.com")?.host == "api.example.com")
        #expect(policy.pins(for: "www.example.org") == nil)
        #expect(policy.pins(for: "badexample.com") == nil)
    }

    @Test func theDebugBypassWorksOnlyInDebugBuilds() throws {
        let policy = try PinningPolicy(pins: ["api.example.com": [Self.current, Self.backup]], bypassesInDebugBuilds: true)
        #if DEBUG
        #expect(policy.isBypassed)
        #expect(policy.evaluate(host: "api.example.com", digests: [try digest(Self.other)]) == nil)
        #else
        #expect(!policy.isBypassed)
        #endif
        #expect(!(try PinningPolicy(pins: ["api.example.com": [Self.current, Self.backup]])).isBypassed)
    }

    @Test func failuresTravelAsTypedURLErrorsThroughTheClient() async throws {
        let failure = PinningFailure.pinMismatch(host: "api.example.com", presented: [Self.other])
        #expect(failure.urlError.code == .serverCertificateUntrusted)
        #expect(failure.urlError.pinningFailure == failure)
        #expect(PinningFailure.unsupportedPlatform(host: "h").urlError.code == .secureConnectionFailed)

        let client = try ObservabilityFixtures.makeClient(
            transport: StubTransport(responses: [.failure(failure.urlError)]), interceptors: [])
        do {
            _ = try await client.send(Request<HTTPResponse>.raw(.get, "/"))
            Issue.record("expected a pinning failure")
        } catch let error as NetworkError {
            #expect(error.pinningFailure == failure)
            #expect(!error.isCancellation, "a refused pin is a failure, not a cancellation")
        }
    }
}

@Suite("PinningTransport")
struct PinningTransportTests {
    static func policy() throws -> PinningPolicy {
        try PinningPolicy(pins: ["pinned.invalid": [PinningPolicyTests.current, PinningPolicyTests.backup]])
    }

    @Test func plainHTTPToAPinnedHostIsRefusedBeforeSending() async throws {
        let transport = PinningTransport(policy: try Self.policy())
        let request = URLRequest(url: try #require(URL(string: "http://pinned.invalid/items")))
        await #expect(throws: URLError.self) { try await transport.send(request) }
        do {
            _ = try await transport.send(request)
        } catch let error as URLError {
            #expect(error.pinningFailure == .insecureScheme(host: "pinned.invalid"))
        }
    }

    #if !canImport(Darwin)
    @Test func onLinuxAPinnedHostFailsClosedWithoutTouchingTheNetwork() async throws {
        let transport = PinningTransport(policy: try Self.policy())
        // `.invalid` never resolves (RFC 6761): reaching the network would give a DNS error, not this.
        let request = URLRequest(url: try #require(URL(string: "https://pinned.invalid/items")))
        do {
            _ = try await transport.send(request)
            Issue.record("a pinned host must not be reachable on Linux")
        } catch let error as URLError {
            #expect(error.pinningFailure == .unsupportedPlatform(host: "pinned.invalid"))
            #expect(error.code == .secureConnectionFailed)
        }
    }

    @Test func aStreamedCallIsCheckedLikeABufferedOne() async throws {
        let transport = PinningTransport(policy: try Self.policy())
        for url in ["https://pinned.invalid/feed", "http://pinned.invalid/feed"] {
            let request = URLRequest(url: try #require(URL(string: url)))
            do {
                _ = try await transport.stream(request, options: StreamingOptions())
                Issue.record("a pinned host must not be streamed from on Linux")
            } catch let error as URLError {
                #expect(error.pinningFailure != nil)
            }
        }
    }
    #endif
}
