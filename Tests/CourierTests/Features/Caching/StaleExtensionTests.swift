import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CachingTests {
    /// RFC 5861: stale-if-error and stale-while-revalidate.
    @Suite struct StaleExtensions {
        let clock = ManualDate()

        @Test(arguments: [500, 502, 503, 504])
        func staleIfErrorServesStoredResponseOnOriginError(_ status: Int) async throws {
            let clock = self.clock
            let count = Locked(0)
            let stub = StubTransport { _ in
                let n = count.withLock {
                    $0 += 1
                    return $0
                }
                return n == 1
                    ? CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=10, stale-if-error=60"])
                    : .json(#"{"error":"down"}"#, status: status)
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 30)
            let response = try await client.response(for: CacheFixture.getItem())
            #expect(response.context.cacheOutcome == .staleServed(.error))
            #expect(response.value.version == 1)
            #expect(stub.requestCount == 2)

            clock.advance(by: 60)
            let error = await CacheFixture.networkError { try await client.send(CacheFixture.getItem()) }
            #expect(error?.statusCode == status, "outside the window the error is reported")
        }

        @Test func staleIfErrorCoversTransportFailures() async throws {
            let clock = self.clock
            let stub = StubTransport(responses: [
                .success(CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=10, stale-if-error=60"])),
                .failure(URLError(.cannotConnectToHost)),
            ])
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 20)
            let response = try await client.response(for: CacheFixture.getItem())
            #expect(response.context.cacheOutcome == .staleServed(.error))
        }

        @Test func staleIfErrorDoesNotServeNonErrorStatuses() async throws {
            let clock = self.clock
            let stub = StubTransport(responses: [
                CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=10, stale-if-error=60"]),
                .json(#"{"error":"gone"}"#, status: 404),
            ])
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 20)
            let error = await CacheFixture.networkError { try await client.send(CacheFixture.getItem()) }
            #expect(error?.statusCode == 404)
        }

        @Test func staleWhileRevalidateServesAtOnceAndRevalidatesOnceInBackground() async throws {
            let clock = self.clock
            let gate = Gate()
            let count = Locked(0)
            let stub = StubTransport { request in
                let n = count.withLock {
                    $0 += 1
                    return $0
                }
                if n == 1 {
                    return CacheFixture.item(
                        clock: clock, headers: ["Cache-Control": "max-age=10, stale-while-revalidate=60", "ETag": #""v1""#])
                }
                #expect(request.value(forHTTPHeaderField: "If-None-Match") == #""v1""#)
                await gate.wait()
                return CacheFixture.item(
                    version: 2, clock: clock,
                    headers: ["Cache-Control": "max-age=10, stale-while-revalidate=60", "ETag": #""v2""#])
            }
            let cache = CacheFixture.cache(clock: clock)
            let client = CacheFixture.client(stub, cache: cache)
            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 20)

            // Five stale reads while the revalidation is held at the gate: all served at once.
            var outcomes: [CacheOutcome?] = []
            var versions: [Int] = []
            for _ in 0..<5 {
                let response = try await client.response(for: CacheFixture.getItem())
                outcomes.append(response.context.cacheOutcome)
                versions.append(response.value.version)
            }
            #expect(outcomes.allSatisfy { $0 == .staleServed(.whileRevalidating) })
            #expect(versions == [1, 1, 1, 1, 1])
            #expect(cache.revalidations.startedCount == 1, "one background revalidation per entry")

            await gate.open()
            await cache.waitForBackgroundRevalidations()
            #expect(stub.requestCount == 2)

            let next = try await client.response(for: CacheFixture.getItem())
            #expect(next.value.version == 2)
            #expect(next.context.cacheOutcome == .hit)
            #expect(stub.requestCount == 2)
        }

        @Test func staleWhileRevalidateWindowExpires() async throws {
            let clock = self.clock
            let count = Locked(0)
            let stub = StubTransport { _ in
                let n = count.withLock {
                    $0 += 1
                    return $0
                }
                return CacheFixture.item(
                    version: n, clock: clock, headers: ["Cache-Control": "max-age=10, stale-while-revalidate=5"])
            }
            let cache = CacheFixture.cache(clock: clock)
            let client = CacheFixture.client(stub, cache: cache)
            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 30)
            let response = try await client.response(for: CacheFixture.getItem())
            #expect(response.context.cacheOutcome == .miss)
            #expect(response.value.version == 2)
            #expect(cache.revalidations.startedCount == 0)
        }

        @Test func clearingAPartitionCancelsItsBackgroundRevalidation() async throws {
            let clock = self.clock
            let gate = Gate()
            let count = Locked(0)
            let stub = StubTransport { _ in
                let n = count.withLock {
                    $0 += 1
                    return $0
                }
                if n > 1 {
                    await gate.wait()
                    try Task.checkCancellation()
                }
                return CacheFixture.item(
                    version: n, clock: clock, headers: ["Cache-Control": "max-age=10, stale-while-revalidate=60"])
            }
            let cache = CacheFixture.cache(clock: clock)
            let client = CacheFixture.client(stub, cache: cache)
            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 20)
            _ = try await client.send(CacheFixture.getItem())
            #expect(cache.backgroundRevalidationCount == 1)

            let before = cache.generation(of: "user-1")
            async let cleared: Void = cache.removeAll(partition: "user-1")
            // Open the gate only once the clear has begun (bounded: the clear starts within a few yields).
            for _ in 0..<10_000 where cache.generation(of: "user-1") == before { await Task.yield() }
            #expect(cache.generation(of: "user-1") != before)
            await gate.open()
            await cleared
            #expect(cache.backgroundRevalidationCount == 0)
            #expect(await cache.storage.totalByteCount() == 0, "nothing written back after the clear")
        }
    }
}

extension CachingTests {
    /// The cache in the documented pipeline position, outside the real retry interceptor.
    @Suite struct PipelinePosition {
        @Test func hitSkipsRetriesAndStaleIfErrorAppliesAfterRetriesAreSpent() async throws {
            let clock = ManualDate()
            let count = Locked(0)
            let stub = StubTransport { _ in
                let n = count.withLock {
                    $0 += 1
                    return $0
                }
                return n == 1
                    ? CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=10, stale-if-error=600"])
                    : .json(#"{"error":"down"}"#, status: 503)
            }
            let cache = CacheFixture.cache(clock: clock)
            let retryClock = TestClock()
            let client = APIClient(environment: CacheFixture.environment) {
                $0.transport = stub
                $0.interceptors = cache.interceptors() + [RetryInterceptor(clock: retryClock, random: { 0.5 })]
            }
            _ = try await client.send(CacheFixture.getItem())
            let hit = try await client.response(for: CacheFixture.getItem())
            #expect(hit.context.cacheOutcome == .hit)
            #expect(hit.context.attempt == 0, "a hit never reaches the retry layer")

            clock.advance(by: 60)
            let stale = try await client.response(for: CacheFixture.getItem())
            let retries = RetryPolicy.default.maxRetries
            #expect(stub.requestCount == 2 + retries, "the revalidation was retried first")
            #expect(stale.context.cacheOutcome == .staleServed(.error))
            #expect(stale.value.version == 1)
        }

        @Test(arguments: [
            NetworkError.transport(URLError(.cannotConnectToHost)), .offline(URLError(.notConnectedToInternet)),
        ])
        func thrownOriginFailuresAreServedStale(_ failure: NetworkError) {
            #expect(CacheTransaction.isOriginFailure(failure))
        }

        @Test func cancellationAndAuthFailuresAreNeverMasked() {
            #expect(!CacheTransaction.isOriginFailure(CancellationError()))
            #expect(!CacheTransaction.isOriginFailure(URLError(.cancelled)))
            #expect(!CacheTransaction.isOriginFailure(NetworkError.sessionExpired))
            #expect(!CacheTransaction.isOriginFailure(NetworkError.cancelled))
        }
    }
}
