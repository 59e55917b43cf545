import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CoreTests {
    /// `onStart` fires once, when a call reaches the transport: never for a cache hit, never for the
    /// background revalidation of a stale-while-revalidate hit.
    @Suite struct OnStart {
        @Test func onStartRunsOnceWhenTheTransportIsReachedNotForACacheHit() async throws {
            let stub = StubTransport { _ in .status(200, body: "{}", headers: ["Cache-Control": "max-age=60"]) }
            let client = APIClient(environment: StandardClientFixture.environment) {
                $0.transport = stub
                $0.interceptors = .standard(cache: HTTPCache())
            }
            let started = Locked(0)
            let request = Request<Data>.get("/a").onStart { started.withLock { $0 += 1 } }
            _ = try await client.send(request)
            _ = try await client.send(request)
            #expect(started.current == 1)
        }

        /// `onStart` is documented "not for a cache hit". A stale-while-revalidate hit returns at
        /// once, then the background revalidation runs the rest of the pipeline with the caller's
        /// context, reaches the transport as that call's first attempt and fires `onStart` — a
        /// spinner shown after the screen already has its data, never hidden.
        @Test func onStartNotFiredByBackgroundRevalidation() async throws {
            let now = Locked(Date(timeIntervalSince1970: 1_800_000_000))
            var configuration = HTTPCache.Configuration()
            configuration.now = { now.current }
            let cache = HTTPCache(configuration: configuration)
            let fresh = HTTPResponse.status(
                200, body: #"{"id": 1, "name": "Lamp"}"#, contentType: "application/json",
                headers: ["Cache-Control": "max-age=1, stale-while-revalidate=600", "ETag": "\"v1\""])
            let stub = StubTransport(responses: [fresh, .status(304, headers: ["ETag": "\"v1\""])])
            let client = StandardClientFixture.client(stub, cache: cache)
            _ = try await client.send(Request<Item>.get("/items/1"))
            now.set(now.current.addingTimeInterval(10))

            let starts = Locked(0)
            let response = try await client.response(for: Request<Item>.get("/items/1").onStart { starts.withLock { $0 += 1 } })
            #expect(response.context.cacheOutcome == .staleServed(.whileRevalidating))
            await cache.waitForBackgroundRevalidations()
            #expect(stub.requestCount == 2)  // the revalidation did go out
            #expect(starts.current == 0)  // but the caller was told nothing started
        }
    }
}
