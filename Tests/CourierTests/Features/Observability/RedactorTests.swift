import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

@Suite("Redactor")
struct RedactorTests {
    let redactor = Redactor()

    @Test(arguments: [
        ("Authorization", "Bearer SECRET-TOKEN", "Bearer <redacted>"),
        ("Proxy-Authorization", "Basic U0VDUkVULVVTRVI6U0VDUkVULVBX", "Basic <redacted>"),
        ("Cookie", "sid=SECRET-SID; lang=en", "sid=<redacted>; lang=<redacted>"),
        ("Set-Cookie", "sid=SECRET-SID; Path=/; HttpOnly", "sid=<redacted>; Path=/; HttpOnly"),
        ("X-API-Key", "SECRET-KEY", "<redacted>"),
        ("x-refresh-token", "SECRET-REFRESH", "<redacted>"),
        ("X-Amz-Security-Token", "SECRET-AMZ", "<redacted>"),
    ])
    func sensitiveHeadersKeepTheirNameAndLoseTheirValue(name: String, value: String, expected: String) {
        let redacted = redactor.redact(HTTPHeaders([.init(name: name, value: value)]))
        #expect(redacted.fields == [.init(name: name, value: expected)])
        #expect(!redacted.description.contains("SECRET"))
    }

    @Test(arguments: ["Idempotency-Key", "X-Request-ID", "Content-Type", "Accept", "User-Agent"])
    func identifiersAndMetadataStayVisible(name: String) {
        let redacted = redactor.redact(HTTPHeaders([.init(name: name, value: "value-123")]))
        #expect(redacted[name] == "value-123")
    }

    @Test func applicationExtendsTheHeaderList() {
        var custom = Redactor()
        custom.headers.insert("X-Device-Fingerprint")
        let redacted = custom.redact(HTTPHeaders(["X-Device-Fingerprint": "abc-123", "X-Device": "phone"]))
        #expect(redacted["X-Device-Fingerprint"] == "<redacted>")
        #expect(redacted["X-Device"] == "phone")
    }

    @Test func aSecretRepeatedInAnotherHeaderIsScrubbedToo() {
        let redacted = redactor.redact(
            HTTPHeaders([
                .init(name: "Authorization", value: "Bearer SECRET-TOKEN"),
                .init(name: "X-Debug", value: "forwarded SECRET-TOKEN to upstream"),
            ]))
        #expect(redacted["X-Debug"] == "forwarded <redacted> to upstream")
    }

    @Test func urlValuedHeadersHaveTheirQueryRedacted() {
        let redacted = redactor.redact(
            HTTPHeaders([
                .init(name: "Location", value: "https://app.example.com/callback?code=SECRET-CODE&state=abc"),
                .init(name: "Referer", value: "https://app.example.com/reset?token=SECRET-T"),
            ]))
        #expect(redacted["Location"] == "https://app.example.com/callback?code=<redacted>&state=abc")
        #expect(redacted["Referer"] == "https://app.example.com/reset?token=<redacted>")
    }

