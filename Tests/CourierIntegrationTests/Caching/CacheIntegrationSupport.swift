import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// Namespace for the caching integration tests: `scripts/test --filter CachingIntegrationTests`.
@Suite enum CachingIntegrationTests {}

/// The real wall clock plus an offset the test moves, so the cache can be made to see an entry
/// as stale without waiting (the server's `Date` headers stay real).
///
/// It starts an hour *behind* the server: by RFC 9111 §4.2.3 a client clock ahead of the
/// server's `Date` makes every response arrive "old" (apparent age), while one behind adds
/// nothing. So as long as a test advances it by less than an hour, stored responses age exactly
/// by the advances, and freshly validated ones are fresh again.
final class ShiftedClock: Sendable {
    private let offset = Locked<TimeInterval>(-3600)

    func advance(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }

    var provider: @Sendable () -> Date { { [offset] in Date().addingTimeInterval(offset.current) } }
}

/// The body of `GET /cache/resource/{name}`.
struct CachedResource: Decodable, Equatable, Sendable {
    var name: String
    var version: Int
    var lang: String?
    var serial: Int
}

enum CacheIntegration {
    /// An HTTPCache over `storage` on the shifted clock, with a switchable partition.
    static func cache(
        clock: ShiftedClock = ShiftedClock(), storage: any CacheStorage = MemoryCacheStorage(),
        partition: Locked<String> = Locked("user-1")
    ) -> HTTPCache {
        var configuration = HTTPCache.Configuration()
        configuration.now = clock.provider
        configuration.partition = { partition.current }
        return HTTPCache(storage: storage, configuration: configuration)
    }

    /// A client for the reference API in `namespace` whose pipeline is the cache's interceptors.
    static func client(namespace: String, cache: HTTPCache) throws -> APIClient {
        try TestServers.apiClient(namespace: namespace) {
            $0.interceptors = cache.interceptors() + [RetryInterceptor(maximumRetries: 0)]
        }.0
    }

    /// `GET /cache/resource/{name}` with the header-choosing query parameters.
    static func resource(_ name: String, _ query: [String: String], headers: HTTPHeaders = [:]) -> Request<CachedResource> {
        Request<CachedResource>.get(
            "/cache/resource/\(name)",
            query: Query(
                query.sorted { $0.key < $1.key }.map {
                    URLQueryItem(name: $0.key, value: $0.value)
                }), headers: headers)
    }

    /// The `cache.{name}` stats of the resource.
    static func resourceStats(_ name: String, namespace: String) async throws -> [String: Any] {
        let stats = try await TestServers.stats(namespace: namespace)
        return ((stats["cache"] as? [String: Any])?[name] as? [String: Any]) ?? [:]
    }

    /// One integer counter of the resource (`requests`, `conditionalRequests`, `notModified`, …).
    static func counter(_ counter: String, of name: String, namespace: String) async throws -> Int {
        try await resourceStats(name, namespace: namespace)[counter] as? Int ?? -1
    }

    /// `POST /ns/{namespace}{path}?{query}` on the reference server (a control call outside the
    /// client under test); returns the status.
    @discardableResult
    static func post(_ path: String, query: [String: String] = [:], namespace: String) async throws -> Int {
        let base = try TestServers.apiURL().appendingPathComponent("ns").appendingPathComponent(namespace)
        guard var components = URLComponents(url: base, resolvingAgainstBaseURL: false) else { throw URLError(.badURL) }
        components.percentEncodedPath += path
        if !query.isEmpty {
            components.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        }
        guard let url = components.url else { throw URLError(.badURL) }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// The namespace's `requests` counter for a route (`"GET /cache/collection"`), 0 when absent.
    static func routeCount(_ route: String, namespace: String) async throws -> Int {
        let stats = try await TestServers.stats(namespace: namespace)
        return ((stats["requests"] as? [String: Any])?[route] as? Int) ?? 0
    }

    /// A fresh temporary directory (removed by the caller).
    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-it-\(UUID().uuidString)")
    }
}
