import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension ReviewTests {
    /// Issue 8 §2 small seed items: `onStart`, and the shared transport of the token manager.
    @Suite struct HookTests {
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
            let client = ReviewFixture.client(stub, cache: cache)
            _ = try await client.send(Request<Item>.get("/items/1"))
            now.set(now.current.addingTimeInterval(10))

            let starts = Locked(0)
            let response = try await client.response(for: Request<Item>.get("/items/1").onStart { starts.withLock { $0 += 1 } })
            #expect(response.context.cacheOutcome == .staleServed(.whileRevalidating))
            await cache.waitForBackgroundRevalidations()
            #expect(stub.requestCount == 2)  // the revalidation did go out
            #expect(starts.current == 0)  // but the caller was told nothing started
        }

        /// A token manager without a transport and outside any client fails the refresh with
        /// `.missingInterceptor` — the case named for a pipeline gap, for a missing transport.
        /// (Documents the naming; passes.)
        @Test func tokenManagerWithoutTransportNamesTheProblem() async throws {
            let manager = TokenManager(
                store: InMemoryTokenStore(
                    AuthTokens(accessToken: "a", refreshToken: "r", expiresAt: Date(timeIntervalSince1970: 0))),
                grant: .oauth2(tokenURL: URL(string: "https://auth.example.test/token")!))
            let error = await ReviewFixture.networkError { try await manager.validAccessToken() }
            #expect(error?.kind == .invalidRequest)
        }

        /// One `TokenManager` shared by two clients (two APIs, two transports) refreshes through
        /// the first client created, even for the second client's calls — silently.
    }
}
