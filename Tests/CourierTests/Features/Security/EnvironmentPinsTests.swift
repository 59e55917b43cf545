import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// An environment's pins are never dropped silently: a client whose transport does not enforce
/// them refuses calls to the pinned hosts before anything is sent.
@Suite("Environment pins")
struct EnvironmentPinsTests {
    static let pins = [
        "n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaM=", "mt6CLBG7Uu5u3sdtY83KB03FYUxMEaEHh0q+IJmBHbo=",
    ]

    /// A transport that answers every request and counts them, and says nothing about pins: what
    /// an app's own transport (a logging wrapper, a URLSessionTransport with other settings) is.
    final class CountingTransport: Transport {
        let sent = Locked(0)
        func send(_ request: URLRequest) async throws -> HTTPResponse {
            sent.withLock { $0 += 1 }
            return .json("{}")
        }
    }

    func pinnedProduction() throws -> APIEnvironment {
        try APIEnvironment(
            "production", baseURL: URL(string: "https://api.example.test/v1")!,
            pins: try PinningPolicy(pins: ["api.example.test": Self.pins]))
    }

    @Test("a client for a pinned environment gets a PinningTransport with its pins by default")
    func defaultTransportEnforcesThePins() throws {
        let environment = try pinnedProduction()
        let client = APIClient(environment: environment)
        let transport = try #require(client.configuration.transport as? PinningTransport)
        #expect(try #require(environment.pins).isEnforced(by: transport))
        #expect(APIClient(environment: .stub).configuration.transport is URLSessionTransport)
    }

    @Test("a transport installed without the environment's pins refuses pinned hosts, sends nothing")
    func aTransportWithoutThePinsRefusesPinnedHosts() async throws {
        let transport = CountingTransport()
        let client = APIClient(environment: try pinnedProduction()) { $0.transport = transport }
        let error = await #expect(throws: NetworkError.self) {
            let _: Void = try await client.post("/payments", body: ["amount": 10])
        }
        #expect(error?.pinningFailure == .transportIgnoresPins(host: "api.example.test"))
        #expect(transport.sent.withLock { $0 } == 0)

        // A host the environment does not pin is not affected.
        _ = try await client.get(URL(string: "https://cdn.example.test/logo.png")!) as [String: String]
        #expect(transport.sent.withLock { $0 } == 1)
    }

    @Test("a plain client switched onto a pinned environment keeps refusing what it cannot pin")
    func aSwitchOntoPinnedEnvironmentFailsClosed() async throws {
        let transport = CountingTransport()
        let client = APIClient(environment: try APIEnvironment("staging", baseURL: URL(string: "https://api.example.test/v1")!)) {
            $0.transport = transport
        }
        _ = try await client.get("/items") as [String: String]
        try await client.switchEnvironment(to: try pinnedProduction())
        let error = await #expect(throws: NetworkError.self) { _ = try await client.get("/items") as [String: String] }
        #expect(error?.pinningFailure == .transportIgnoresPins(host: "api.example.test"))
        #expect(transport.sent.withLock { $0 } == 1)
    }

    @Test("a redirect onto a pinned host is refused when the transport does not enforce the pins")
    func aRedirectOntoAPinnedHostIsRefused() async throws {
        let sent = Locked<[String]>([])
        let transport = StubTransport { request in
            sent.withLock { $0.append(request.url?.absoluteString ?? "") }
            return HTTPResponse(
                statusCode: 302, headers: ["Location": "https://api.example.test/v1/account"], url: request.url)
        }
        let client = APIClient(environment: try pinnedProduction()) { $0.transport = Unenforcing(base: transport) }
        let error = await #expect(throws: NetworkError.self) {
            _ = try await client.get(URL(string: "https://cdn.example.test/start")!) as [String: String]
        }
        #expect(error?.pinningFailure == .transportIgnoresPins(host: "api.example.test"))
        #expect(sent.withLock { $0 } == ["https://cdn.example.test/start"])
    }

    @Test("a token refresh through a transport of its own never reaches a pinned host unpinned")
    func aRefreshThroughAnotherTransportIsRefused() async throws {
        let refreshes = CountingTransport()
        let tokens = TokenManager(
            store: InMemoryTokenStore(
                AuthTokens(accessToken: "old", refreshToken: "r1", expiresAt: Date(timeIntervalSince1970: 0))),
            transport: refreshes, grant: .oauth2(tokenURL: URL(string: "https://api.example.test/oauth/token")!))
        let client = APIClient(environment: try pinnedProduction()) {
            $0.transport = StubTransport { _ in .json("{}") }
            $0.interceptors = .standard(tokenManager: tokens)
        }
        let error = await #expect(throws: NetworkError.self) {
            _ = try await client.send(Request<[String: String]>.get("/me", policy: .authorizedRead))
        }
        #expect(error?.pinningFailure == .transportIgnoresPins(host: "api.example.test"))
        #expect(refreshes.sent.withLock { $0 } == 0, "the refresh token never left")
    }

    /// Passes requests to `base` but says nothing about pins: an app's own wrapper.
    struct Unenforcing: Transport {
        let base: any Transport
        func send(_ request: URLRequest) async throws -> HTTPResponse { try await base.send(request) }
    }

    @Test("test transports connect to no server: a pinned environment's calls reach them")
    func testTransportsAreNotRefused() async throws {
        let client = APIClient(environment: try pinnedProduction()) { $0.transport = StubTransport { _ in .json("{}") } }
        _ = try await client.get("/items") as [String: String]
        let conditioned = APIClient(environment: try pinnedProduction()) {
            $0.transport = ConditionedTransport(wrapping: StubTransport { _ in .json("{}") }, conditions: .init())
        }
        _ = try await conditioned.get("/items") as [String: String]
    }

    @Test("a PinningTransport or cookie-storing wrapper enforces exactly its own policy")
    func enforcementIsPerPolicy() throws {
        let policy = try PinningPolicy(pins: ["api.example.test": Self.pins])
        let other = try PinningPolicy(pins: ["other.example.test": Self.pins])
        let pinning = PinningTransport(policy: policy)
        #expect(policy.isEnforced(by: pinning))
        #expect(!other.isEnforced(by: pinning))
        // Nothing is stored: the storage's folder is never created.
        let storage = PersistentCookieStorage(
            directory: FileManager.default.temporaryDirectory.appendingPathComponent("unused-\(UUID())"),
            namespace: "p", account: { "a" })
        #expect(policy.isEnforced(by: CookieStoringTransport(storage: storage, base: pinning)))
        #expect(!policy.isEnforced(by: CookieStoringTransport(storage: storage)))
        #expect(!policy.isEnforced(by: URLSessionTransport()))
    }
}
