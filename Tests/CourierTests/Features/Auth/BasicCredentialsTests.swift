import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

@Suite("Basic authentication (RFC 7617)")
struct BasicCredentialsTests {
    @Test("RFC 7617's examples: ASCII and UTF-8")
    func rfcExamples() throws {
        #expect(
            try BasicCredentials(user: "Aladdin", password: "open sesame").authorizationValue
                == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")  // §2
        #expect(
            try BasicCredentials(user: "test", password: "123\u{A3}").authorizationValue
                == "Basic dGVzdDoxMjPCow==")  // §2.1, charset="UTF-8"
    }

    @Test("user-id and password are normalised to NFC before encoding (RFC 7617 §2.1)")
    func normalisation() throws {
        let decomposed = try BasicCredentials(user: "Jo\u{65}\u{301}l", password: "pa\u{301}ss")
        let composed = try BasicCredentials(user: "Jo\u{E9}l", password: "p\u{E1}ss")
        #expect(decomposed.authorizationValue == composed.authorizationValue)
    }

    @Test("a colon in the user-id and control characters are refused")
    func refusals() {
        #expect(throws: HeaderFieldError.colonInUserID) { try BasicCredentials(user: "a:b", password: "x") }
        #expect(throws: HeaderFieldError.invalidValue(field: "Basic password", problem: .lineBreak)) {
            try BasicCredentials(user: "a", password: "x\r\nX-Admin: 1")
        }
        #expect(throws: HeaderFieldError.invalidValue(field: "Basic user-id", problem: .controlCharacter)) {
            try BasicCredentials(user: "a\u{7F}", password: "x")
        }
        // A colon in the password is fine: only the first colon separates (RFC 7617 §2).
        #expect(throws: Never.self) { try BasicCredentials(user: "a", password: "x:y") }
    }

    @Test("descriptions, debug output and dump never show the password")
    func neverPrinted() throws {
        let credentials = try BasicCredentials(user: "alice", password: "hunter2-secret")
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in ["\(credentials)", String(reflecting: credentials), dumped] {
            #expect(!text.contains("hunter2-secret"))
            #expect(text.contains("alice"))
        }
    }

    @Test("the request carries the header; logs and cURL exports redact it")
    func sentAndRedacted() async throws {
        let stub = StubTransport { _ in .json("{}") }
        let logger = CapturingNetworkLogger()
        let client = APIClient(environment: APIEnvironment(name: "t", baseURL: URL(string: "https://api.example.test")!)) {
            $0.transport = stub
            $0.interceptors = [LoggingInterceptor(logger: logger)]
        }
        let request = try Request<Void>.post("/login").basicAuth(user: "alice", password: "hunter2-secret")
            .policy(EndpointPolicy().with(\.logging, .debugSafe))
        try await client.send(request)
        let value = "Basic " + Data("alice:hunter2-secret".utf8).base64EncodedString()
        #expect(stub.requests.first?.value(forHTTPHeaderField: "Authorization") == value)
        #expect(logger.text.contains("Authorization: Basic <redacted>"))
        #expect(!logger.text.contains("hunter2-secret"))
        #expect(!logger.text.contains(Data("alice:hunter2-secret".utf8).base64EncodedString()))
        let headers = Redactor().redact(["Authorization": value])
        #expect(headers["Authorization"] == "Basic <redacted>")
    }
}
