import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CachingTests {
    /// Issue 17, items 1, 2, 3 and 7: `Age` lists, invalid `Expires`, hop-by-hop fields, `Vary`
    /// normalisation (RFC 9111 §5.1, §5.3, §3.1, §4.1).
    @Suite struct HeaderParsingConformance {
        let t0 = Date(timeIntervalSince1970: 1_750_000_000)

        private func freshness(_ headers: HTTPHeaders) -> Freshness {
            let entry = CachedResponse(
                statusCode: 200, headers: headers, body: Data(), url: nil, requestTime: t0, responseTime: t0)
            return Freshness(of: entry, at: t0, heuristicFraction: 0.1, maxHeuristicLifetime: 86_400)
        }

        // MARK: 1. Age (§5.1)

        @Test(arguments: [
            (["7200, 0"], false), (["7200", "0"], false), (["7200;foo=bar"], false), (["7200;foo=111"], false),
            (["0, 7200"], true), (["0", "7200"], true), (["0, 0"], true), (["1800", "1800"], true),
            (["abc"], true), (["-7200"], true), (["7200.0"], true), (["2147483648"], false),
        ])
        func ageListUsesItsFirstMemberAndIgnoresInvalidValues(_ ages: [String], _ fresh: Bool) {
            var headers: HTTPHeaders = ["Date": HTTPDate.string(from: t0), "Cache-Control": "max-age=3600"]
            for age in ages { headers.add("Age", age) }
            #expect(freshness(headers).isFresh == fresh, "Age: \(ages)")
        }

        @Test func responseWithOldAgeListIsNotServedFresh() async throws {
            let clock = ManualDate()
            let stub = StubTransport { [clock] _ in
                CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=3600", "Age": "7200, 0"])
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            let second = try await client.response(for: CacheFixture.getItem())
            #expect(stub.requestCount == 2)
            #expect(second.context.cacheOutcome == .miss)
        }

        // MARK: 2. Expires (§5.3)

        @Test(arguments: [
            "Thu 18 Aug 2050 02:01:18 GMT", "Thu, 18  Aug  2050 02:01:18 GMT", "Thu, 18-Aug-2050 02:01:18 GMT",
            "Thu, 18 Aug 2050 2:01:18 GMT", "Thu, 18 Aug 2050 02.01.18 GMT", "Thu, 18 Aug 50 02:01:18 GMT",
            "Thu, 18 Aug 2050 02:01:18 UTC", "Thu, 18 Aug 2050 02:01:18 AEST", "0", "",
        ])
        func invalidExpiresIsAlreadyExpired(_ expires: String) {
            let value = freshness(["Date": HTTPDate.string(from: t0), "Expires": expires])
            #expect(value.lifetime == 0)
            #expect(!value.isFresh)
        }

        @Test(arguments: [
            "Thu, 18 Aug 2050 02:01:18 GMT", "THU, 18 AUG 2050 02:01:18 gMT", "Thursday, 18-Aug-50 02:01:18 GMT",
            "Thu Aug  8 02:01:18 2050", "Sun, 21 Nov 2286 04:46:39 GMT",
        ])
        func validExpiresInEveryHTTPDateFormIsFresh(_ expires: String) {
            #expect(freshness(["Date": HTTPDate.string(from: t0), "Expires": expires]).isFresh)
        }

        @Test func repeatedExpiresIsInvalid() {
            var headers: HTTPHeaders = ["Date": HTTPDate.string(from: t0)]
            headers.add("Expires", "Thu, 18 Aug 2050 02:01:18 GMT")
            headers.add("Expires", "Thu, 18 Aug 2050 02:01:19 GMT")
            #expect(!freshness(headers).isFresh)
        }

        @Test func retryAfterKeepsTheLenientParser() {
            // A misread Retry-After only changes a wait; the lenient reading stays there.
            #expect(HTTPDate.parse("Thu 18 Aug 2050 02:01:18 GMT") != nil)
            #expect(StrictHTTPDate.parse("Thu 18 Aug 2050 02:01:18 GMT") == nil)
        }

        // MARK: 3. Hop-by-hop fields (§3.1)

        @Test func connectionSpecificFieldsAreNeverStoredOrReplayed() async throws {
            let clock = ManualDate()
            let stub = StubTransport { [clock] _ in
                CacheFixture.item(
                    clock: clock,
                    headers: [
                        "Cache-Control": "max-age=3600", "Connection": "a, B", "a": "1", "b": "2", "c": "3",
                        "Keep-Alive": "timeout=5", "TE": "trailers", "Transfer-Encoding": "chunked", "Upgrade": "h2c",
                        "Proxy-Authenticate": "Basic", "Proxy-Authentication-Info": "x", "Proxy-Connection": "keep-alive",
                    ])
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            let cached = try await client.response(for: CacheFixture.getItem())
            #expect(cached.context.cacheOutcome == .hit)
            #expect(cached.response.headers["c"] == "3")
            for name in [
                "Connection", "a", "b", "Keep-Alive", "TE", "Transfer-Encoding", "Upgrade",
                "Proxy-Authenticate", "Proxy-Authentication-Info", "Proxy-Connection",
            ] {
                #expect(!cached.response.headers.contains(name), "\(name) replayed from the cache")
            }
        }

        @Test func notModifiedDoesNotAddItsConnectionFields() {
            let entry = CachedResponse(
                statusCode: 200, headers: ["ETag": #""v1""#, "a": "old"], body: Data(), url: nil,
                requestTime: t0, responseTime: t0)
            let notModified = HTTPResponse(
                statusCode: 304, headers: ["Connection": "x", "x": "1", "a": "new", "Keep-Alive": "timeout=5"])
            let updated = Validation.freshen(entry, with: notModified, requestTime: t0, responseTime: t0)
            #expect(updated.headers["a"] == "new")
            #expect(!updated.headers.contains("x"))
            #expect(!updated.headers.contains("Connection"))
            #expect(!updated.headers.contains("Keep-Alive"))
        }

        // MARK: 7. Vary normalisation (§4.1)

        @Test(arguments: [
            ("Accept-Language", "en, de", "de, en", true), ("Accept-Language", "en, de", "eN, De", true),
            ("Accept-Language", "en, de", " en ,   de", true), ("Accept-Encoding", "gzip, br", "BR,gzip", true),
            ("Accept-Language", "en;q=0.5, de", "de, en; q=0.5", true), ("Foo", "1,2", " 1, 2 ", true),
            ("Accept-Language", "en", "fr", false), ("Foo", "1, 2", "2, 1", false), ("Foo", "a", "A", false),
        ])
        func varyNormalisesListFields(_ field: String, _ stored: String, _ later: String, _ same: Bool) async throws {
            let clock = ManualDate()
            let stub = StubTransport { [clock] _ in
                CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=3600", "Vary": field])
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem(headers: [field: stored]))
            let second = try await client.response(for: CacheFixture.getItem(headers: [field: later]))
            #expect((second.context.cacheOutcome == .hit) == same)
            #expect(stub.requestCount == (same ? 1 : 2))
        }
    }
}
