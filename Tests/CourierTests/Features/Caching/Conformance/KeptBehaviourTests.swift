import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CachingTests {
    /// Issue 17, "Keep": behaviour the browsers fail that had no test of its own yet (the others:
    /// `Interceptor.freshResponseIsServedWithoutNetworkAndReportsHit` for `Age`, `StaleExtensions`,
    /// `Policies.requestMaxStale…`/`requestMinFresh…`/`requestDirectivesForceValidation`,
    /// `Interceptor.varyKeepsOneEntryPerLanguage`, `Interceptor.successfulUnsafeRequestInvalidates…`).
    @Suite struct KeptBehaviour {
        let clock = ManualDate()

        private func origin(headTag: String) -> StubTransport {
            StubTransport { [clock] request in
                if request.httpMethod == "HEAD" {
                    return HTTPResponse(
                        statusCode: 200,
                        headers: [
                            "ETag": headTag, "Cache-Control": "max-age=600", "X-Version": "2",
                            "Date": HTTPDate.string(from: clock.now),
                        ])
                }
                return CacheFixture.item(
                    clock: clock, headers: ["ETag": #""v1""#, "Cache-Control": "max-age=10", "X-Version": "1"])
            }
        }

        @Test func headRefreshesTheStoredGetWhenItsValidatorAgrees() async throws {
            let stub = origin(headTag: #""v1""#)
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 20)
            let head = try await client.response(for: Request<HTTPResponse>.raw(.head, "/items/lamp"))
            let get = try await client.response(for: CacheFixture.getItem())
            #expect(head.context.cacheOutcome == .miss)
            #expect(get.context.cacheOutcome == .hit, "the HEAD's max-age=600 freshened the stored GET (§4.3.5)")
            #expect(get.response.headers["X-Version"] == "2")
            #expect(stub.requests.map(\.httpMethod) == ["GET", "HEAD"])
        }

        @Test func headWithAnotherValidatorInvalidatesTheStoredGet() async throws {
            let stub = origin(headTag: #""v2""#)
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 20)
            _ = try await client.response(for: Request<HTTPResponse>.raw(.head, "/items/lamp"))
            let get = try await client.response(for: CacheFixture.getItem())
            #expect(get.context.cacheOutcome == .miss)
            #expect(stub.requests.last?.value(forHTTPHeaderField: "If-None-Match") == nil, "nothing stored was left to validate")
        }

        @Test func sameOriginContentLocationIsInvalidated() async throws {
            let stub = StubTransport { [clock] request in
                if request.httpMethod == "POST" {
                    return .json("{}", status: 200, headers: ["Content-Location": "/v1/items/lamp"])
                }
                return CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=600"])
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            _ = try await client.response(for: Request<Void>(method: .post, path: "/items"))
            let again = try await client.response(for: CacheFixture.getItem())
            #expect(again.context.cacheOutcome == .miss)
            #expect(stub.requestCount == 3)
        }
    }
}
