import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierTesting

/// An in-process OAuth-like server behind a `StubTransport`: `POST …/auth/refresh` rotates
/// single-use refresh tokens; every other path is a protected resource that answers 200 for a
/// currently valid access token and 401 otherwise. (The auth unit tests have a richer twin with
/// gates and failing refresh modes.)
final class FakeTokenServer: Sendable {
    static let tokenURL = TransfersFixture.baseURL.appendingPathComponent("auth/refresh")

    private struct State: Sendable {
        var serial = 1
        var validAccess: Set<String> = []
        var liveRefresh: Set<String> = []
        var refreshCalls = 0
        var resourceStatuses: [Int] = []
    }

    private let state = Locked(State())
    /// Base time for the `exp` of issued tokens (they expire an hour later).
    let now: Date

    init(now: Date = Date()) { self.now = now }

    /// Issues a token pair as after a sign-in.
    func signIn(accessExpiresAt: Date? = nil) -> AuthTokens {
        state.withLock { issue(&$0, expiresAt: accessExpiresAt ?? now.addingTimeInterval(3600)) }
    }

    var refreshCalls: Int { state.withLock { $0.refreshCalls } }
    /// Makes every access token issued so far invalid (as if the server expired them).
    func expireAllAccessTokens() { state.withLock { $0.validAccess.removeAll() } }
    /// Statuses the next resource requests answer with before normal handling resumes.
    func enqueueResourceStatuses(_ statuses: Int...) { state.withLock { $0.resourceStatuses += statuses } }

    /// A transport answering from this server.
    func makeTransport() -> StubTransport {
        StubTransport { [self] request in self.handle(request) }
    }

    func handle(_ request: URLRequest) -> HTTPResponse {
        if request.url?.path.hasSuffix("/auth/refresh") == true { return refresh(request) }
        return state.withLock { state in
            if !state.resourceStatuses.isEmpty { return .status(state.resourceStatuses.removeFirst()) }
            let header = request.value(forHTTPHeaderField: "Authorization") ?? ""
            let token = header.hasPrefix("Bearer ") ? String(header.dropFirst(7)) : ""
            guard state.validAccess.contains(token) else {
                return .json(
                    #"{"error":"invalid_token"}"#, status: 401,
                    headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
            }
            return .json(#"{"ok":true}"#)
        }
    }

    /// A token manager sending refreshes to `transport`, keeping tokens in `store`.
    static func tokenManager(
        _ transport: StubTransport, store: any TokenStore, now: @escaping @Sendable () -> Date = { Date() }
    ) -> TokenManager {
        TokenManager(store: store, transport: transport, grant: .oauth2(tokenURL: tokenURL), now: now)
    }

    private func issue(_ state: inout State, expiresAt: Date) -> AuthTokens {
        let serial = state.serial
        state.serial += 1
        let access = Self.jwt(expiresAt: expiresAt, id: "jti-\(serial)")
        let refresh = "refresh-\(serial)"
        state.validAccess.insert(access)
        state.liveRefresh.insert(refresh)
        return AuthTokens(accessToken: access, refreshToken: refresh)
    }

    private func refresh(_ request: URLRequest) -> HTTPResponse {
        let body = String(decoding: request.httpBody ?? Data(), as: UTF8.self)
        var presented: String?
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2, parts[0] == "refresh_token" { presented = parts[1].removingPercentEncoding ?? parts[1] }
        }
        return state.withLock { state in
            state.refreshCalls += 1
            guard let presented, state.liveRefresh.remove(presented) != nil else {
                return .json(#"{"error":"invalid_grant","error_description":"Refresh token already used"}"#, status: 400)
            }
            let tokens = issue(&state, expiresAt: now.addingTimeInterval(3600))
            return .json(
                #"{"access_token":"\#(tokens.accessToken)","refresh_token":"\#(tokens.refreshToken ?? "")","token_type":"Bearer","expires_in":3600}"#
            )
        }
    }

    /// An unsigned JWT-shaped token with `exp` and `jti` claims (the client never verifies).
    private static func jwt(expiresAt: Date, id: String) -> String {
        func encode(_ json: String) -> String {
            Data(json.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let header = encode(#"{"alg":"HS256","typ":"JWT"}"#)
        let payload = encode(#"{"sub":"alice","exp":\#(expiresAt.timeIntervalSince1970),"jti":"\#(id)"}"#)
        return "\(header).\(payload).c2lnbmF0dXJl"
    }
}
