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
        let crossed = try RedirectSafety.sanitize(request, from: URL(string: "https://api.example.com/x"))
        #expect(crossed.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(crossed.value(forHTTPHeaderField: "Proxy-Authorization") == nil)
        #expect(crossed.value(forHTTPHeaderField: "Cookie") == nil)
        #expect(crossed.value(forHTTPHeaderField: "X-Other") == "1")
        let same = try RedirectSafety.sanitize(request, from: URL(string: "https://cdn.example.com/old"))
        #expect(same.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }

    static func request(_ url: String) throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        request.setValue("k-123456", forHTTPHeaderField: "X-API-Key")
        request.setValue("d-123456", forHTTPHeaderField: "X-Device-Token")
        request.setValue("1", forHTTPHeaderField: "X-Other")
        return request
    }

    @Test("every header the redactor treats as secret is dropped on a cross-origin hop, unless forwarded by name")
    func redactorSecrets() throws {
        var redactor = Redactor()
        redactor.headers.insert("X-Device-Token")
        var rules = RedirectRules(policy: .default, secretHeaders: redactor.headers)
        let from = URL(string: "https://api.example.com/x")
        let crossed = try RedirectSafety.sanitize(try Self.request("https://cdn.example.com/f"), from: from, rules: rules)
        #expect(crossed.value(forHTTPHeaderField: "X-API-Key") == nil)
        #expect(crossed.value(forHTTPHeaderField: "X-Device-Token") == nil)
        #expect(crossed.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(crossed.value(forHTTPHeaderField: "X-Other") == "1")
        rules.policy.forwardedCredentialHeaders = ["x-api-key"]
        let allowed = try RedirectSafety.sanitize(try Self.request("https://cdn.example.com/f"), from: from, rules: rules)
        #expect(allowed.value(forHTTPHeaderField: "X-API-Key") == "k-123456")
        #expect(allowed.value(forHTTPHeaderField: "Authorization") == nil)
        let same = try RedirectSafety.sanitize(try Self.request("https://api.example.com/y"), from: from, rules: rules)
        #expect(same.value(forHTTPHeaderField: "X-Device-Token") == "d-123456")
    }

    @Test("https to http is refused by default; allowed, it goes without any secret header")
    func downgrade() throws {
        let from = URL(string: "https://api.example.com/x")
        var rules = RedirectRules(policy: .default, secretHeaders: .defaultHeaders)
        rules.policy.forwardedCredentialHeaders = ["X-API-Key"]
        let refused = #expect(throws: URLError.self) {
            try RedirectSafety.sanitize(try Self.request("http://api.example.com/x"), from: from, rules: rules)
        }
        #expect(refused?.code == .appTransportSecurityRequiresSecureConnection)
        #expect(NetworkError(refused ?? URLError(.unknown)).isCancellation == false)
        rules.policy.allowsInsecureRedirects = true
        let followed = try RedirectSafety.sanitize(try Self.request("http://api.example.com/x"), from: from, rules: rules)
        #expect(followed.value(forHTTPHeaderField: "X-API-Key") == nil)
        #expect(followed.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(followed.value(forHTTPHeaderField: "X-Other") == "1")
    }
}
