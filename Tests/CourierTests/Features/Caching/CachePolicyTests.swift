import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CachingTests {
    @Suite struct Policies {
        let clock = ManualDate()

        private func primed(
            _ headers: HTTPHeaders = ["Cache-Control": "max-age=10"]
        ) async throws -> (StubTransport, APIClient, HTTPCache) {
            let clock = self.clock
            let count = Locked(0)
            let stub = StubTransport { _ in
                let n = count.withLock {
                    $0 += 1
                    return $0
                }
                return CacheFixture.item(version: n, clock: clock, headers: headers)
            }
            let cache = CacheFixture.cache(clock: clock)
            let client = CacheFixture.client(stub, cache: cache)
            _ = try await client.send(CacheFixture.getItem())
            return (stub, client, cache)
        }

        @Test func reloadIgnoringCacheGoesToNetworkAndStores() async throws {
            let (stub, client, _) = try await primed()
            let reloaded = try await client.response(for: CacheFixture.getItem(.standard.with(\.cache, .reloadIgnoringCacheData)))
            let next = try await client.response(for: CacheFixture.getItem())
            #expect(stub.requestCount == 2)
            #expect(reloaded.context.cacheOutcome == .miss)
            #expect(reloaded.value.version == 2)
            #expect(next.value.version == 2 && next.context.cacheOutcome == .hit)
        }

        /// `Age` up to Int.max parsed as is once overflowed into the served response's `Age`
        /// (Int of 2^63 as a Double traps): a stored entry crashed the app each time it was served.
        @Test("an Age near Int.max is 2147483648 (RFC 9111 §1.2.2), served from storage and after a 304")
        func hugeAgeIsClampedNotATrap() async throws {
            let huge = "9223372036854775807"
            let (stub, client, _) = try await primed(["Cache-Control": "max-age=60", "Age": huge, "ETag": #""a""#])
            let served = try await client.response(
                for: CacheFixture.getItem(.standard.with(\.cache, .returnCacheDataElseLoad)))
            #expect(served.value.version == 1 && served.context.cacheOutcome == .hit)
            #expect(served.response.headers["Age"] == "2147483648")
            #expect(stub.requestCount == 1)

            // A 304 carrying the huge Age refreshes the stored entry, which is served at once.
            let clock = self.clock
            let revalidating = StubTransport { _ in
                HTTPResponse(
                    statusCode: 304,
                    headers: ["ETag": #""a""#, "Age": huge, "Date": HTTPDate.string(from: clock.now)], body: Data())
            }
            let cache = CacheFixture.cache(clock: clock)
            let first = StubTransport(responses: [
                CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=0", "ETag": #""a""#])
            ])
            _ = try await CacheFixture.client(first, cache: cache).send(CacheFixture.getItem())
            let revalidated = try await CacheFixture.client(revalidating, cache: cache).response(for: CacheFixture.getItem())
            #expect(revalidated.value == CacheFixture.Item(name: "lamp", version: 1))
            #expect(revalidated.response.headers["Age"] == "2147483648")
            #expect(revalidating.requestCount == 1)
        }

        @Test func returnCacheElseLoadServesStaleEntries() async throws {
            let (stub, client, _) = try await primed()
            clock.advance(by: 3600)
            let response = try await client.response(for: CacheFixture.getItem(.standard.with(\.cache, .returnCacheDataElseLoad)))
            #expect(stub.requestCount == 1)
            #expect(response.context.cacheOutcome == .hit)
            #expect(response.value.version == 1)
        }

        @Test func onlyIfCachedServesStoredAndFailsClearlyOnMiss() async throws {
            let (stub, client, _) = try await primed()
            clock.advance(by: 3600)
            let policy = EndpointPolicy.standard.with(\.cache, .onlyIfCached)
            let stored = try await client.response(for: CacheFixture.getItem(policy))
            let missing = await CacheFixture.networkError {
                try await client.send(Request<CacheFixture.Item>.get("/items/other").policy(policy))
            }
            #expect(stored.value.version == 1)
            #expect(stub.requestCount == 1, "only-if-cached never touches the network")
            guard case .notCached? = missing else {
                Issue.record("expected .notCached, got \(String(describing: missing))")
                return
            }
        }

        @Test func bypassCachePolicyNeitherReadsNorWrites() async throws {
            let (stub, client, _) = try await primed()
            let response = try await client.response(for: CacheFixture.getItem(.standard.with(\.cache, .bypassCache)))
            #expect(stub.requestCount == 2)
            #expect(response.context.cacheOutcome == .bypassed)
            let next = try await client.response(for: CacheFixture.getItem())
            #expect(next.value.version == 1, "the bypassing call's response was not stored")
        }

        @Test func noStorePolicyReadsTheCacheButNeverStores() async throws {
            let (stub, client, cache) = try await primed()
            let served = try await client.response(for: CacheFixture.getItem(.standard.with(\.cache, .noStore)))
            #expect(stub.requestCount == 1, "RFC 9111 §5.2.1.5: no-store may be answered from a stored response")
            #expect(served.context.cacheOutcome == .hit)
            await cache.removeAll()
            let fetched = try await client.response(for: CacheFixture.getItem(.standard.with(\.cache, .noStore)))
            let again = try await client.response(for: CacheFixture.getItem(.standard.with(\.cache, .noStore)))
            #expect(fetched.context.cacheOutcome == .miss && again.context.cacheOutcome == .miss)
            #expect(stub.requestCount == 3, "a no-store response is never stored")
        }

        @Test(arguments: ["no-cache", "max-age=0"])
        func requestDirectivesForceValidation(_ directive: String) async throws {
            let (stub, client, _) = try await primed()
            clock.advance(by: 1)  // max-age=0 accepts an age of exactly 0 (RFC 9111 §5.2.1.1)
            let response = try await client.response(for: CacheFixture.getItem(headers: ["Cache-Control": directive]))
            #expect(stub.requestCount == 2)
            #expect(response.context.cacheOutcome == .miss)
        }

        @Test func requestMaxStaleAcceptsStaleEntry() async throws {
            let (stub, client, _) = try await primed()
            clock.advance(by: 30)
            let response = try await client.response(for: CacheFixture.getItem(headers: ["Cache-Control": "max-stale=60"]))
            #expect(stub.requestCount == 1)
            #expect(response.context.cacheOutcome == .hit)
        }

        @Test func requestMinFreshRejectsAlmostStaleEntry() async throws {
            let (stub, client, _) = try await primed()
            clock.advance(by: 5)
            _ = try await client.send(CacheFixture.getItem(headers: ["Cache-Control": "min-fresh=8"]))
            #expect(stub.requestCount == 2)
        }

        @Test func authorizedResponsesNeedExplicitPermissionOrOptIn() async throws {
            let clock = self.clock
            let stub = StubTransport { request in
                let cc = request.url?.path.hasSuffix("private") == true ? "private, max-age=60" : "max-age=60"
                return CacheFixture.item(clock: clock, headers: ["Cache-Control": cc])
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            // `.optional` so no AuthInterceptor is needed: the cache treats any auth policy as authorized.
            let authorized = EndpointPolicy.authorizedRead.with(\.auth, .optional)
            func get(_ path: String, _ policy: EndpointPolicy) async throws -> CacheOutcome? {
                try await client.response(for: Request<CacheFixture.Item>.get(path).policy(policy)).context.cacheOutcome
            }
            _ = try await get("/plain", authorized)
            let plain = try await get("/plain", authorized)
            _ = try await get("/private", authorized)
            let explicit = try await get("/private", authorized)
            let optIn = authorized.with(\.cachesAuthorizedResponses, true)
            _ = try await get("/opted", optIn)
            let opted = try await get("/opted", optIn)

            #expect(plain == .miss, "RFC 9111 §3.5: not stored without explicit permission")
            #expect(explicit == .hit)
            #expect(opted == .hit)
            #expect(stub.requestCount == 4)
        }

        @Test func partitionsAreSeparateAndClearedIndependently() async throws {
            let clock = self.clock
            let partition = Locked("alice")
            let stub = StubTransport { _ in CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=600"]) }
            let cache = CacheFixture.cache(clock: clock, partition: partition)
            let client = CacheFixture.client(stub, cache: cache)

            _ = try await client.send(CacheFixture.getItem())
            partition.set("bob")
            let bobFirst = try await client.response(for: CacheFixture.getItem())
            await cache.removeAll(partition: "alice")
            let bobAgain = try await client.response(for: CacheFixture.getItem())
            partition.set("alice")
            let aliceAgain = try await client.response(for: CacheFixture.getItem())

            #expect(bobFirst.context.cacheOutcome == .miss, "bob never sees alice's entry")
            #expect(bobAgain.context.cacheOutcome == .hit, "clearing alice keeps bob's entries")
            #expect(aliceAgain.context.cacheOutcome == .miss, "alice's entries are gone")
            #expect(stub.requestCount == 3)
        }

        @Test func headIsAnsweredFromStoredGet() async throws {
            let (stub, client, _) = try await primed()
            let head = try await client.response(for: Request<HTTPResponse>.raw(.head, "/items/lamp"))
            #expect(stub.requestCount == 1)
            #expect(head.context.cacheOutcome == .hit)
            #expect(head.response.data.isEmpty)
            #expect(head.statusCode == 200)
        }

        @Test func heuristicFreshnessFromLastModified() async throws {
            // Last-Modified 100 000 s before Date: 10 % gives 10 000 s of heuristic freshness.
            let lastModified = HTTPDate.string(from: clock.now.addingTimeInterval(-100_000))
            let (stub, client, _) = try await primed(["Last-Modified": lastModified])
            clock.advance(by: 9_000)
            let fresh = try await client.response(for: CacheFixture.getItem())
            clock.advance(by: 2_000)
            _ = try await client.send(CacheFixture.getItem())
            #expect(fresh.context.cacheOutcome == .hit)
            #expect(stub.requestCount == 2)
        }
    }
}

extension CachingTests {
    @Suite struct SessionReset {
        @Test func clientResetSessionClearsTheCurrentAccountsPartition() async throws {
            let clock = ManualDate()
            let partition = Locked("alice")
            let stub = StubTransport { _ in CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=600"]) }
            let cache = CacheFixture.cache(clock: clock, partition: partition)
            let client = CacheFixture.client(stub, cache: cache)
            _ = try await client.send(CacheFixture.getItem())
            partition.set("bob")
            _ = try await client.send(CacheFixture.getItem())
            partition.set("alice")

            try await client.resetSession()

            #expect(try await client.response(for: CacheFixture.getItem()).context.cacheOutcome == .miss)
            partition.set("bob")
            #expect(try await client.response(for: CacheFixture.getItem()).context.cacheOutcome == .hit)
        }
    }
}
