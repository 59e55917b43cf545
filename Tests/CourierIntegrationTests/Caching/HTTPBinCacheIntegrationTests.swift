import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

extension CachingIntegrationTests {
    /// Third-party checks against stock httpbin: its caching routes behave as RFC 9111 expects.
    /// httpbin has no counters, so the outcome plus what httpbin echoes tells what went over the wire.
    @Suite struct HTTPBin {
        private func client(_ cache: HTTPCache = CacheIntegration.cache()) throws -> APIClient {
            APIClient(environment: try TestServers.httpbinEnvironment()) {
                $0.transport = TestTransport.make()
                $0.interceptors = cache.interceptors()
            }
        }

        @Test func etagRouteIsRevalidatedWithIfNoneMatch() async throws {
            let client = try client()
            let request = Request<HTTPResponse>.raw(.get, "/etag/courier-1")
            let first = try await client.response(for: request)
            let second = try await client.response(for: request)
            #expect(first.response.headers["ETag"]?.contains("courier-1") == true)
            #expect(first.context.cacheOutcome == .miss)
            // httpbin sends no freshness, so the entry is stale at once and must be validated; a 304
            // from httpbin means it received our If-None-Match.
            #expect(second.context.cacheOutcome == .revalidated)
            #expect(second.statusCode == 200)
            #expect(second.response.data == first.response.data)
        }

        @Test func cacheRouteAnswers304ToOurConditionalRequest() async throws {
            let clock = ShiftedClock()
            let client = try client(CacheIntegration.cache(clock: clock))
            let request = Request<HTTPResponse>.raw(.get, "/cache")
            let first = try await client.response(for: request)
            // Last-Modified is "now", so the heuristic lifetime is a fraction of a second at most:
            // move the cache's clock so the entry is certainly stale.
            clock.advance(by: 10)
            let second = try await client.response(for: request)
            #expect(first.response.headers["Last-Modified"] != nil)
            #expect(second.context.cacheOutcome == .revalidated)
            #expect(second.response.data == first.response.data)
        }

        @Test(arguments: [60, 3600])
        func cacheSecondsRouteIsServedFresh(_ seconds: Int) async throws {
            let client = try client()
            let request = Request<HTTPResponse>.raw(.get, "/cache/\(seconds)")
            let first = try await client.response(for: request)
            let second = try await client.response(for: request)
            #expect(first.response.headers["Cache-Control"] == "public, max-age=\(seconds)")
            #expect(second.context.cacheOutcome == .hit)
            #expect(second.response.data == first.response.data, "the same bytes, including httpbin's per-request fields")
        }

        @Test func responseHeadersRouteHonoursNoStoreAndMaxAge() async throws {
            let client = try client()
            let cached = Request<HTTPResponse>.raw(
                .get, "/response-headers", query: ["Cache-Control": "max-age=60", "X-Probe": "1"])
            let uncached = Request<HTTPResponse>.raw(
                .get, "/response-headers", query: ["Cache-Control": "no-store", "X-Probe": "2"])
            _ = try await client.send(cached)
            _ = try await client.send(uncached)
            #expect(try await client.response(for: cached).context.cacheOutcome == .hit)
            #expect(try await client.response(for: uncached).context.cacheOutcome == .miss)
        }
    }
}
