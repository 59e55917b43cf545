import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import CourierCurl

@Suite("libcurl's cookie lines become HTTPCookies")
struct CurlCookieLineTests {
    @Test("domain, subdomain flag, path, secure, expiry, HttpOnly and a value with a tab are read; other lines are not")
    func lines() throws {
        let cookie = try #require(
            CurlCookieShare.cookie(fromNetscapeLine: "#HttpOnly_example.com\tTRUE\t/api\tTRUE\t2000000000\tsid\ta\tb"))
        #expect(cookie.domain == ".example.com" && cookie.path == "/api" && cookie.isSecure && cookie.isHTTPOnly)
        #expect(cookie.name == "sid" && cookie.value == "a\tb")
        #expect(cookie.expiresDate == Date(timeIntervalSince1970: 2_000_000_000))
        let session = try #require(CurlCookieShare.cookie(fromNetscapeLine: "127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tx"))
        #expect(session.domain == "127.0.0.1" && !session.isSecure && session.expiresDate == nil)
        #expect(CurlCookieShare.cookie(fromNetscapeLine: "# Netscape HTTP Cookie File") == nil)
        #expect(CurlCookieShare.cookie(fromNetscapeLine: "a\tb\tc") == nil)
    }
}
