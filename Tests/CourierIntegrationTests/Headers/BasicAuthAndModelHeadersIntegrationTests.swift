import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

@Suite("Basic auth against httpbin; model headers against the reference server")
struct BasicAuthAndModelHeadersIntegrationTests {
    struct BasicAuthResult: Decodable, Sendable {
        var authenticated: Bool
        var user: String
    }

    @Test("httpbin /basic-auth/{user}/{passwd} accepts the credentials and refuses a wrong password")
    func basicAuth() async throws {
        let logger = CapturingNetworkLogger()
        let client = APIClient(environment: try TestServers.httpbinEnvironment()) {
            $0.transport = TestTransport.make()
            $0.interceptors = [LoggingInterceptor(logger: logger)]
        }
        let ok = try await client.send(
            Request<BasicAuthResult>.get("/basic-auth/alice/open-sesame-42")
                .basicAuth(user: "alice", password: "open-sesame-42")
                .policy(EndpointPolicy().with(\.logging, .debugSafe)))
        #expect(ok.authenticated)
        #expect(ok.user == "alice")

        let wrong = await #expect(throws: NetworkError.self) {
            // httpbin's 401 carries `WWW-Authenticate: Basic`, which on Linux URLSession turns into a
            // challenge that never completes unless Courier ends it (TransportSessionDelegate); the short
            // deadline keeps a regression from costing a minute.
            try await client.send(
                Request<BasicAuthResult>.get("/basic-auth/alice/open-sesame-42")
                    .basicAuth(user: "alice", password: "not-the-password")
                    .policy(EndpointPolicy().with(\.deadline, .seconds(5))))
        }
        #expect(wrong?.statusCode == 401)
        #expect(wrong?.failedResponse?.headers["WWW-Authenticate"] == #"Basic realm="Fake Realm""#)
        #expect(logger.text.contains("Authorization: Basic <redacted>"))
        #expect(!logger.text.contains("open-sesame-42:") && !logger.text.contains("not-the-password"))
        #expect(!logger.text.contains(Data("alice:open-sesame-42".utf8).base64EncodedString()))
    }

    @Test("a non-ASCII password is sent as UTF-8 (RFC 7617 §2.1) and accepted")
    func basicAuthUTF8() async throws {
        let client = APIClient(environment: try TestServers.httpbinEnvironment(), configure: TestTransport.configure)
        let result = try await client.send(
            Request<BasicAuthResult>.get("/basic-auth/j\u{FC}rgen/p\u{E4}ss-\u{A3}5")
                .basicAuth(user: "j\u{FC}rgen", password: "p\u{E4}ss-\u{A3}5"))
        #expect(result.authenticated)
        #expect(result.user == "j\u{FC}rgen")
    }

    struct Diagnostics: Encodable, Sendable {
        var appVersion: String
        var deviceID: String?
        var platform: String
        enum CodingKeys: String, CodingKey {
            case appVersion = "X-App-Version"
            case deviceID = "X-Device-ID"
            case platform = "X-Platform"
        }
    }

    @Test("model headers per client and per request reach the server; nil fields are absent; an injection sends nothing")
    func modelHeaders() async throws {
        let namespace = TestServers.makeNamespace("hdr")
        let clientHeaders = try HTTPHeaders(encoding: Diagnostics(appVersion: "4.2", deviceID: nil, platform: "linux"))
        let client = APIClient(environment: try TestServers.apiEnvironment(namespace: namespace)) {
            $0.transport = TestTransport.make()
            $0.headers = clientHeaders
        }
        let echo = try await client.send(
            Request<Echo>.get("/echo").headers(from: Diagnostics(appVersion: "4.3-beta", deviceID: "dev-7", platform: "linux")))
        #expect(echo.header("X-App-Version") == "4.3-beta")
        #expect(echo.header("X-Device-ID") == "dev-7")
        #expect(echo.header("X-Platform") == "linux")

        let plain = try await client.send(Request<Echo>.get("/echo"))
        #expect(plain.header("X-App-Version") == "4.2")
        #expect(plain.header("X-Device-ID") == nil)

        #expect(throws: HeaderFieldError.invalidValue(field: "X-Device-ID", problem: .lineBreak)) {
            try Request<Echo>.get("/echo/injected")
                .headers(from: Diagnostics(appVersion: "1", deviceID: "x\r\nX-Admin: true", platform: "linux"))
        }
        let log = try await TestServers.requestLog(namespace: namespace)
        #expect(log.map(\.path) == ["/echo", "/echo"])
        #expect(log.allSatisfy { $0.header("X-Admin") == nil })
    }
}
