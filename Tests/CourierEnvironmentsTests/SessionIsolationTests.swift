import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
@testable import CourierEnvironments
import CourierTesting

@Suite("A client built for an environment set refuses session state shared between environments")
struct EnvironmentSessionIsolationTests {
    typealias F = EnvironmentFixture

    static func sharedStateError(_ build: () throws -> APIClient) -> String? {
        do {
            _ = try build()
            return nil
        } catch let EnvironmentError.sharedSessionState(reason) {
            return reason
        } catch {
            return "unexpected \(error)"
        }
    }

    @Test("default configurations: each environment gets its own URLSession and cookie storage")
    func defaultsAreIsolated() throws {
        let set = try F.set()
        let client = try APIClient(environments: set)
        var sessions = Set<ObjectIdentifier>()
        var cookies = Set<ObjectIdentifier>()
        guard case .environments(_, let lanes) = client.routing else {
            Issue.record("not routed by environment")
            return
        }
        for lane in lanes {
            let transport = try #require(lane.configuration.transport as? URLSessionTransport)
            sessions.insert(ObjectIdentifier(transport.session))
            cookies.insert(ObjectIdentifier(try #require(transport.cookieStorage)))
        }
        #expect(sessions.count == 3)
        #expect(cookies.count == 3)
    }

    @Test("one transport for two environments is refused")
    func sharedTransport() throws {
        let set = try F.set()
        let shared = URLSessionTransport()
        #expect(
            Self.sharedStateError { try APIClient(environments: set) { configuration, _ in configuration.transport = shared } }
                == "environments 'development' and 'staging' share one URLSession")
    }

    @Test("two transports made from one configuration share its cookie storage: refused")
    func sharedCookieStorage() throws {
        let set = try F.set()
        let configuration = URLSessionTransport.defaultConfiguration()
        #expect(
            Self.sharedStateError {
                try APIClient(environments: set) { config, _ in
                    config.transport = URLSessionTransport(configuration: configuration)
                }
            } == "environments 'development' and 'staging' share one cookie storage")
    }

    @Test("one token manager, or one token file, for two environments is refused")
    func sharedTokens() throws {
        let set = try F.set()
        let manager = TokenManager(
            store: InMemoryTokenStore(), transport: StubTransport { _ in .status(500) },
            grant: .oauth2(tokenURL: URL(string: "https://x.test/token")!))
        #expect(
            Self.sharedStateError {
                try APIClient(environments: set) { config, _ in config.interceptors = [AuthInterceptor(tokenManager: manager)] }
            } == "environments 'development' and 'staging' share one TokenManager")

        let directory = URL(fileURLWithPath: "/tmp/courier-never-written")
        #expect(
            Self.sharedStateError {
                try APIClient(environments: set) { config, _ in
                    config.interceptors = [
                        AuthInterceptor(
                            tokenManager: TokenManager(
                                store: FileTokenStore(fileURL: directory.appendingPathComponent("tokens.json")),
                                transport: StubTransport { _ in .status(500) },
                                grant: .oauth2(tokenURL: URL(string: "https://x.test/token")!)))
                    ]
                }
            } == "environments 'development' and 'staging' share the token file /tmp/courier-never-written/tokens.json")

        // One file per namespace is accepted.
        _ = try APIClient(environments: set) { config, environment in
            config.interceptors = [
                AuthInterceptor(
                    tokenManager: TokenManager(
                        store: FileTokenStore(directory: directory, namespace: environment.storageNamespace),
                        transport: StubTransport { _ in .status(500) },
                        grant: .oauth2(tokenURL: URL(string: "https://x.test/token")!)))
            ]
        }
    }

    @Test("one cache partition for two environments is refused; a partition per namespace is accepted")
    func sharedCachePartition() throws {
        let set = try F.set()
        let storage = MemoryCacheStorage()
        #expect(
            Self.sharedStateError {
                try APIClient(environments: set) { config, _ in config.interceptors = HTTPCache(storage: storage).interceptors() }
            }?.hasPrefix("environments 'development' and 'staging' share the cache partition 'shared'") == true)
        _ = try APIClient(environments: set) { config, environment in
            let namespace = environment.storageNamespace
            config.interceptors = HTTPCache(storage: storage, partition: { namespace }).interceptors()
        }
    }

    @Test("token file names are namespaced and never leave their folder")
    func tokenFileNamespaces() {
        let directory = URL(fileURLWithPath: "/data")
        #expect(FileTokenStore(directory: directory, namespace: "staging").fileURL.path == "/data/tokens.staging.json")
        #expect(FileTokenStore(directory: directory, namespace: "../x").fileURL.path == "/data/tokens...%2Fx.json")
        #expect(FileTokenStore(directory: directory, namespace: "a%2Fb").fileURL.path == "/data/tokens.a%252Fb.json")
    }

    @Test("token files whose names differ only in case are one storage (one file on a case-insensitive disk)")
    func tokenFilesDifferingInCaseShareAnIdentity() {
        let directory = URL(fileURLWithPath: "/data")
        let upper = FileTokenStore(directory: directory, namespace: "Staging").storageIdentity
        let lower = FileTokenStore(directory: directory, namespace: "staging").storageIdentity
        #expect(upper != nil && upper?.key == lower?.key)
        #expect(FileTokenStore(directory: directory, namespace: "production").storageIdentity?.key != lower?.key)
    }

    /// A transport from another package whose connections one instance keeps for every caller.
    struct SharedPoolTransport: Transport, SessionResettable {
        func send(_ request: URLRequest) async throws -> HTTPResponse { HTTPResponse(statusCode: 204) }
        func resetSession() async {}
        var sessionStateIdentities: [SessionStateIdentity] {
            [SessionStateIdentity(key: "pool:shared", label: "the shared connection pool")]
        }
    }

    @Test("a third-party transport names its state through SessionResettable; sharing it is refused")
    func thirdPartyState() throws {
        let set = try F.set()
        #expect(
            Self.sharedStateError { try APIClient(environments: set) { config, _ in config.transport = SharedPoolTransport() } }
                == "environments 'development' and 'staging' share the shared connection pool")
    }
}

extension EnvironmentSessionIsolationTests {
    @Test("cookie folders whose names differ only in case are one folder on a case-insensitive disk: refused like token files")
    func cookieFoldersDifferingOnlyInCaseAreRefused() throws {
        let set = try EnvironmentSet(
            environments: [
                APIEnvironment("staging", baseURL: URL(string: "https://api.example.test/staging")!, storageNamespace: "Shared"),
                APIEnvironment("production", baseURL: URL(string: "https://api.example.test/v1")!, storageNamespace: "shared"),
            ],
            build: EnvironmentFixture.reading(.testFlight),
            mapping: BuildMapping(
                debug: "staging", xcode: "staging", testFlight: "staging", appStore: "production", unknown: "production"),
            store: InMemoryEnvironmentChoiceStore(), override: nil)
        let directory = URL(fileURLWithPath: "/tmp/courier-never-written-cookies")
        let cookies = Self.sharedStateError {
            try APIClient(environments: set) { configuration, environment in
                configuration.transport = CookieStoringTransport(
                    storage: PersistentCookieStorage(directory: directory, namespace: environment.storageNamespace))
            }
        }
        #expect(cookies != nil, "two environments write one cookie folder on APFS/HFS+ and were accepted")
    }
}