    /// A `Link` field's targets (RFC 8288) are URLs too: a next-page link that carries the
    /// caller's token showed it in logs, records and HAR files.
    @Test func linkTargetsHaveTheirQueryRedacted() {
        let redacted = redactor.redact(
            HTTPHeaders([
                .init(
                    name: "Link",
                    value:
                        #"<https://api.example.com/items?page=2&access_token=SECRET-T>; rel="next", </items?page=9>; rel="last""#)
            ]))
        #expect(
            redacted["Link"]
                == #"<https://api.example.com/items?page=2&access_token=<redacted>>; rel="next", </items?page=9>; rel="last""#)
    }

    /// A `Refresh` field's target went as received into logs, records and HAR (an outside
    /// tester's list): now redacted like a `Location`, quoted or not.
    @Test(arguments: [
        (
            "0; url=https://app.example.com/done?access_token=SECRET-R&step=2",
            "0; url=https://app.example.com/done?access_token=<redacted>&step=2"
        ),
        ("5;URL='/next?token=SECRET-R'", "5;URL='/next?token=<redacted>'"),
        ("10", "10"),
    ])
    func refreshTargetsHaveTheirQueryRedacted(value: String, expected: String) {
        let redacted = redactor.redact(HTTPHeaders([.init(name: "Refresh", value: value)]))
        #expect(redacted["Refresh"] == expected)
    }

    /// A cookie without a name (`Cookie: <value>`, RFC 6265bis §5.6 accepts one) is hidden in
    /// the `Cookie` field but was not learned, so the same value elsewhere stayed visible.
    @Test func aNamelessCookiesValueIsLearnedToo() {
        let redacted = redactor.redact(
            HTTPHeaders([
                .init(name: "Cookie", value: "SECRET-NAMELESS; lang=en"),
                .init(name: "Set-Cookie", value: "SECRET-BARE; Path=/"),
                .init(name: "X-Echo", value: "saw SECRET-NAMELESS and SECRET-BARE"),
            ]))
        #expect(redacted["Cookie"] == "lang=<redacted>")
        #expect(redacted["X-Echo"] == "saw <redacted> and <redacted>")
    }

    @Test func basicCredentialsAreLearnedDecoded() {
        // "SECRET-USER:SECRET-PW" base64
        let redacted = redactor.redact(
            HTTPHeaders([
                .init(name: "Authorization", value: "Basic U0VDUkVULVVTRVI6U0VDUkVULVBX"),
                .init(name: "X-Note", value: "pw=SECRET-PW"),
            ]))
        #expect(redacted["X-Note"] == "pw=<redacted>")
    }

    @Test(arguments: [
        (
            "https://api.example.com/items?access_token=SECRET-1&page=2",
            "https://api.example.com/items?access_token=<redacted>&page=2"
        ),
        (
            "https://api.example.com/x?api_key=SECRET-2&refresh_token=SECRET-3&q=lamp",
            "https://api.example.com/x?api_key=<redacted>&refresh_token=<redacted>&q=lamp"
        ),
        (
            "https://api.example.com/cb?code=SECRET-4&state=xyz#access_token=SECRET-5&token_type=bearer",
            "https://api.example.com/cb?code=<redacted>&state=xyz#access_token=<redacted>&token_type=<redacted>"
        ),
        ("https://ann:SECRET-6@api.example.com/path?flag", "https://ann:<redacted>@api.example.com/path?flag"),
        ("https://api.example.com/plain", "https://api.example.com/plain"),
    ])
    func queryParametersAreRedactedByName(url: String, expected: String) throws {
        #expect(redactor.redact(url: try #require(URL(string: url))) == expected)
    }

    /// A query value that is JSON text (a GraphQL GET's `variables`) is redacted by member name.
    @Test(arguments: [
        (
            "https://api.example.com/graphql?operationName=SignIn&variables=%7B%22user%22%3A%7B%22email%22%3A%22ann%40example.com%22%2C%22password%22%3A%22SECRET%20PW%22%7D%7D",
            "https://api.example.com/graphql?operationName=SignIn&variables=%7B%22user%22:%7B%22email%22:%22ann@example.com%22,%22password%22:%22<redacted>%22%7D%7D"
        ),
        (
            "https://api.example.com/x?filter=%5B%7B%22token%22%3A%22SECRET-T%22%7D%5D&q=%7Bnot%20json",
            "https://api.example.com/x?filter=%5B%7B%22token%22:%22<redacted>%22%7D%5D&q=%7Bnot%20json"
        ),
        ("https://api.example.com/x?variables=%7B%22id%22%3A1%7D", "https://api.example.com/x?variables=%7B%22id%22%3A1%7D"),
    ])
    func jsonQueryValuesAreRedactedByMemberName(url: String, expected: String) throws {
        let redacted = redactor.redact(url: try #require(URL(string: url)))
        #expect(redacted == expected)
        #expect(!redacted.contains("SECRET"))
    }

    @Test func jsonKeysAreRedactedAtAnyDepthKeepingLayout() throws {
        let body =
            #"{"user": {"name": "Ann", "password": "SECRET-PW"}, "items": [{"token": "SECRET-T", "id": 7}], "card_number": 4111111111111111, "ok": true}"#
        let preview = try #require(redactor.preview(of: Data(body.utf8), contentType: "application/json"))
        #expect(
            preview
                == .text(
                    #"{"user": {"name": "Ann", "password": "<redacted>"}, "items": [{"token": "<redacted>", "id": 7}], "card_number": "<redacted>", "ok": true}"#,
                    truncated: false))
    }

    @Test func aSensitiveKeyHidesAWholeObjectOrArray() throws {
        let body = #"{"credentials":{"username":"SECRET-USER","password":"SECRET-PW"},"phone":["+1 555 0100"],"next":1}"#
        let preview = try #require(redactor.preview(of: Data(body.utf8), contentType: "application/json; charset=utf-8"))
        #expect(preview.text == #"{"credentials":"<redacted>","phone":"<redacted>","next":1}"#)
    }

    @Test(arguments: [
        "access_token", "refreshToken", "client_secret", "newPassword", "cardNumber", "CVV", "pin", "otp", "id_token", "apiKey",
        "jwt", "bearer", "accessKey", "authCode", "accountNumber", "recoveryPhrase", "mnemonic", "seed_phrase",
    ])
    func defaultBodyFieldsCoverCommonSpellings(key: String) throws {
        let body = "{\"\(key)\":\"SECRET-VALUE\"}"
        let preview = try #require(redactor.preview(of: Data(body.utf8), contentType: "application/json"))
        #expect(preview.text == "{\"\(key)\":\"<redacted>\"}")
    }

    @Test(arguments: ["shipping", "footprint", "description", "spinner", "keyboard", "accountId", "accountType"])
    func ordinaryFieldsAreNotRedacted(key: String) throws {
        let body = "{\"\(key)\":\"visible\"}"
        let preview = try #require(redactor.preview(of: Data(body.utf8), contentType: "application/json"))
        #expect(preview.text == body)
    }

    @Test func escapedKeysAreRecognised() throws {
        let body = #"{"pass\u0077ord":"SECRET-PW","a\"b":"x"}"#
        let preview = try #require(redactor.preview(of: Data(body.utf8), contentType: "application/json"))
        #expect(preview.text == #"{"pass\u0077ord":"<redacted>","a\"b":"x"}"#)
    }

    @Test func formFieldsAreRedactedByName() throws {
        let body = "username=ann&password=SECRET%2DPW&remember=1&client_secret=SECRET-C"
        let preview = try #require(redactor.preview(of: Data(body.utf8), contentType: "application/x-www-form-urlencoded"))
        #expect(preview.text == "username=ann&password=<redacted>&remember=1&client_secret=<redacted>")
    }

    @Test func longBodiesAreTruncatedToTheLimit() throws {
        var small = Redactor()
        small.bodyPreviewLimit = 16
        let preview = try #require(small.preview(of: Data(String(repeating: "a", count: 100).utf8), contentType: "text/plain"))
        #expect(preview == .text(String(repeating: "a", count: 16), truncated: true))
        #expect(preview.description.hasSuffix("…(truncated)"))
    }

    @Test func truncationNeverSplitsACharacter() throws {
        var small = Redactor()
        small.bodyPreviewLimit = 5
        // "aaaa" + "é" (2 bytes): a 5-byte cut would fall inside "é".
        let preview = try #require(small.preview(of: Data("aaaaéb".utf8), contentType: "text/plain"))
        #expect(preview == .text("aaaa", truncated: true))
    }

    @Test func aSecretBeyondThePreviewIsStillLearnedFromTheWholeBody() throws {
        var small = Redactor()
        small.bodyPreviewLimit = 40
        let body = #"{"note":"see SECRET-LATE below","padding":"xxxxxxxxxxxxxxxxxxxxxxxx","password":"SECRET-LATE"}"#
        let preview = try #require(small.preview(of: Data(body.utf8), contentType: "application/json"))
        #expect(preview.text == #"{"note":"see <redacted> below","padding"#)
    }

    @Test(arguments: [
        ("image/png", [UInt8]([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])),
        ("application/octet-stream", [UInt8]([1, 2, 3])),
        (
            "multipart/form-data; boundary=x",
            Array("--x\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nSECRET\r\n--x--".utf8)
        ),
    ])
    func binaryBodiesAreSummarised(contentType: String, bytes: [UInt8]) {
        #expect(
            redactor.preview(of: Data(bytes), contentType: contentType) == .binary(size: bytes.count, contentType: contentType))
    }

