import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// The "catalog" chapter: Courier's own HTTP cache as a shopping app's catalog screen meets it —
/// a fresh hit, a 304 revalidation, stale-while-revalidate, stale-if-error, an offline-only read,
/// and a snapshot-first screen. The server's counters (`_stats`) prove what reached the network.
///
/// Time passing is simulated by moving the cache's clock (``HTTPCache/Configuration/now``), so the
/// chapter runs in a second.
func runCatalogChapter(_ demo: Demo) async throws {
    let clock = CatalogDemoClock()
    var configuration = HTTPCache.Configuration()
    configuration.now = clock.provider
    configuration.partition = { "demo-user" }
    let cache = HTTPCache(storage: MemoryCacheStorage(byteLimit: 4 * 1024 * 1024), configuration: configuration)
    let client = demo.makeClient { $0.interceptors = [RequestIDInterceptor()] + cache.interceptors() }
    let control = demo.makeClient()

    func show(_ label: String, _ response: Response<CatalogPage>) async throws {
        let outcome = response.context.cacheOutcome.map(\.description) ?? "none"
        let reached = try await serverRequests(response.value.name, control: control)
        demo.say(
            "\(label): v\(response.value.version) (serial \(response.value.serial)) — cache: \(outcome), server saw \(reached) request(s)"
        )
    }

    demo.chapter("Catalog: HTTP cache (fresh hit, 304 revalidation)")
    let catalog = CatalogPage.request("catalog", cacheControl: "max-age=60")
    try await show("open catalog", try await client.response(for: catalog))
    clock.advance(by: 20)
    try await show("back to catalog 20 s later", try await client.response(for: catalog))
    clock.advance(by: 120)
    try await show("2 min later (stale, If-None-Match)", try await client.response(for: catalog))

    demo.chapter("Catalog: stale-while-revalidate (instant screen, refreshed behind it)")
    let deals = CatalogPage.request("deals", cacheControl: "max-age=60, stale-while-revalidate=600")
    try await show("open deals", try await client.response(for: deals))
    try await control.send(Request<Void>.post("/cache/resource/deals/bump"))
    demo.say("(the server publishes deals v2)")
    clock.advance(by: 120)
    let instant = try await client.response(for: deals)
    await cache.waitForBackgroundRevalidations()
    try await show("deals 2 min later (shown at once, refreshed behind it)", instant)
    try await show("deals once more", try await client.response(for: deals))

    demo.chapter("Catalog: stale-if-error (server trouble, the screen keeps working)")
    let featured = CatalogPage.request("featured", cacheControl: "max-age=60, stale-if-error=3600")
    try await show("open featured", try await client.response(for: featured))
    try await control.send(
        Request<Void>(method: .post, path: "/cache/resource/featured/fail", query: ["status": "503", "count": "1"]))
    demo.say("(the server starts answering 503)")
    clock.advance(by: 300)
    try await show("featured 5 min later", try await client.response(for: featured))

    demo.chapter("Catalog: offline-only reads")
    let offline = EndpointPolicy.standard.with(\.cache, .onlyIfCached)
    try await show("catalog, offline", try await client.response(for: catalog.policy(offline)))
    do {
        _ = try await client.send(CatalogPage.request("brand-new", cacheControl: "max-age=60").policy(offline))
    } catch let error as NetworkError {
        demo.say("never-opened page, offline → \"\(error.userMessage)\" [\(error)]")
    }

    demo.chapter("Catalog: snapshot first, then fresh")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-snapshots-\(demo.namespace)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let snapshotClock = CatalogDemoClock()
    let snapshots = SnapshotStore(directory: directory, now: snapshotClock.provider)
    try await snapshots.save(CatalogPage(name: "catalog", version: 0, serial: 0), key: "catalog-screen")
    snapshotClock.advance(by: 45 * 60)
    demo.say("(the app was last opened 45 min ago)")
    let fresh = CatalogPage.request("catalog", cacheControl: "max-age=60").policy(
        .standard.with(\.cache, .reloadIgnoringCacheData))
    for try await state in snapshots.snapshotFirst(key: "catalog-screen", fetch: { try await client.send(fresh) }) {
        switch state {
        case .snapshot(let snapshot, let age):
            demo.say("screen shows saved catalog v\(snapshot.value.version) (\(Int(age / .seconds(60))) min old) while loading…")
        case .fresh(let snapshot):
            demo.say("screen updates to catalog v\(snapshot.value.version) from the network (saved)")
        }
    }
    await cache.removeAll(partition: "demo-user")
    demo.say("logout → the account's cache partition is cleared (\(await cache.storage.totalByteCount()) bytes left)")
}

/// The body of `GET /cache/resource/{name}` on the reference server.
private struct CatalogPage: Codable, Sendable {
    var name: String
    var version: Int
    var serial: Int

    /// `GET /cache/resource/{name}` with the given `Cache-Control` and a strong ETag.
    static func request(_ name: String, cacheControl: String) -> Request<CatalogPage> {
        Request<CatalogPage>.get("/cache/resource/\(name)", query: ["cc": cacheControl, "etag": "1"])
    }
}

/// The wall clock plus a demo-controlled offset. It starts an hour behind the server: a client
/// clock ahead of the server's `Date` would make every response look old on arrival (RFC 9111
/// §4.2.3 apparent age), one behind adds nothing, so each advance ages entries by exactly that much.
private final class CatalogDemoClock: Sendable {
    private let offset = Locked<TimeInterval>(-3600)
    func advance(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
    var provider: @Sendable () -> Date { { [offset] in Date().addingTimeInterval(offset.current) } }
}

/// How many requests for resource `name` reached the server (`cache.{name}.requests` of `_stats`).
private func serverRequests(_ name: String, control: APIClient) async throws -> Int {
    let stats = try await control.send(Request<HTTPResponse>.raw(.get, "/_stats"))
    let json = try JSONSerialization.jsonObject(with: stats.data) as? [String: Any]
    let cache = json?["cache"] as? [String: Any]
    return (cache?[name] as? [String: Any])?["requests"] as? Int ?? 0
}
