import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

/// The auth unit tests, grouped in extensions.
enum AuthTests {}

/// Shared helpers for the auth unit tests.
enum AuthFixture {
    static let baseURL = URL(string: "https://api.example.test/v1")!
    static let environment = APIEnvironment(name: "auth-unit", baseURL: baseURL)
    static let tokenURL = baseURL.appendingPathComponent("auth/refresh")

    /// An unsigned JWT-shaped token with `exp` and `jti` claims (the client never verifies).
    static func jwt(expiresAt: Date, id: String) -> String {
        func encode(_ json: String) -> String {
            Data(json.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let header = encode(#"{"alg":"HS256","typ":"JWT"}"#)
        let payload = encode(#"{"sub":"alice","exp":\#(expiresAt.timeIntervalSince1970),"jti":"\#(id)"}"#)
        return "\(header).\(payload).c2lnbmF0dXJl"
    }

    /// Polls `condition` until it holds: at most `attempts` checks, 1 ms apart (bounded in count and time).
    static func eventually(
        attempts: Int = 5000,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: () async -> Bool
    ) async {
        for _ in 0..<attempts {
            if await condition() { return }
            try? await Task.sleep(for: .milliseconds(1))
        }
        Issue.record("condition not met after \(attempts) checks", sourceLocation: sourceLocation)
    }
}

/// A one-shot barrier: `wait()` suspends until `open()`.
actor AsyncGate {
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func open() {
        isOpen = true
        for continuation in waiting { continuation.resume() }
        waiting.removeAll()
    }
}

/// An in-process OAuth-like server behind a `StubTransport`: `POST …/auth/refresh` rotates
/// single-use refresh tokens; every other path is a protected resource that answers 200 for a
/// currently valid access token and 401 otherwise.
final class FakeAuthServer: Sendable {
    enum RefreshMode: Sendable {
        case normal
        case status(Int, body: String)
        case transportError(URLError.Code)
    }

    private struct State: Sendable {
        var serial = 1
        var validAccess: Set<String> = []
        var liveRefresh: Set<String> = []
        var refreshCalls = 0
        var refreshMode = RefreshMode.normal
        var resourceStatuses: [Int] = []
    }

    private let state = Locked(State())
    let refreshGate: AsyncGate?
    let resourceGate: AsyncGate?
    let now: Date

    /// - Parameters:
    ///   - refreshGate: When given, every refresh waits for it to open before answering.
    ///   - resourceGate: When given, every resource request waits for it to open before its
    ///     token is checked (so a test can have many requests in flight with the same token).
    ///   - now: Base time for the `exp` of issued tokens (they expire an hour later).
    init(refreshGate: AsyncGate? = nil, resourceGate: AsyncGate? = nil, now: Date = Date()) {
        self.refreshGate = refreshGate
        self.resourceGate = resourceGate
        self.now = now
    }

    /// Issues a token pair as after a sign-in.
    func signIn(accessExpiresAt: Date? = nil) -> AuthTokens {
        state.withLock { issue(&$0, expiresAt: accessExpiresAt ?? now.addingTimeInterval(3600)) }
    }

    private func issue(_ state: inout State, expiresAt: Date) -> AuthTokens {
        let serial = state.serial
        state.serial += 1
        let access = AuthFixture.jwt(expiresAt: expiresAt, id: "jti-\(serial)")
        let refresh = "refresh-\(serial)"
        state.validAccess.insert(access)
        state.liveRefresh.insert(refresh)
        return AuthTokens(accessToken: access, refreshToken: refresh)
    }

    var refreshCalls: Int { state.withLock { $0.refreshCalls } }
    func setRefreshMode(_ mode: RefreshMode) { state.withLock { $0.refreshMode = mode } }
    /// Makes every access token issued so far invalid (as if the server expired them).
    func expireAllAccessTokens() { state.withLock { $0.validAccess.removeAll() } }
    /// Statuses the next resource requests answer with before normal handling resumes.
    func enqueueResourceStatuses(_ statuses: Int...) { state.withLock { $0.resourceStatuses += statuses } }
    func isLive(refreshToken: String) -> Bool { state.withLock { $0.liveRefresh.contains(refreshToken) } }

    /// A transport answering from this server and recording what it was sent.
    func makeTransport() -> StubTransport {
        StubTransport { [self] request in try await self.handle(request) }
    }

    func handle(_ request: URLRequest) async throws -> HTTPResponse {
        if request.url?.path.hasSuffix("/auth/refresh") == true {
            return try await refresh(request)
        }
        if let resourceGate { await resourceGate.wait() }
        return state.withLock { state in
            if !state.resourceStatuses.isEmpty { return .status(state.resourceStatuses.removeFirst()) }
            let header = request.value(forHTTPHeaderField: "Authorization") ?? ""
            let token = header.hasPrefix("Bearer ") ? String(header.dropFirst(7)) : ""
            guard state.validAccess.contains(token) else {
                return .json(
                    #"{"error":"invalid_token"}"#, status: 401,
                    headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
            }
            let id = JSONWebToken.claims(of: token)?.id ?? "?"
            return .json(#"{"jti":"\#(id)"}"#)
        }
    }

    private func refresh(_ request: URLRequest) async throws -> HTTPResponse {
        let mode = state.withLock { state -> RefreshMode in
            state.refreshCalls += 1
            return state.refreshMode
        }
        if let refreshGate { await refreshGate.wait() }
        switch mode {
        case .status(let status, let body):
            return .json(body, status: status)
        case .transportError(let code):
            throw URLError(code)
        case .normal:
            break
        }
        let body = String(decoding: request.httpBody ?? Data(), as: UTF8.self)
        let fields = Dictionary(
            body.split(separator: "&").map { pair -> (String, String) in
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                return (parts[0], parts.count > 1 ? (parts[1].removingPercentEncoding ?? parts[1]) : "")
            }, uniquingKeysWith: { first, _ in first })
        return state.withLock { state in
            guard let presented = fields["refresh_token"], state.liveRefresh.remove(presented) != nil else {
                return .json(#"{"error":"invalid_grant","error_description":"Refresh token already used"}"#, status: 400)
            }
            let tokens = issue(&state, expiresAt: now.addingTimeInterval(3600))
            return .json(
                #"{"access_token":"\#(tokens.accessToken)","refresh_token":"\#(tokens.refreshToken ?? "")","token_type":"Bearer","expires_in":3600}"#
            )
        }
    }

    /// A token manager sending refreshes to `transport`, keeping tokens in `store`.
    static func tokenManager(
        _ transport: StubTransport, store: any TokenStore, leeway: Duration = .seconds(30),
        now: @escaping @Sendable () -> Date = { Date() }
    ) -> TokenManager {
        TokenManager(store: store, transport: transport, grant: .oauth2(tokenURL: AuthFixture.tokenURL), leeway: leeway, now: now)
    }
}