    /// A body labelled as text or JSON with invalid UTF-8 (a Latin-1 error page, a stray byte) is
    /// shown with U+FFFD and a note, still redacted; it is not reduced to its size.
    @Test(arguments: [
        (
            "application/json", Array(#"{"error":"caf"#.utf8) + [0xE9] + Array(#"","token":"SECRET-T"}"#.utf8),
            #"{"error":"caf\#u{FFFD}","token":"<redacted>"}"#
        ),
        ("text/plain; charset=utf-8", Array("Fehler: ung".utf8) + [0xFC] + Array("ltig".utf8), "Fehler: ung\u{FFFD}ltig"),
        ("text/html", [0xFF, 0xFE] + Array("<p>down</p>".utf8), "\u{FFFD}\u{FFFD}<p>down</p>"),
    ])
    func labelledTextWithInvalidUTF8IsShownWithReplacementCharacters(contentType: String, bytes: [UInt8], shown: String) {
        let preview = redactor.preview(of: Data(bytes), contentType: contentType)
        #expect(preview?.text == shown + " <not valid UTF-8: invalid bytes shown as U+FFFD>")
        #expect(preview?.description.contains("not valid UTF-8") == true)
    }

    @Test func bodiesWithoutAContentTypeAreSniffed() throws {
        #expect(redactor.preview(of: Data(#"{"token":"SECRET-X"}"#.utf8), contentType: nil)?.text == #"{"token":"<redacted>"}"#)
        #expect(redactor.preview(of: Data("hello".utf8), contentType: nil)?.text == "hello")
        #expect(redactor.preview(of: Data([0, 1, 2, 0xFF]), contentType: nil) == .binary(size: 4, contentType: nil))
        #expect(redactor.preview(of: Data(), contentType: "application/json") == nil)
    }

    @Test(arguments: [
        #"{"password":"SECRET-PW"#,  // cut inside the secret
        #"{"password":"#,  // cut before the value
        #"{"a":{"token":{"x":["SECRET-PW","#,  // cut inside a swallowed container
        #"]]]}}}"password":"SECRET-PW"}"#,  // unbalanced garbage
        #"{"password" "SECRET-PW"}"#,  // missing colon: not an object member
        #"{"password":,"x":"SECRET-PW"}"#,  // missing value
        "{\"password\":\"SECRET\\",  // dangling escape
    ])
    func brokenJSONNeverCrashesAndNeverShowsTheSensitiveValue(body: String) throws {
        let preview = try #require(redactor.preview(of: Data(body.utf8), contentType: "application/json"))
        let text = try #require(preview.text)
        if body.contains(#""password":"#) && !body.contains(#""password":,"#) {
            #expect(!text.contains("SECRET"))
        }
    }

    @Test func deepNestingIsHandledWithoutRecursion() throws {
        let body = String(repeating: "[", count: 100_000) + #"{"token":"SECRET-DEEP"}"# + String(repeating: "]", count: 100_000)
        var large = Redactor()
        large.bodyPreviewLimit = Int.max
        let text = try #require(large.preview(of: Data(body.utf8), contentType: "application/json")?.text)
        #expect(!text.contains("SECRET"))
        #expect(text.contains(#"{"token":"<redacted>"}"#))
    }

    @Test func randomBytesNeverCrash() {
        var generator = RedactorTests.SeededGenerator(seed: 0x5EED)
        let alphabet = Array(#"{}[]:,"\ a1-.tokenpassword"#.utf8) + [0xC3, 0xA9, 0xFF, 0x00, 0x0A]
        for length in 0..<400 {
            let bytes = (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            for type in ["application/json", "application/x-www-form-urlencoded", "text/plain", nil] {
                _ = redactor.preview(of: Data(bytes), contentType: type)
            }
        }
    }

    @Test func normalisationMatchesAnySpelling() {
        let list = RedactionList(exactNames: ["X-Device-Id"], fragments: ["secret"])
        #expect(list.matches("x_device_id"))
        #expect(list.matches("xDeviceId"))
        #expect(list.matches("ClientSecretV2"))
        #expect(!list.matches("device"))
        var adjusted = RedactionList.defaultBodyFields
        #expect(adjusted.matches("token_type"))
        adjusted.remove("token")
        #expect(!adjusted.matches("token_type"))
    }
}

extension RedactorTests {
    /// A small deterministic generator (SplitMix64) for reproducible fuzz inputs.
    struct SeededGenerator: RandomNumberGenerator {
        private var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
