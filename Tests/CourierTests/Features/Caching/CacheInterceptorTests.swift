import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CachingTests {
    @Suite struct Interceptor {
        let clock = ManualDate()

        @Test func freshResponseIsServedWithoutNetworkAndReportsHit() async throws {
            let stub = StubTransport { [clock] _ in CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=60"]) }
            let cache = CacheFixture.cache(clock: clock)
            let client = CacheFixture.client(stub, cache: cache)

            let first = try await client.response(for: CacheFixture.getItem())
            clock.advance(by: 30)
            let second = try await client.response(for: CacheFixture.getItem())

            #expect(stub.requestCount == 1)
            #expect(first.context.cacheOutcome == .miss)
            #expect(second.context.cacheOutcome == .hit)
            #expect(second.value == CacheFixture.Item(name: "lamp", version: 1))
            #expect(second.response.headers["Age"] == "30")
        }

        @Test func staleEntryIsRevalidatedWithItsETagAnd304ServesStoredBody() async throws {
            let clock = self.clock
            let stub = StubTransport { request in
                if request.value(forHTTPHeaderField: "If-None-Match") != nil {
                    return HTTPResponse(
                        statusCode: 304,
                        headers: ["ETag": #""v1""#, "Cache-Control": "max-age=10", "Date": HTTPDate.string(from: clock.now)])
                }
                return CacheFixture.item(clock: clock, headers: ["ETag": #""v1""#, "Cache-Control": "max-age=10"])
            }
            let cache = CacheFixture.cache(clock: clock)
            let client = CacheFixture.client(stub, cache: cache)

            _ = try await client.response(for: CacheFixture.getItem())
            clock.advance(by: 11)
            let revalidated = try await client.response(for: CacheFixture.getItem())
            clock.advance(by: 5)
            let afterwards = try await client.response(for: CacheFixture.getItem())

            #expect(stub.requestCount == 2)
            #expect(stub.requests.last?.value(forHTTPHeaderField: "If-None-Match") == #""v1""#)
            #expect(revalidated.context.cacheOutcome == .revalidated)
            #expect(revalidated.statusCode == 200)
            #expect(revalidated.value == CacheFixture.Item(name: "lamp", version: 1))
            #expect(afterwards.context.cacheOutcome == .hit, "the 304 refreshed the entry's freshness")
        }

        @Test(arguments: [#""v1""#, #"W/"v1""#])
        func conditionalRequestSendsTheStoredTagVerbatim(_ tag: String) async throws {
            let clock = self.clock
            let stub = StubTransport { request in
                if request.value(forHTTPHeaderField: "If-None-Match") != nil {
                    return HTTPResponse(statusCode: 304, headers: ["ETag": tag])
                }
                return CacheFixture.item(
                    clock: clock,
                    headers: ["ETag": tag, "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT", "Cache-Control": "no-cache"])
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            let second = try await client.response(for: CacheFixture.getItem())

            let sent = try #require(stub.requests.last)
            #expect(sent.value(forHTTPHeaderField: "If-None-Match") == tag)
            #expect(sent.value(forHTTPHeaderField: "If-Modified-Since") == "Sun, 06 Nov 1994 08:49:37 GMT")
            #expect(second.context.cacheOutcome == .revalidated, "no-cache: every reuse is validated")
        }

        @Test func notModifiedUpdatesStoredHeaders() async throws {
            let clock = self.clock
            let stub = StubTransport { request in
                if request.value(forHTTPHeaderField: "If-None-Match") != nil {
                    return HTTPResponse(
                        statusCode: 304,
                        headers: [
                            "ETag": #""v1""#, "Cache-Control": "max-age=100", "X-Extra": "new", "Content-Length": "0",
                        ])
                }
                return CacheFixture.item(
                    clock: clock, headers: ["ETag": #""v1""#, "Cache-Control": "max-age=1", "X-Extra": "old"])
            }
            let cache = CacheFixture.cache(clock: clock)
            let client = CacheFixture.client(stub, cache: cache)
            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 5)
            let revalidated = try await client.response(for: CacheFixture.getItem())
            let key = CacheKey(partition: "user-1", url: try #require(stub.requests.first?.url))
            let stored = try #require(await cache.storage.responses(for: key).first)

            #expect(revalidated.response.headers["X-Extra"] == "new")
            #expect(stored.headers["Cache-Control"] == "max-age=100")
            #expect(stored.headers["Content-Length"] == nil, "a 304 never changes the stored body's framing")
            #expect(stored.body == revalidated.response.data)
        }

        @Test func notModifiedWithoutMatchingEntryRefetchesOnceUnconditionally() async throws {
            let clock = self.clock
            let count = Locked(0)
            let stub = StubTransport { request in
                let n = count.withLock {
                    $0 += 1
                    return $0
                }
                if n == 1 { return CacheFixture.item(clock: clock, headers: ["ETag": #""v1""#, "Cache-Control": "max-age=1"]) }
                if n == 2 { return HTTPResponse(statusCode: 304, headers: ["ETag": #""v9""#]) }
                #expect(request.value(forHTTPHeaderField: "If-None-Match") == nil)
                return CacheFixture.item(version: 3, clock: clock, headers: ["ETag": #""v3""#, "Cache-Control": "max-age=60"])
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 5)
            let response = try await client.response(for: CacheFixture.getItem())

            #expect(stub.requestCount == 3)
            #expect(response.value.version == 3)
            #expect(response.context.cacheOutcome == .miss)
        }

        @Test func notModifiedToAnUnconditionalRequestIsNeverDecodedAsEmpty() async throws {
            let stub = StubTransport { _ in HTTPResponse(statusCode: 304) }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            let error = await CacheFixture.networkError { try await client.send(CacheFixture.getItem()) }
            #expect(stub.requestCount == 2, "one unconditional re-fetch, then the 304 is reported")
            #expect(error?.statusCode == 304)
        }

        @Test(arguments: ["no-store", "no-store, max-age=60", "private, no-store"])
        func noStoreIsNeverStored(_ cacheControl: String) async throws {
            let clock = self.clock
            let stub = StubTransport { _ in CacheFixture.item(clock: clock, headers: ["Cache-Control": cacheControl]) }
            let cache = CacheFixture.cache(clock: clock)
            let client = CacheFixture.client(stub, cache: cache)
            _ = try await client.send(CacheFixture.getItem())
            let second = try await client.response(for: CacheFixture.getItem())

            #expect(stub.requestCount == 2)
            #expect(second.context.cacheOutcome == .miss)
            #expect(await cache.storage.totalByteCount() == 0)
        }

        @Test func varyKeepsOneEntryPerLanguage() async throws {
            let clock = self.clock
            let stub = StubTransport { request in
                let language = request.value(forHTTPHeaderField: "Accept-Language") ?? "none"
                return CacheFixture.item(
                    language, clock: clock, headers: ["Cache-Control": "max-age=60", "Vary": "Accept-Language"])
            }
            let cache = CacheFixture.cache(clock: clock)
            let client = CacheFixture.client(stub, cache: cache)
            let german = CacheFixture.getItem(headers: ["Accept-Language": "de"])
            let french = CacheFixture.getItem(headers: ["Accept-Language": "fr"])

            let de1 = try await client.send(german)
            let fr1 = try await client.send(french)
            let de2 = try await client.response(for: german)
            let fr2 = try await client.response(for: french)

            #expect(stub.requestCount == 2)
            #expect(de1.name == "de" && fr1.name == "fr")
            #expect(de2.value.name == "de" && fr2.value.name == "fr")
            #expect(de2.context.cacheOutcome == .hit && fr2.context.cacheOutcome == .hit)
            let key = CacheKey(partition: "user-1", url: try #require(stub.requests.first?.url))
            #expect(await cache.storage.responses(for: key).count == 2)
        }

        @Test func varyStarIsNeverServed() async throws {
            let clock = self.clock
            let stub = StubTransport { _ in
                CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=60", "Vary": "*"])
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            _ = try await client.send(CacheFixture.getItem())
            #expect(stub.requestCount == 2)
        }

        @Test(arguments: [HTTPMethod.post, .put, .patch, .delete])
        func successfulUnsafeRequestInvalidatesTargetAndLocation(_ method: HTTPMethod) async throws {
            let clock = self.clock
            let stub = StubTransport { request in
                if request.httpMethod != "GET" {
                    return .json(
                        "{}", status: 201,
                        headers: [
                            "Location": "/v1/items/lamp", "Content-Location": "https://elsewhere.test/v1/items",
                        ])
                }
                return .json(
                    #"{"name":"x","version":1}"#,
                    headers: ["Cache-Control": "max-age=600", "Date": HTTPDate.string(from: clock.now)])
            }
            let cache = CacheFixture.cache(clock: clock)
            let client = CacheFixture.client(stub, cache: cache)
            _ = try await client.send(Request<CacheFixture.Item>.get("/items"))
            _ = try await client.send(Request<CacheFixture.Item>.get("/items/lamp"))
            let write = try await client.response(for: Request<Void>(method: method, path: "/items"))
            let collection = try await client.response(for: Request<CacheFixture.Item>.get("/items"))
            let element = try await client.response(for: Request<CacheFixture.Item>.get("/items/lamp"))

            #expect(write.context.cacheOutcome == .bypassed)
            #expect(collection.context.cacheOutcome == .miss, "target URI invalidated")
            #expect(element.context.cacheOutcome == .miss, "same-origin Location invalidated")
            #expect(stub.requestCount == 5)
        }

        @Test func failedUnsafeRequestInvalidatesNothing() async throws {
            let clock = self.clock
            let stub = StubTransport { request in
                request.httpMethod == "POST"
                    ? .json(#"{"error":"nope"}"#, status: 500)
                    : CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=60"])
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            _ = await CacheFixture.networkError { try await client.send(Request<Void>(method: .post, path: "/items/lamp")) }
            let again = try await client.response(for: CacheFixture.getItem())
            #expect(again.context.cacheOutcome == .hit)
        }

        @Test func mustRevalidateForbidsStaleServing() async throws {
            let clock = self.clock
            let count = Locked(0)
            let stub = StubTransport { _ in
                let n = count.withLock {
                    $0 += 1
                    return $0
                }
                if n == 1 {
                    return CacheFixture.item(
                        clock: clock,
                        headers: ["Cache-Control": "max-age=1, must-revalidate, stale-if-error=600, stale-while-revalidate=600"])
                }
                return .json(#"{"error":"down"}"#, status: 503)
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 10)
            let error = await CacheFixture.networkError { try await client.send(CacheFixture.getItem()) }
            #expect(error?.statusCode == 503)
            #expect(stub.requestCount == 2)
        }
    }
}

extension CacheFixture {
    /// Runs `operation` and returns the `NetworkError` it threw; records an issue otherwise.
    static func networkError<T>(
        sourceLocation: SourceLocation = #_sourceLocation, _ operation: () async throws -> T
    ) async -> NetworkError? {
        do {
            let value = try await operation()
            Issue.record("expected a NetworkError, got \(value)", sourceLocation: sourceLocation)
            return nil
        } catch let error as NetworkError {
            return error
        } catch {
            Issue.record("expected a NetworkError, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }
}
