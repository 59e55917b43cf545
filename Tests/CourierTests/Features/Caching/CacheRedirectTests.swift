import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CachingTests {
    /// A redirect is followed below the cache: what comes back is another URL's answer, never
    /// stored or applied under the URL that was asked for (RFC 9111 §2, RFC 9110 §15.4).
    @Suite struct Redirects {
        let clock = ManualDate()

        /// `GET /items/lamp` answered by a `302` to `/items/v{n}`, whose 200 is fresh for an hour.
        func redirectingServer(target: Locked<Int>, etag: Bool = false) -> StubTransport {
            let clock = clock
            return StubTransport { request in
                let url = try #require(request.url)
                if url.path == "/v1/items/lamp" {
                    return HTTPResponse(statusCode: 302, headers: ["Location": "/v1/items/v\(target.current)"], url: url)
                }
                let version = Int(url.lastPathComponent.dropFirst()) ?? 0
                if etag, request.value(forHTTPHeaderField: "If-None-Match") == #""same""# {
                    return HTTPResponse(
                        statusCode: 304, headers: ["ETag": #""same""#, "Date": HTTPDate.string(from: clock.now)], url: url)
                }
                var headers: HTTPHeaders = ["Cache-Control": "max-age=3600"]
                if etag { headers["ETag"] = #""same""# }
                var response = CacheFixture.item(version: version, clock: clock, headers: headers)
                response.url = url
                return response
            }
        }

        @Test func theTargetOfARedirectIsNotServedForTheURLAskedFor() async throws {
            let target = Locked(1)
            let stub = redirectingServer(target: target)
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))

            let first = try await client.response(for: CacheFixture.getItem())
            target.withLock { $0 = 2 }  // the origin now points the URL elsewhere
            let second = try await client.response(for: CacheFixture.getItem())

            #expect(first.value.version == 1)
            #expect(second.value.version == 2)
            #expect(second.context.cacheOutcome == .miss)
            #expect(stub.requestCount == 4, "each call asks the origin where the URL points now")
        }

        @Test func aRedirectRemovesTheResponseStoredForTheURL() async throws {
            let redirects = Locked(false)
            let target = Locked(2)
            let server = redirectingServer(target: target)
            let stub = StubTransport { [clock] request in
                if !redirects.current, request.url?.path == "/v1/items/lamp" {
                    return CacheFixture.item(version: 1, clock: clock, headers: ["Cache-Control": "max-age=10"])
                }
                return try await server.send(request)
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))

            _ = try await client.send(CacheFixture.getItem())  // stored: version 1, fresh for 10 s
            clock.advance(by: 11)
            redirects.withLock { $0 = true }
            let moved = try await client.send(CacheFixture.getItem())
            target.withLock { $0 = 3 }
            let movedAgain = try await client.send(CacheFixture.getItem())

            #expect(moved.version == 2)
            #expect(movedAgain.version == 3, "nothing of the redirect's target was stored under /items/lamp")
        }

        @Test func aNotModifiedFromTheRedirectTargetDoesNotFreshenTheURLsEntry() async throws {
            let redirects = Locked(false)
            let target = Locked(2)
            let server = redirectingServer(target: target, etag: true)
            let stub = StubTransport { [clock] request in
                if !redirects.current, request.url?.path == "/v1/items/lamp" {
                    return CacheFixture.item(
                        version: 1, clock: clock, headers: ["Cache-Control": "max-age=10", "ETag": #""same""#])
                }
                return try await server.send(request)
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))

            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 11)
            redirects.withLock { $0 = true }
            let answer = try await client.response(for: CacheFixture.getItem())

            #expect(answer.value.version == 2, "the target's 304 is not a 304 for /items/lamp: fetched again")
            #expect(answer.context.cacheOutcome == .miss)
        }
    }
}

extension CachingTests {
    /// A clear of a partition (a sign-out) that comes while a response is being written.
    @Suite struct ClearDuringStore {
        /// Storage whose next write waits until the test releases it.
        final class HeldStorage: CacheStorage {
            let base = MemoryCacheStorage()
            let waiting = Locked(false)
            let released: AsyncStream<Void>
            let release: AsyncStream<Void>.Continuation
            init() { (released, release) = AsyncStream.makeStream(of: Void.self) }
            func responses(for key: CacheKey) async -> [CachedResponse] { await base.responses(for: key) }
            func store(_ response: CachedResponse, for key: CacheKey) async {
                if !waiting.current {
                    waiting.set(true)
                    for await _ in released { break }
                }
                await base.store(response, for: key)
            }
            func removeResponses(for key: CacheKey) async { await base.removeResponses(for: key) }
            func removeResponses(forURL url: String) async { await base.removeResponses(forURL: url) }
            func removeAll(partition: String) async { await base.removeAll(partition: partition) }
            func removeAll() async { await base.removeAll() }
            func totalByteCount() async -> Int { await base.totalByteCount() }
        }

        @Test func aResponseWrittenWhileItsPartitionIsClearedDoesNotSurviveTheClear() async throws {
            let clock = ManualDate()
            let storage = HeldStorage()
            let cache = CacheFixture.cache(clock: clock, storage: storage)
            let stub = StubTransport { _ in CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=600"]) }
            let client = CacheFixture.client(stub, cache: cache)

            let first = Task { try await client.send(CacheFixture.getItem()) }
            try await eventually { storage.waiting.current }  // past the generation check, writing
            await cache.removeAll(partition: "user-1")  // the sign-out
            storage.release.finish()
            _ = try await first.value

            let key = CacheKey(partition: "user-1", url: CacheFixture.baseURL.appendingPathComponent("items/lamp"))
            #expect(await storage.responses(for: key).isEmpty)
        }

        /// Polls `condition` (bounded: 10 s).
        private func eventually(_ condition: @Sendable () -> Bool) async throws {
            for _ in 0..<10_000 where !condition() { try await Task.sleep(for: .milliseconds(1)) }
            #expect(condition())
        }
    }
}
