import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

/// Namespace for the caching unit tests: `swift test --filter CachingTests`.
@Suite enum CachingTests {}

/// A wall clock the test moves by hand; the cache's `now` reads it.
final class ManualDate: Sendable {
    private let current: Locked<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_750_000_000)) { current = Locked(start) }

    var now: Date { current.current }

    func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }

    /// A closure for `HTTPCache.Configuration.now`.
    var provider: @Sendable () -> Date { { [current] in current.current } }
}

/// A suspension point a test opens when it chooses (no timers): waiters resume on `open()`.
actor Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private(set) var arrivals = 0

    func wait() async {
        arrivals += 1
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters.removeAll()
    }
}

enum CacheFixture {
    static let baseURL = URL(string: "https://api.example.test/v1")!
    static let environment = APIEnvironment(name: "cache-unit", baseURL: baseURL)

    struct Item: Codable, Equatable, Sendable {
        var name: String
        var version: Int
    }

    /// An HTTPCache on memory storage with the manual clock and a switchable partition.
    static func cache(
        clock: ManualDate, storage: any CacheStorage = MemoryCacheStorage(),
        partition: Locked<String> = Locked("user-1"),
        configure: (inout HTTPCache.Configuration) -> Void = { _ in }
    ) -> HTTPCache {
        var configuration = HTTPCache.Configuration()
        configuration.now = clock.provider
        configuration.partition = { partition.current }
        configure(&configuration)
        return HTTPCache(storage: storage, configuration: configuration)
    }

    /// A client whose pipeline is `cache.interceptors()` over `transport`, retries off.
    static func client(_ transport: StubTransport, cache: HTTPCache) -> APIClient {
        APIClient(environment: environment) { configuration in
            configuration.transport = transport
            configuration.interceptors = cache.interceptors() + [RetryInterceptor(maximumRetries: 0)]
        }
    }

    /// The item response with `headers`, dated by `clock` (an HTTP-date has whole seconds, and the
    /// manual clock starts on a whole second).
    static func item(_ name: String = "lamp", version: Int = 1, clock: ManualDate, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = headers
        if !headers.contains("Date") { headers.replace("Date", with: HTTPDate.string(from: clock.now)) }
        return .json(#"{"name":"\#(name)","version":\#(version)}"#, headers: headers)
    }

    /// `GET /items/lamp` decoded as ``Item``, with `policy`.
    static func getItem(_ policy: EndpointPolicy = .standard, headers: HTTPHeaders = [:]) -> Request<Item> {
        Request<Item>.get("/items/lamp", headers: headers).policy(policy)
    }
}
