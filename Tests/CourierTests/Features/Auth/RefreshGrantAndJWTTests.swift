import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension AuthTests {
    /// `RefreshTokenGrant.oauth2` request shape and response parsing (RFC 6749 §5, §6).
    @Suite struct RefreshTokenGrantTests {
        static let current = AuthTokens(accessToken: "old-access", refreshToken: "old-refresh")
        static let receivedAt = Date(timeIntervalSince1970: 1_800_000_000)

        @Test func formRequest() throws {
            let grant = RefreshTokenGrant.oauth2(
                tokenURL: AuthFixture.tokenURL, clientID: "ios app", scope: "read write",
                additionalParameters: ["b": "2", "a": "&="])
            let request = try grant.makeRequest("r/1+2 3")
            #expect(request.httpMethod == "POST")
            #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
            #expect(request.value(forHTTPHeaderField: "Accept") == "application/json")
            #expect(request.timeoutInterval == 16)  // the 15 s deadline's backstop
            let body = String(decoding: request.httpBody ?? Data(), as: UTF8.self)
            #expect(body == "grant_type=refresh_token&refresh_token=r%2F1%2B2+3&client_id=ios+app&scope=read+write&a=%26%3D&b=2")
        }

        @Test func jsonRequest() throws {
            let request = try RefreshTokenGrant.oauth2(tokenURL: AuthFixture.tokenURL, encoding: .json).makeRequest("r1")
            #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
            let object = try JSONSerialization.jsonObject(with: request.httpBody ?? Data()) as? [String: String]
            #expect(object == ["grant_type": "refresh_token", "refresh_token": "r1"])
        }

        @Test func successWithRotation() throws {
            let response = HTTPResponse.json(
                #"{"access_token":"new-access","refresh_token":"new-refresh","token_type":"Bearer","expires_in":60}"#)
            let tokens = try RefreshTokenGrant.parseOAuth2Response(response, current: Self.current, receivedAt: Self.receivedAt)
            #expect(
                tokens
                    == AuthTokens(
                        accessToken: "new-access", refreshToken: "new-refresh", expiresAt: Self.receivedAt.addingTimeInterval(60))
            )
        }

        @Test func successWithoutRotationKeepsTheRefreshToken() throws {
            let response = HTTPResponse.json(#"{"access_token":"new-access","token_type":"bearer","expires_in":"90.5"}"#)
            let tokens = try RefreshTokenGrant.parseOAuth2Response(response, current: Self.current, receivedAt: Self.receivedAt)
            #expect(tokens.refreshToken == "old-refresh")
            #expect(tokens.expiresAt == Self.receivedAt.addingTimeInterval(90.5))
        }

        /// `oauth2` counts `expires_in` from the time of receipt the manager passes; a parser set
        /// in its place is used as written.
        @Test func theOAuth2ParserTakesTheManagersTimeOfReceiptUntilReplaced() throws {
            let response = HTTPResponse.json(#"{"access_token":"a1","token_type":"Bearer","expires_in":60}"#)
            var grant = RefreshTokenGrant.oauth2(tokenURL: AuthFixture.tokenURL)
            let parsed = try grant.parse(response, current: Self.current, receivedAt: Self.receivedAt)
            #expect(parsed.expiresAt == Self.receivedAt.addingTimeInterval(60))
            grant.parseResponse = { _, current in AuthTokens(accessToken: "custom", refreshToken: current.refreshToken) }
            #expect(try grant.parse(response, current: Self.current, receivedAt: Self.receivedAt).accessToken == "custom")
        }

        @Test(arguments: [
            (400, #"{"error":"invalid_grant","error_description":"expired"}"#),
            (401, #"{"error":"invalid_client"}"#),
            (400, ""),
            (200, #"{"error":"invalid_grant"}"#),
        ])
        func refusalsAreRejections(status: Int, body: String) {
            #expect(throws: TokenRefreshRejection.self) {
                try RefreshTokenGrant.parseOAuth2Response(
                    .json(body, status: status), current: Self.current, receivedAt: Self.receivedAt)
            }
        }

        /// A token endpoint that names the refresh token it refuses in its `error_description`:
        /// the rejection — documented as "never a token", and what `SessionEvent.sessionExpired`
        /// carries to the app's logs — hides it, and the access token too.
        @Test func aRejectionHidesTheTokensTheServerRepeats() throws {
            let current = AuthTokens(accessToken: "at-SECRET-123", refreshToken: "rt-SECRET-456")
            let body = #"{"error":"invalid_grant","error_description":"refresh token rt-SECRET-456 (for at-SECRET-123) expired"}"#
            do {
                _ = try RefreshTokenGrant.parseOAuth2Response(
                    .json(body, status: 400), current: current, receivedAt: Self.receivedAt)
                Issue.record("expected a rejection")
            } catch let rejection as TokenRefreshRejection {
                #expect(rejection.errorDescription == "refresh token <redacted> (for <redacted>) expired")
                #expect(rejection.error == "invalid_grant")
                #expect(!rejection.description.contains("SECRET"))
                #expect(!rejection.localizedDescription.contains("SECRET"))
            }
        }

        /// RFC 6749 §7.1: a token of another type than Bearer is refused (never sent as Bearer);
        /// `bearer` in any case (RFC 6749 §5.1) and a missing `token_type` are accepted.
        @Test func aTokenOfAnotherTypeThanBearerIsRefused() throws {
            for accepted in [#""token_type":"bearer","#, #""token_type":"BeArEr","#, ""] {
                let response = HTTPResponse.json(#"{"access_token":"a1",\#(accepted)"expires_in":60}"#)
                let tokens = try RefreshTokenGrant.parseOAuth2Response(
                    response, current: Self.current, receivedAt: Self.receivedAt)
                #expect(tokens.accessToken == "a1")
            }
            for refused in ["DPoP", "mac"] {
                let response = HTTPResponse.json(#"{"access_token":"a2","token_type":"\#(refused)","expires_in":60}"#)
                let rejection = TokenRefreshRejection(
                    statusCode: 200, error: "unsupported_token_type", errorDescription: #"token_type "\#(refused)" is not Bearer"#
                )
                #expect(throws: rejection) {
                    try RefreshTokenGrant.parseOAuth2Response(response, current: Self.current, receivedAt: Self.receivedAt)
                }
            }
        }

        @Test(arguments: [500, 502, 503, 429, 403, 404])
        func otherFailuresAreTransientNetworkErrors(_ status: Int) {
            do {
                _ = try RefreshTokenGrant.parseOAuth2Response(
                    .json("{}", status: status), current: Self.current, receivedAt: Self.receivedAt)
                Issue.record("expected an error")
            } catch let error as NetworkError {
                #expect(error.statusCode == status)
            } catch {
                Issue.record("expected a NetworkError, got \(error)")
            }
        }

        @Test(arguments: [#"{"token_type":"Bearer"}"#, #"{"access_token":""}"#, "<html>", #"{"access_token":42}"#])
        func malformedSuccessIsADecodingErrorThatHidesTheBody(_ body: String) {
            do {
                _ = try RefreshTokenGrant.parseOAuth2Response(.json(body), current: Self.current, receivedAt: Self.receivedAt)
                Issue.record("expected an error")
            } catch NetworkError.decoding(let failure) {
                #expect(!failure.bodySnippet.contains("access_token"))
            } catch {
                Issue.record("expected a decoding error, got \(error)")
            }
        }
    }

    /// `JSONWebToken`: reading registered claims without verification.
    @Suite struct JSONWebTokenTests {
        @Test func readsRegisteredClaimsIncludingFractionalDates() throws {
            // {"iss":"courier-test-server","sub":"alice","ns":"t1","iat":1795953116.252,"exp":1795953176.252,"jti":"6b6f44ed47a2e1c5"}
            let payload =
                #"{"iss":"courier-test-server","sub":"alice","ns":"t1","iat":1795953116.252,"exp":1795953176.252,"jti":"6b6f44ed47a2e1c5"}"#
            let token = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + Self.base64URL(payload) + ".sig"
            let claims = try #require(JSONWebToken.claims(of: token))
            #expect(claims.subject == "alice")
            #expect(claims.issuer == "courier-test-server")
            #expect(claims.id == "6b6f44ed47a2e1c5")
            #expect(claims.expiration == Date(timeIntervalSince1970: 1795953176.252))
            #expect(claims.issuedAt == Date(timeIntervalSince1970: 1795953116.252))
            #expect(JSONWebToken.expirationDate(of: token) == claims.expiration)
            #expect(AuthTokens(accessToken: token, refreshToken: nil).accessTokenExpiry == claims.expiration)
        }

        @Test func payloadNeedingPaddingAndURLAlphabet() throws {
            // "?>?" in JSON strings produce '-' / '_' in base64url, and odd lengths need padding.
            let payload = #"{"exp":1,"sub":"??>>~~"}"#
            let token = "h." + Self.base64URL(payload) + ".s"
            #expect(JSONWebToken.claims(of: token)?.subject == "??>>~~")
        }

        @Test(arguments: [
            "", "opaque-token", "a.b", "a.b.c.d", "h.!!!.s", "h.e30x.s", "h." + base64URL(#"{"exp":"soon"}"#) + ".s",
            "h." + base64URL("[1]") + ".s",
        ])
        func unreadableTokensHaveNoClaims(_ token: String) {
            #expect(JSONWebToken.claims(of: token) == nil)
        }

        @Test func expiresAtIsTheFallbackForOpaqueTokens() {
            let date = Date(timeIntervalSince1970: 42)
            #expect(AuthTokens(accessToken: "opaque", refreshToken: nil, expiresAt: date).accessTokenExpiry == date)
        }

        static func base64URL(_ text: String) -> String {
            Data(text.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
    }
}
