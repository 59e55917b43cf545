import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// Value types of the transport layer: headers, responses, HTTP-dates, Retry-After (issue 2, item 5).
    @Suite struct TransportTypes {
        @Test("HTTPHeaders: case-insensitive lookup, repeated fields joined (never Set-Cookie), replace and remove")
        func headers() {
            var headers: HTTPHeaders = ["Content-Type": "text/plain", "Set-Cookie": "a=1", "Vary": "Accept"]
            headers.add("set-cookie", "b=2")
            headers.add("vary", "Accept-Language")
            #expect(headers["content-type"] == "text/plain")
            #expect(headers["VARY"] == "Accept, Accept-Language")
            #expect(headers["SET-COOKIE"] == "a=1")  // RFC 6265 §3: never combined
            #expect(headers["X-Missing"] == nil)
            headers.remove("Vary")
            #expect(headers.values(for: "Set-Cookie") == ["a=1", "b=2"])
            #expect(headers.contains("CONTENT-TYPE"))
            headers.replace("SET-COOKIE", with: "c=3")
            #expect(headers.values(for: "set-cookie") == ["c=3"])
            headers["Content-Type"] = nil
            #expect(!headers.contains("content-type"))
            #expect(headers["missing"] == nil)
            #expect(headers.fields.map(\.name) == ["SET-COOKIE"])
            var repeated = HTTPHeaders()
            repeated.add("Vary", "Accept")
            repeated.add("vary", "Origin")
            #expect(repeated.dictionary == ["Vary": "Accept, Origin"])
        }

        @Test("HTTPHeaders from a dictionary are sorted, so iteration is stable")
        func stableOrder() {
            let headers = HTTPHeaders(["b": "2", "a": "1", "C": "3"])
            #expect(headers.fields.map(\.name) == ["C", "a", "b"])
        }

        @Test("HTTPResponse media type and snippet")
        func response() {
            let response = HTTPResponse.status(200, body: "héllo wörld", contentType: "Application/JSON; charset=utf-8")
            #expect(response.mediaType == "application/json")
            #expect(response.isSuccess)
            #expect(response.bodySnippet(limit: 2) == "h\u{FFFD}", "a cut UTF-8 sequence is replaced, not dropped")
            #expect(HTTPResponse(statusCode: 204).mediaType == nil)
            #expect(!HTTPResponse(statusCode: 300).isSuccess)
        }

        @Test(
            "HTTP-dates in all three RFC 9110 §5.6.7 formats name the same instant",
            arguments: [
                "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
            ])
        func httpDates(text: String) {
            #expect(HTTPDate.parse(text) == Date(timeIntervalSince1970: 784_111_777))
        }

        @Test(
            "invalid HTTP-dates are rejected",
            arguments: [
                "", "yesterday", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 06 Foo 1994 08:49:37 GMT",
                "Sun, 06 Nov 1994 25:00:00 GMT",
                "2026-05-25T22:46:27Z",
            ])
        func invalidHTTPDates(text: String) {
            #expect(HTTPDate.parse(text) == nil)
        }

        @Test("HTTPDate.string writes IMF-fixdate and round-trips")
        func httpDateFormat() {
            let date = Date(timeIntervalSince1970: 784_111_777)
            #expect(HTTPDate.string(from: date) == "Sun, 06 Nov 1994 08:49:37 GMT")
            let now = Date(timeIntervalSince1970: 1_779_749_187)
            #expect(HTTPDate.parse(HTTPDate.string(from: now)) == now)
        }

        @Test("Retry-After: delta-seconds, HTTP-date, and garbage")
        func retryAfter() {
            #expect(RetryAfter(headerValue: "120") == .seconds(120))
            #expect(RetryAfter(headerValue: " 0 ") == .seconds(0))
            #expect(RetryAfter(headerValue: "-1") == nil)
            #expect(RetryAfter(headerValue: "1.5") == nil)
            #expect(RetryAfter(headerValue: "soon") == nil)
            #expect(RetryAfter(headerValue: "99999999999999999999999") == .seconds(Int.max))
            let now = Date(timeIntervalSince1970: 784_111_700)
            let date = RetryAfter(headerValue: "Sun, 06 Nov 1994 08:49:37 GMT")
            #expect(date == .date(Date(timeIntervalSince1970: 784_111_777)))
            #expect(date?.delay(from: now) == .seconds(77))
            #expect(date?.delay(from: Date(timeIntervalSince1970: 784_111_800)) == nil, "a past date gives no hint")
            #expect(RetryAfter.seconds(3).delay() == .seconds(3))
            #expect(RetryAfter(response: HTTPResponse(statusCode: 429, headers: ["retry-after": "5"])) == .seconds(5))
            #expect(RetryAfter(response: HTTPResponse(statusCode: 429)) == nil)
        }
    }
}
