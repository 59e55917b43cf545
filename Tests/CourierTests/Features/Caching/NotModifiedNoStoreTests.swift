import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CachingTests {
    /// A `304` (or a `HEAD` that freshens the stored `GET`) whose `Cache-Control` says `no-store`
    /// leaves nothing stored: the next call asks the server (RFC 9111 §5.2.2.5).
    @Suite struct NotModifiedNoStore {
        let clock = ManualDate()

        /// The stored response: fresh for 10 s, then 60 s of stale-while-revalidate; every later
        /// answer says `no-store`: a 304 to a conditional GET, a 200 to a HEAD or an unconditional GET.
        func server() -> StubTransport {
            let clock = self.clock
            let count = Locked(0)
            return StubTransport { request in
                let n = count.withLock {
                    $0 += 1
                    return $0
                }
                if n == 1 {
                    return CacheFixture.item(
                        clock: clock, headers: ["Cache-Control": "max-age=10, stale-while-revalidate=60", "ETag": #""v1""#])
                }
                if request.httpMethod != "HEAD", request.value(forHTTPHeaderField: "If-None-Match") == nil {
                    return CacheFixture.item(clock: clock, headers: ["Cache-Control": "no-store", "ETag": #""v1""#])
                }
                let headers: HTTPHeaders = [
                    "Cache-Control": "no-store", "ETag": #""v1""#, "Date": HTTPDate.string(from: clock.now),
                ]
                if request.httpMethod == "HEAD" { return HTTPResponse(statusCode: 200, headers: headers, body: Data()) }
                return HTTPResponse(statusCode: 304, headers: headers, body: Data())
            }
        }

        @Test func aBackgroundRevalidationAnsweredWithNoStoreRemovesTheEntry() async throws {
            let stub = server()
            let cache = CacheFixture.cache(clock: clock)
            let client = CacheFixture.client(stub, cache: cache)
            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 20)
            let stale = try await client.response(for: CacheFixture.getItem())
            #expect(stale.context.cacheOutcome == .staleServed(.whileRevalidating))
            await cache.waitForBackgroundRevalidations()
            #expect(stub.requestCount == 2)
            let next = try await client.response(for: CacheFixture.getItem())
            #expect(next.context.cacheOutcome == .miss)
            #expect(stub.requestCount == 3)
        }

        @Test func aHeadThatSaysNoStoreRemovesTheStoredGet() async throws {
            let stub = server()
            let cache = CacheFixture.cache(clock: clock)
            let client = CacheFixture.client(stub, cache: cache)
            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 20)
            _ = try await client.response(for: Request<Void>.head("/items/lamp"))
            #expect(stub.requestCount == 2)
            // Without the HEAD's no-store the entry would still be within stale-while-revalidate.
            let next = try await client.response(for: CacheFixture.getItem())
            #expect(next.context.cacheOutcome == .miss)
            #expect(stub.requestCount == 3)
        }
    }
}
