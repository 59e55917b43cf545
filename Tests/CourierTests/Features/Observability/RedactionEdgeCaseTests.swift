import Foundation
import Testing
@testable import Courier

@Suite("Redaction and pin edge cases")
struct RedactionEdgeCaseTests {
    static let pinA = Data(repeating: 1, count: 32).base64EncodedString()
    static let pinB = Data(repeating: 2, count: 32).base64EncodedString()

    @Test(
        "a pinned host applies however the request spells it (IDN, IPv6 forms)",
        arguments: [
            ("bücher.example", "https://bücher.example/x"), ("BÜCHER.example.", "https://xn--bcher-kva.example/x"),
            ("::1", "https://[0:0:0:0:0:0:0:1]/x"), ("[2001:DB8::0:1]", "https://[2001:db8:0:0:0:0:0:1]/x"),
            ("::ffff:1.2.3.4", "https://[::ffff:102:304]/x"),
        ])
    func pinnedHostSpellings(pinned: String, url: String) throws {
        let policy = try PinningPolicy([try HostPins(host: pinned, pins: [Self.pinA, Self.pinB])])
        let host = try #require(URL(string: url)?.host)
        #expect(policy.enforces(host: host))
    }

    @Test(arguments: [[UInt16]([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1]), [0, 0, 0, 0, 0, 0, 0, 0], [1, 0, 2, 0, 3, 0, 4, 0]])
    func ipv6CanonicalTextRoundTrips(_ groups: [UInt16]) {
        let text = IPv6Text.canonical(groups)
        #expect(IPv6Text.groups(of: text) == groups)
    }

    @Test func aSecretHeadersFirstWordIsHiddenUnlessItIsAnAuthScheme() {
        let redacted = Redactor().redact(
            HTTPHeaders([
                .init(name: "X-Passphrase", value: "correct horse battery staple"),
                .init(name: "Authorization", value: "Bearer tok-SECRET-1"),
            ]))
        #expect(redacted["X-Passphrase"] == "<redacted>")
        #expect(redacted["Authorization"] == "Bearer <redacted>")
    }

    @Test func aNamelessCookieShowsNothingOfItsValue() {
        let redacted = Redactor().redact(HTTPHeaders([.init(name: "Cookie", value: "opaqueSessionValue123; lang=en")]))
        #expect(redacted["Cookie"] == "lang=<redacted>")
    }

    @Test func aTokenUsedAsTheURLsUserNameIsHidden() throws {
        let url = try #require(URL(string: "https://ghp_SECRETtoken123@git.example.test/repo.git"))
        #expect(Redactor().redact(url: url) == "https://<redacted>@git.example.test/repo.git")
    }

    @Test(arguments: [
        "grant_type=authorization_code&code_verifier=verifierSECRET43&redirect_uri=app%3A%2F%2Fcb",
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=deviceSECRET44",
        "client_assertion_type=jwt&client_assertion=eyJSECRET45",
    ])
    func oauthGrantSecretsInAFormBodyAreHidden(_ body: String) {
        let preview = Redactor().preview(of: Data(body.utf8), contentType: "application/x-www-form-urlencoded")
        #expect(preview?.text?.contains("SECRET") == false)
    }

    @Test(arguments: ["X-Auth-Key", "Ocp-Apim-Subscription-Key", "X-Functions-Key"])
    func vendorAPIKeyHeadersAreHidden(_ name: String) {
        #expect(Redactor().redact(HTTPHeaders([.init(name: name, value: "k-SECRET-46")]))[name] == "<redacted>")
    }

    @Test("JSON labelled text/plain is still redacted by field name", arguments: ["text/plain", "text/plain; charset=utf-8"])
    func jsonAsTextPlain(contentType: String) throws {
        let body = #"{"user":"ann","password":"SECRET-PW"}"#
        let preview = try #require(Redactor().preview(of: Data(body.utf8), contentType: contentType))
        #expect(preview.text == #"{"user":"ann","password":"<redacted>"}"#)
    }

    @Test("plain text stays text")
    func plainText() throws {
        let preview = try #require(Redactor().preview(of: Data("hello".utf8), contentType: "text/plain"))
        #expect(preview.text == "hello")
    }

    @Test("a pin copied from `openssl … | base64` with its trailing newline is accepted")
    func pinWithNewline() throws {
        let pin = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        #expect(try SPKIPin(base64: pin + "\n") == SPKIPin(base64: pin))
    }
}
