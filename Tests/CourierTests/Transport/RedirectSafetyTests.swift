import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier

@Suite("Redirect safety")
struct RedirectSafetyTests {
    @Test(
        "origin comparison fills default ports and ignores case",
        arguments: [
            ("https://api.example.com/a", "https://API.example.com:443/b", true),
            ("http://api.example.com/a", "http://api.example.com:80/b", true),
            ("https://api.example.com/a", "http://api.example.com/a", false),
            ("https://api.example.com/a", "https://cdn.example.com/a", false),
            ("https://api.example.com/a", "https://api.example.com:8443/a", false),
        ])
    func origins(_ a: String, _ b: String, _ same: Bool) throws {
        #expect(RedirectSafety.isSameOrigin(try #require(URL(string: a)), try #require(URL(string: b))) == same)
    }

    @Test("credential headers are removed only when the origin changes")
    func sanitize() throws {
        var request = URLRequest(url: try #require(URL(string: "https://cdn.example.com/file")))
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        request.setValue("Basic p", forHTTPHeaderField: "Proxy-Authorization")
        request.setValue("sid=1", forHTTPHeaderField: "Cookie")
        request.setValue("1", forHTTPHeaderField: "X-Other")
        let crossed = RedirectSafety.sanitize(request, from: URL(string: "https://api.example.com/x"))
        #expect(crossed.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(crossed.value(forHTTPHeaderField: "Proxy-Authorization") == nil)
        #expect(crossed.value(forHTTPHeaderField: "Cookie") == nil)
        #expect(crossed.value(forHTTPHeaderField: "X-Other") == "1")
        let same = RedirectSafety.sanitize(request, from: URL(string: "https://cdn.example.com/old"))
        #expect(same.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }
}
