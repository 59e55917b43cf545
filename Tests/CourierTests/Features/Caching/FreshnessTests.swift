import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier

extension CachingTests {
    /// RFC 9111 §4.2 arithmetic and §5.2 parsing.
    @Suite struct FreshnessRules {
        let t0 = Date(timeIntervalSince1970: 1_750_000_000)

        private func entry(
            _ headers: HTTPHeaders, status: Int = 200, requestTime: Date? = nil, responseTime: Date? = nil
        ) -> CachedResponse {
            CachedResponse(
                statusCode: status, headers: headers, body: Data(), url: nil,
                requestTime: requestTime ?? t0, responseTime: responseTime ?? t0)
        }

        private func freshness(_ entry: CachedResponse, at now: Date) -> Freshness {
            Freshness(of: entry, at: now, heuristicFraction: 0.1, maxHeuristicLifetime: 86_400)
        }

        @Test func parsesDirectivesCaseInsensitivelyWithQuotes() {
            let control = CacheControl(#"Max-Age=60, no-cache="Set-Cookie, X-A", private, stale-if-error="30""#)
            #expect(control.maxAge == 60)
            #expect(control.noCache)
            #expect(control.isPrivate)
            #expect(control.staleIfError == 30)
            #expect(!control.noStore)
        }

        @Test(arguments: [
            ("max-age=abc", true), ("max-age=-1", true), ("max-age=", true), ("max-age=5", false),
            // RFC 9111 §5.2: no whitespace around "=" (the HTTP caching tests' cc-resp-max-age-space-*).
            ("max-age =5", true), ("max-age= 5", true), ("max-age = 5", true), ("max-age\t=5", true),
            (" max-age=5 , public", false),
        ])
        func invalidDeltaSecondsAreRecognised(_ text: String, _ invalid: Bool) {
            #expect(CacheControl(text).hasInvalidSeconds("max-age") == invalid)
        }

        @Test func maxAgeTakesPrecedenceOverExpires() {
            let headers: HTTPHeaders = [
                "Date": HTTPDate.string(from: t0), "Cache-Control": "max-age=60",
                "Expires": HTTPDate.string(from: t0.addingTimeInterval(3600)),
            ]
            #expect(freshness(entry(headers), at: t0).lifetime == 60)
        }

        @Test func expiresIsRelativeToDate() {
            // The server's clock runs 1000 s ahead; Expires − Date is what counts.
            let serverNow = t0.addingTimeInterval(1000)
            let headers: HTTPHeaders = [
                "Date": HTTPDate.string(from: serverNow), "Expires": HTTPDate.string(from: serverNow.addingTimeInterval(120)),
            ]
            let value = freshness(entry(headers), at: t0.addingTimeInterval(100))
            #expect(value.lifetime == 120)
            #expect(value.age == 100)
            #expect(value.isFresh)
        }

        @Test(arguments: ["0", "-1", "not a date"])
        func invalidExpiresMeansStale(_ expires: String) {
            let value = freshness(entry(["Expires": expires]), at: t0)
            #expect(value.lifetime == 0)
            #expect(!value.isFresh)
        }

        @Test func currentAgeFollowsSection423() {
            // Date 5 s before the response arrived, Age 10 from an upstream cache, 2 s response delay,
            // 30 s resident: corrected_initial_age = max(5, 10 + 2) = 12; current_age = 42.
            let requestTime = t0.addingTimeInterval(-2)
            let headers: HTTPHeaders = [
                "Date": HTTPDate.string(from: t0.addingTimeInterval(-5)), "Age": "10", "Cache-Control": "max-age=40",
            ]
            let value = freshness(entry(headers, requestTime: requestTime, responseTime: t0), at: t0.addingTimeInterval(30))
            #expect(value.age == 42)
            #expect(!value.isFresh)
            #expect(value.staleness == 2)
        }

        @Test func apparentAgeWinsOverSmallAge() {
            let headers: HTTPHeaders = ["Date": HTTPDate.string(from: t0.addingTimeInterval(-20)), "Age": "1"]
            #expect(freshness(entry(headers), at: t0).age == 20)
        }

        @Test func heuristicIsTenPercentOfLastModifiedAgeCapped() {
            let recent: HTTPHeaders = [
                "Date": HTTPDate.string(from: t0), "Last-Modified": HTTPDate.string(from: t0.addingTimeInterval(-1000)),
            ]
            let old: HTTPHeaders = [
                "Date": HTTPDate.string(from: t0), "Last-Modified": HTTPDate.string(from: t0.addingTimeInterval(-10_000_000)),
            ]
            let recentValue = freshness(entry(recent), at: t0)
            #expect(recentValue.lifetime == 100)
            #expect(recentValue.isHeuristic)
            #expect(freshness(entry(old), at: t0).lifetime == 86_400)
        }

        @Test(arguments: [(200, true), (404, true), (301, true), (201, false), (302, false), (500, false)])
        func heuristicOnlyForHeuristicallyCacheableStatuses(_ status: Int, _ allowed: Bool) {
            let headers: HTTPHeaders = [
                "Date": HTTPDate.string(from: t0), "Last-Modified": HTTPDate.string(from: t0.addingTimeInterval(-1000)),
            ]
            #expect((freshness(entry(headers, status: status), at: t0).lifetime > 0) == allowed)
        }

        @Test func sharedMaxAgeIsIgnoredByAPrivateCache() {
            let headers: HTTPHeaders = ["Date": HTTPDate.string(from: t0), "Cache-Control": "s-maxage=600"]
            #expect(freshness(entry(headers), at: t0).lifetime == 0)
        }

        @Test func varyMatchingNormalisesWhitespaceAndAbsence() throws {
            var request = URLRequest(url: try #require(URL(string: "https://a.test/x")))
            request.setValue("en,  de", forHTTPHeaderField: "Accept-Language")
            let stored = CachedResponse(
                statusCode: 200, headers: ["Vary": "accept-language, X-Absent"], body: Data(), url: nil,
                requestTime: t0, responseTime: t0,
                varyingRequestHeaders: Vary.requestValues(["accept-language", "x-absent"], of: request))
            #expect(Vary.matches(stored, request))
            request.setValue("x", forHTTPHeaderField: "X-Absent")
            #expect(!Vary.matches(stored, request))
        }

        @Test(arguments: [
            "Sun, 06 Nov 1994 08:49:37 GMT", "Thu, 29 Feb 2024 23:59:59 GMT", "Sat, 01 Jan 2000 00:00:00 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
        ])
        func strictDateParsingAgreesWithHTTPDateOnValidDates(_ text: String) {
            #expect(HeaderScanning.date(text) != nil)
            #expect(HeaderScanning.date(text) == HTTPDate.parse(text))
        }

        @Test(arguments: ["Mon, 31 Feb 2024 00:00:00 GMT", "garbage", ""])
        func strictDateParsingRejectsImpossibleDates(_ text: String) {
            #expect(HeaderScanning.date(text) == nil)
        }

        @Test func headerLookupIgnoresASCIICase() {
            let headers: HTTPHeaders = ["CACHE-control": "max-age=1", "Cache-Control": "public", "ETag": #""x""#]
            #expect(headers.cacheValues("cache-control") == ["max-age=1", "public"])
            #expect(headers.cacheValue("etag") == #""x""#)
            #expect(headers.cacheValue("age") == nil)
            #expect(headers.cacheReplacing("etag", name: "ETag", with: nil).cacheValue("etag") == nil)
        }

        @Test(arguments: [
            "https://api.example.test/v1/items?b=2&a=1", "http://127.0.0.1:8080/ns/x/cache/resource/r1?cc=max-age%3D60",
            "https://a.test/", "http://a.test:8443/x",
        ])
        func alreadyNormalURLsAreKeptVerbatim(_ text: String) throws {
            #expect(CacheKey.normalize(try #require(URL(string: text))) == text)
        }

        @Test(arguments: [
            ("HTTPS://API.Example.test:443/a?b=1#frag", "https://api.example.test/a?b=1"),
            ("http://a.test:80", "http://a.test/"),
            ("http://a.test:8080/x", "http://a.test:8080/x"),
        ])
        func keysNormaliseURLs(_ input: String, _ expected: String) throws {
            #expect(CacheKey.normalize(try #require(URL(string: input))) == expected)
        }
    }
}
