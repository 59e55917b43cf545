import Foundation
import Testing
@testable import Courier

@Suite("Redaction and pin edge cases")
struct RedactionEdgeCaseTests {
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
