import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

/// Pure logic behind issue 9: redirect rules, challenge parsing, Set-Cookie splitting, path
/// templates, number diagnosis, charsets, token expiry, one-shot bodies and 408 through a stub.
@Suite("HTTP semantics (unit)")
struct HTTPSemanticsUnitTests {
    // MARK: Redirects (RFC 9110 §15.4)

    static func request(_ method: String, body: Data? = Data("{}".utf8)) -> URLRequest {
        var request = URLRequest(url: URL(string: "https://api.example.test/v1/things?x=1")!)
        request.httpMethod = method
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("en", forHTTPHeaderField: "Content-Language")
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        return request
    }

    static func redirect(_ status: Int, to location: String) -> HTTPResponse {
        HTTPResponse(
            statusCode: status, headers: ["Location": location], url: URL(string: "https://api.example.test/v1/things?x=1"))
    }

    @Test(
        "method and body after each redirect status",
        arguments: [
            ("POST", 301, "GET"), ("POST", 302, "GET"), ("POST", 303, "GET"), ("POST", 307, "POST"), ("POST", 308, "POST"),
            ("PUT", 301, "PUT"), ("PUT", 302, "PUT"), ("PUT", 303, "GET"), ("DELETE", 303, "GET"), ("PATCH", 308, "PATCH"),
            ("HEAD", 303, "HEAD"), ("HEAD", 301, "HEAD"), ("GET", 303, "GET"),
        ])
    func methodRules(_ method: String, _ status: Int, _ expected: String) throws {
        let next = try #require(
            try RedirectFollower.nextRequest(after: Self.redirect(status, to: "/v1/other"), to: Self.request(method)))
        #expect(next.httpMethod == expected)
        #expect(next.url?.absoluteString == "https://api.example.test/v1/other")
        if expected == method {
            #expect(next.httpBody == Data("{}".utf8))
            #expect(next.value(forHTTPHeaderField: "Content-Type") == "application/json")
        } else {
            #expect(next.httpBody == nil)
            #expect(next.value(forHTTPHeaderField: "Content-Type") == nil)
            #expect(next.value(forHTTPHeaderField: "Content-Language") == nil)
        }
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer t")  // same origin
    }

    @Test(
        "not followed: 300, 304, 305, no Location, a non-http scheme",
        arguments: [
            (300, "/x"), (304, "/x"), (305, "/x"), (302, ""), (302, "ftp://files.example.test/x"),
        ])
    func notFollowed(_ status: Int, _ location: String) throws {
        #expect(
            try RedirectFollower.nextRequest(after: Self.redirect(status, to: location), to: Self.request("GET", body: nil))
                == nil)
    }

    @Test("a redirect to another origin drops credentials")
    func crossOriginDropsCredentials() throws {
        let next = try #require(
            try RedirectFollower.nextRequest(
                after: Self.redirect(307, to: "https://cdn.example.test/blob"), to: Self.request("PUT")))
        #expect(next.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(next.httpBody == Data("{}".utf8))
    }

    @Test("a redirect loop stops after 20 hops with httpTooManyRedirects")
    func redirectLoopIsBounded() async throws {
        let stub = StubTransport { request in Self.redirect(302, to: request.url?.path ?? "/") }
        let client = CoreFixture.client(stub)
        await #expect(throws: NetworkError.self) { try await client.send(Request<Void>.get("/loop")) }
        #expect(stub.requestCount == RedirectFollower.maxRedirects + 1)
    }

    /// The 21st redirect used to fail with a bare `URLError(.httpTooManyRedirects)`: no text but
    /// Foundation's "The operation could not be completed", no URL.
    @Test("too many redirects is .transport(httpTooManyRedirects) naming the limit and the last hop, redacted")
    func tooManyRedirectsIsDescribed() async throws {
        let stub = StubTransport { request in
            let hop = Int(request.url?.lastPathComponent ?? "") ?? 0
            return HTTPResponse(
                statusCode: 307, headers: ["Location": "/v1/hop/\(hop + 1)?access_token=SECRET-\(hop + 1)"],
                url: request.url)
        }
        let client = CoreFixture.client(stub)
        let error = await #expect(throws: NetworkError.self) { try await client.send(Request<Void>.get("/hop/0")) }
        guard case .transport(let urlError)? = error else {
            Issue.record("expected .transport, got \(String(describing: error))")
            return
        }
        #expect(urlError.code == .httpTooManyRedirects)
        #expect(urlError.failingURL?.path == "/v1/hop/20")
        let text = urlError.localizedDescription
        #expect(text.contains("too many redirects"), "\(text)")
        #expect(text.contains("after 20"), "\(text)")
        #expect(text.contains("307 from https://api.example.test/v1/hop/20"), "\(text)")
        #expect(text.contains("/v1/hop/21"), "\(text)")
        #expect(!text.contains("SECRET"), "the description reaches logs: \(text)")
        #expect(error?.description.contains("too many redirects") == true)
        #expect(error?.userMessage == "A network error occurred.")
        #expect(stub.requestCount == RedirectFollower.maxRedirects + 1)
    }

    // MARK: One-shot bodies and 408

    static let keyed = EndpointPolicy.standard.with(\.retry, .default).with(\.idempotency, .automatic)

    @Test("a one-shot body is sent once: no retry after 408/503, no resend after a redirect")
    func oneShotBodyIsSentOnce() async throws {
        for first in [HTTPResponse.status(408), .status(503), Self.redirect(307, to: "/v1/again")] {
            let stub = StubTransport(responses: [first, .status(204)])
            let client = CoreFixture.client(stub) {
                $0.interceptors = [RetryInterceptor(clock: TestClock()), IdempotencyInterceptor()]
            }
            let body = RequestBody.stream(.once(InputStream(data: Data("abc".utf8))), contentType: "text/plain")
            await #expect(throws: NetworkError.self) {
                try await client.send(Request<Void>(method: .post, path: "/upload", body: body).policy(Self.keyed))
            }
            #expect(stub.requestCount == 1, "after \(first.statusCode)")
        }
    }

    @Test("a factory body is produced afresh and re-sent after a 408; a second 408 is returned")
    func factoryBodyIsResentAndSecond408Returned() async throws {
        let made = Locked(0)
        let stub = StubTransport(responses: [.status(408), .status(408), .status(204)])
        let client = CoreFixture.client(stub) {
            $0.interceptors = [RetryInterceptor(clock: TestClock()), IdempotencyInterceptor()]
        }
        let body = RequestBody.stream(
            .factory {
                made.withLock { $0 += 1 }
                return InputStream(data: Data("abc".utf8))
            }, contentType: "text/plain")
        await #expect(throws: NetworkError.self) {
            try await client.send(Request<Void>(method: .post, path: "/upload", body: body).policy(Self.keyed))
        }
        #expect(stub.requestCount == 2)
        #expect(made.current == 2)
        #expect(stub.requests.allSatisfy { $0.httpBodyStream != nil })
    }

    @Test("a 401 to a one-shot body refreshes the token but is returned without a resend; a data body is resent once")
    func oneShotBodyIsNotResentAfter401() async throws {
        for oneShot in [true, false] {
            let refreshes = Locked(0)
            let stub = StubTransport { request in
                if request.url?.path.hasSuffix("auth/refresh") == true {
                    refreshes.withLock { $0 += 1 }
                    return .json(#"{"access_token":"new","refresh_token":"r2","expires_in":3600}"#)
                }
                return .status(401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
            }
            let manager = TokenManager(
                store: InMemoryTokenStore(), transport: stub, grant: .oauth2(tokenURL: AuthFixture.tokenURL))
            try await manager.signIn(AuthTokens(accessToken: "old", refreshToken: "r1"))
            let client = CoreFixture.client(stub, environment: AuthFixture.environment) {
                $0.interceptors = [AuthInterceptor(tokenManager: manager)]
            }
            let body: RequestBody =
                oneShot
                ? .stream(.once(InputStream(data: Data("abc".utf8))), contentType: "text/plain")
                : .data(Data("abc".utf8), contentType: "text/plain")
            await #expect(throws: NetworkError.self) {
                try await client.send(
                    Request<Void>(method: .post, path: "/upload", body: body).policy(.standard.with(\.auth, .required)))
            }
            #expect(refreshes.current == 1)
            #expect(stub.requests.filter { $0.url?.path.hasSuffix("/upload") == true }.count == (oneShot ? 1 : 2))
        }
    }

    // MARK: WWW-Authenticate (RFC 9110 §11.6.1)

    @Test("challenges: several per field, token68, quoted escapes, any case")
    func challengeParsing() {
        let parsed = AuthenticationChallenge.parse(
            #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple", Negotiate abc+/==, bearer ERROR=invalid_token,,"#
        )
        #expect(parsed.map(\.scheme) == ["Newauth", "Basic", "Negotiate", "bearer"])
        #expect(parsed[0].parameters == ["realm": "apps", "type": "1", "title": #"Login to "apps""#])
        #expect(parsed[1]["REALM"] == "simple")
        #expect(parsed[2].token68 == "abc+/==")
        #expect(parsed[3].isScheme("Bearer") && parsed[3]["error"] == "invalid_token")
        #expect(AuthenticationChallenge.parse("").isEmpty)
        #expect(AuthenticationChallenge.parse(#"Bearer realm="unterminated"#).map(\.scheme) == ["Bearer"])
    }

    @Test(
        "refresh only for a Bearer challenge with invalid_token or no error code",
        arguments: [
            (nil, true), ("Bearer", true), (#"Bearer error="invalid_token""#, true), (#"Basic realm="a", Bearer"#, true),
            (#"Bearer error="invalid_request""#, false), (#"Bearer error="insufficient_scope""#, false),
            (#"Basic realm="a""#, false),
        ] as [(String?, Bool)])
    func refreshDecision(_ field: String?, _ refreshes: Bool) {
        var headers = HTTPHeaders()
        if let field { headers.add("WWW-Authenticate", field) }
        #expect(AuthInterceptor.refreshes(after: headers) == refreshes)
    }

    // MARK: Set-Cookie (RFC 6265 §3)

    @Test("joined Set-Cookie values split back per cookie; Expires commas kept")
    func setCookieSplitting() {
        let joined =
            "a=1; Path=/, b=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Path=/,c=3, d=; Expires=Thu, 01 Jan 1970 00:00:00 GMT"
        #expect(
            HTTPHeaders.splitSetCookie(joined) == [
                "a=1; Path=/", "b=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Path=/", "c=3",
                "d=; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
            ])
    }

    // MARK: Paths

    @Test(
        "path values: one segment each, encoded once; empty path adds nothing",
        arguments: [
            ("/files/{name}", ["name": "a/b"], "https://api.example.test/v1/files/a%2Fb"),
            ("/files/{name}", ["name": "a%2Fb"], "https://api.example.test/v1/files/a%252Fb"),
            ("/files/v{n}.json", ["n": "1 2"], "https://api.example.test/v1/files/v1%202.json"),
            ("/{a}/{b}", ["a": "..x", "b": "é"], "https://api.example.test/v1/..x/%C3%A9"),
            ("", [:], "https://api.example.test/v1"),
        ])
    func pathValues(_ path: String, _ values: [String: String], _ expected: String) async throws {
        let stub = StubTransport(responses: [.status(204)])
        let client = CoreFixture.client(stub)
        var request = Request<Void>.get(path)
        for (name, value) in values { request = request.pathValue(name, value) }
        try await client.send(request)
        #expect(CoreFixture.urlString(stub.requests.first) == expected)
    }

    // MARK: Numbers and text

    @Test("JSON grammar: numbers of any size are valid; garbage is not")
    func jsonSyntax() {
        #expect(JSONSyntax.isValid(Data(#"{"a":[1e400,-0.5,12345678901234567890123]}"#.utf8)))
        #expect(!JSONSyntax.isValid(Data(#"{"a":01}"#.utf8)))
        #expect(!JSONSyntax.isValid(Data(#"{"a":1,}"#.utf8)))
        #expect(!JSONSyntax.isValid(Data(String(repeating: "[", count: 600).utf8)))
    }

    @Test("a JSON body that does not decode for another reason keeps the decoder's error")
    func otherErrorsAreKept() {
        struct S: Decodable { var id: Int64 }
        let body = Data(#"{"id":"x"}"#.utf8)
        let error: any Error
        do {
            _ = try JSONDecoder().decode(S.self, from: body)
            return
        } catch let caught { error = caught }
        #expect(JSONNumberDiagnosis.diagnose(error, decoding: S.self, from: body, with: JSONDecoder()) == nil)
    }

    @Test("charset names: IANA names and aliases, any case; unknown is nil")
    func charsets() {
        #expect(TextDecodingError.encoding(forCharset: "Latin1") == .isoLatin1)
        #expect(TextDecodingError.encoding(forCharset: "UTF-16LE") == .utf16LittleEndian)
        #expect(TextDecodingError.encoding(forCharset: "x-unknown") == nil)
        let quoted = HTTPResponse(statusCode: 200, headers: ["Content-Type": #"text/plain; format=flowed; Charset="UTF-8""#])
        #expect(quoted.charset == "utf-8")
        #expect(
            TextDecodingError(reason: .unsupportedCharset, charset: "x-unknown").localizedDescription
                == "the response charset 'x-unknown' is not supported")
    }

    // MARK: Clock skew

    @Test("expiry is in the device's time frame: expires_in from receipt, else exp shifted by the Date offset")
    func expiryFrame() throws {
        let serverNow = Date(timeIntervalSince1970: 1_800_000_000)
        let deviceNow = serverNow.addingTimeInterval(3600)  // the device clock is an hour ahead
        let jwt = Self.jwt(exp: serverNow.timeIntervalSince1970 + 300)
        let withExpiresIn = OAuthTokenResponse(accessToken: jwt, expiresIn: 300)
        #expect(
            withExpiresIn.tokens(receivedAt: deviceNow, serverDate: serverNow).accessTokenExpiry
                == deviceNow.addingTimeInterval(300))
        let withoutExpiresIn = OAuthTokenResponse(accessToken: jwt)
        #expect(
            withoutExpiresIn.tokens(receivedAt: deviceNow, serverDate: serverNow).accessTokenExpiry
                == deviceNow.addingTimeInterval(300))
        // No Date: the exp as written.
        #expect(withoutExpiresIn.tokens(receivedAt: deviceNow).accessTokenExpiry == serverNow.addingTimeInterval(300))
    }

    @Test("a token that arrives already looking expired is refreshed once, not on every call")
    func expiredOnArrivalRefreshesOnce() async throws {
        let serverNow = Date(timeIntervalSince1970: 1_800_000_000)
        let refreshes = Locked(0)
        let token = Self.jwt(exp: serverNow.timeIntervalSince1970 + 300)
        let stub = StubTransport { _ in
            refreshes.withLock { $0 += 1 }
            return .json(#"{"access_token":"\#(token)","refresh_token":"r2"}"#)  // no expires_in, no Date
        }
        let manager = TokenManager(
            store: InMemoryTokenStore(), transport: stub,
            grant: .oauth2(tokenURL: URL(string: "https://auth.example.test/token")!),
            now: { serverNow.addingTimeInterval(3600) })
        try await manager.signIn(AuthTokens(accessToken: token, refreshToken: "r1"))
        for _ in 0..<10 { _ = try await manager.validAccessToken() }
        #expect(refreshes.current == 1)
    }

    static func jwt(exp: TimeInterval) -> String {
        func base64URL(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        return base64URL(#"{"alg":"none"}"#) + "." + base64URL(#"{"exp":\#(Int(exp))}"#) + ".sig"
    }
}
