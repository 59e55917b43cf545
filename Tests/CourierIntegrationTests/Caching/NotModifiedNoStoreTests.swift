import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

extension CachingIntegrationTests {
    /// A `304` that says `Cache-Control: no-store`: the stored response it validates may be served
    /// this once (the server said it has not changed), but must not stay stored to be served again
    /// without asking the server.
    @Suite("A 304 with no-store")
    struct NotModifiedNoStoreTests {
        @Test func aNotModifiedWithNoStoreLeavesNothingToServeWithoutTheServer() async throws {
            let namespace = TestServers.makeNamespace("c304ns")
            let cache = HTTPCache()
            let client = try CacheIntegration.client(namespace: namespace, cache: cache)
            // Stored with an explicit max-age=0 (never fresh); the 304's no-store replaces it, and
            // the resource's Last-Modified (60 s old) would give a heuristic lifetime of 6 s.
            let request = CacheIntegration.resource(
                "r", ["cc": "max-age=0", "etag": "1", "lastModified": "1", "cc304": "no-store"])
            let first = try await client.send(request)
            let second = try await client.send(request)
            #expect(second == first)  // the 304 validated the stored body
            let third = try await client.send(request)
            #expect(third.serial == 2, "served from the cache after a 304 that said no-store")
            #expect(try await CacheIntegration.counter("requests", of: "r", namespace: namespace) == 3)
            #expect(try await CacheIntegration.counter("notModified", of: "r", namespace: namespace) == 1)
            #expect(try await CacheIntegration.counter("conditionalRequests", of: "r", namespace: namespace) == 1)
        }
    }
}
