import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

/// The RFC 6265bis rules that keep one origin from planting or replacing another's cookies, and
/// the limits that keep the `Cookie` field bounded.
@Suite("Cookie rules (RFC 6265bis)")
struct CookieRulesTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cookie-rules-\(UUID().uuidString)")
    var storage: PersistentCookieStorage { PersistentCookieStorage(directory: folder, namespace: "p", account: { "a" }) }

    func store(_ storage: PersistentCookieStorage, _ fields: [String], from url: String) async throws {
        try await storage.store(setCookieFields: fields, receivedFrom: try #require(URL(string: url)), account: "a", sentAt: 0)
    }

    func header(_ storage: PersistentCookieStorage, _ url: String) async throws -> String? {
        try await storage.cookieHeader(for: try #require(URL(string: url)), account: "a").field
    }

    @Test(arguments: ["sid=attacker; Path=/", "sid=; Path=/; Max-Age=0", "sid=attacker; Path=/me"])
    func plainHTTPNeitherReplacesNorDeletesASecureCookie(_ field: String) async throws {
        let storage = storage
        defer { try? FileManager.default.removeItem(at: folder) }
        try await store(storage, ["sid=good; Path=/; Secure; HttpOnly"], from: "https://example.test/login")
        try await store(storage, [field], from: "http://example.test/")
        #expect(try await header(storage, "https://example.test/me") == "sid=good")
    }

    @Test func aSecureOriginStillReplacesItsSecureCookie() async throws {
        let storage = storage
        defer { try? FileManager.default.removeItem(at: folder) }
        try await store(storage, ["sid=old; Path=/; Secure"], from: "https://example.test/login")
        try await store(storage, ["sid=new; Path=/; Secure"], from: "https://example.test/login")
        #expect(try await header(storage, "https://example.test/") == "sid=new")
    }

    @Test(arguments: [
        "__Host-sid=x; Domain=example.test; Path=/; Secure",  // a Domain: any sibling could set it
        "__Host-sid=x; Path=/app; Secure",  // not Path=/
        "__Host-sid=x; Path=/",  // not Secure
        "__Secure-id=x; Path=/",  // not Secure
    ])
    func prefixedCookiesThatBreakTheirPrefixAreIgnored(_ field: String) async throws {
        let storage = storage
        defer { try? FileManager.default.removeItem(at: folder) }
        try await store(storage, [field], from: "https://api.example.test/app/x")
        #expect(try await storage.allCookies(account: "a").isEmpty)
    }

    @Test func prefixedCookiesThatKeepTheirPrefixAreStored() async throws {
        let storage = storage
        defer { try? FileManager.default.removeItem(at: folder) }
        try await store(storage, ["__Host-sid=x; Path=/; Secure", "__Secure-id=y; Secure"], from: "https://api.example.test/")
        #expect(try await header(storage, "https://api.example.test/") == "__Host-sid=x; __Secure-id=y")
    }

    @Test(arguments: ["a=b\rX-Injected: 1", "a=b\nc", "a\u{7F}=b", "a=\u{0}"])
    func aControlCharacterMakesTheCookieIgnored(_ field: String) async throws {
        let storage = storage
        defer { try? FileManager.default.removeItem(at: folder) }
        try await store(storage, [field + "; Domain=example.test; Path=/"], from: "https://evil.example.test/")
        #expect(try await header(storage, "https://api.example.test/") == nil)
    }

    @Test func sizeCountAndLifetimeAreBounded() async throws {
        let storage = storage
        defer { try? FileManager.default.removeItem(at: folder) }
        try await store(storage, ["big=\(String(repeating: "x", count: 4096))"], from: "https://example.test/")
        #expect(try await storage.allCookies(account: "a").isEmpty, "over 4096 bytes: ignored")

        let fields = (0..<200).map { "c\($0)=\(String(repeating: "x", count: 100)); Path=/; Max-Age=999999999999" }
        try await store(storage, fields, from: "https://example.test/")
        let cookies = try await storage.allCookies(account: "a")
        #expect(cookies.count == PersistentCookieStorage.maximumPerDomain)
        let latest = Date().addingTimeInterval(TimeInterval(SetCookieParser.maximumLifetime) + 60)
        #expect(cookies.allSatisfy { ($0.expiresDate ?? .distantFuture) < latest })
    }
}

/// `Expires` parsed with RFC 6265 §5.1.1's algorithm. Measured before (an outside tester): a
/// two-digit year (`21 Oct 26`) was read as 26 AD, so the cookie arrived already expired.
@Suite("Cookie dates (RFC 6265 §5.1.1)")
struct CookieDateTests {
    private static func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar.date(
            from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))
    }

    @Test(
        "every shape servers send parses, two-digit years as 1970–2069",
        arguments: [
            ("Wed, 21 Oct 2026 07:28:00 GMT", 2026),
            ("Wed, 21 Oct 26 07:28:00 GMT", 2026),
            ("Wednesday, 21-Oct-26 07:28:00 GMT", 2026),
            ("Wed Oct 21 07:28:00 2026", 2026),
            ("Wed, 21-Oct-2026 07:28:00 GMT", 2026),
            ("21 oct 2026 07:28:00", 2026),
            ("Thu, 21 Oct 99 07:28:00 GMT", 1999),
            ("Sun, 21 Oct 69 07:28:00 GMT", 2069),
            ("Tue, 21 Oct 70 07:28:00 GMT", 1970),
        ])
    func shapes(text: String, year: Int) {
        #expect(CookieDate.parse(text) == Self.utc(year, 10, 21, 7, 28, 0), "\(text)")
    }

    @Test(
        "a date the algorithm refuses is nil",
        arguments: [
            "Mon, 30 Feb 2026 07:28:00 GMT", "Wed, 21 Oct 1600 07:28:00 GMT", "Wed, 21 Oct 2026 24:00:00 GMT",
            "Wed, 32 Oct 2026 07:28:00 GMT", "Wed, 21 Oct 2026", "tomorrow", "",
        ])
    func refused(text: String) {
        #expect(CookieDate.parse(text) == nil, "\(text)")
    }

    @Test("a Set-Cookie with a two-digit year is stored until then, not expired on arrival")
    func twoDigitYearCookieLives() throws {
        let url = try #require(URL(string: "https://example.com/"))
        let now = try #require(Self.utc(2026, 1, 1, 0, 0, 0))
        let cookie = try #require(
            SetCookieParser.cookie(from: "sid=abc; Expires=Wed, 21 Oct 26 07:28:00 GMT", receivedFrom: url, at: now))
        #expect(cookie.expires == Self.utc(2026, 10, 21, 7, 28, 0))
    }
}
