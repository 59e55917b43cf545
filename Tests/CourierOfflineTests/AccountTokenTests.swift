import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
@testable import CourierOffline

/// A queued mutation goes out only with a token of the account it was made in: an account switch
/// while it is on its way (a token refresh inside its send, or between the queue's account check
/// and the auth step) never sends it with the next user's token. The proof is the stub server's
/// record of the bearer token each mutation arrived with (every token names its user: `u1-…`).
@Suite("Queued mutations carry only their own account's token", .timeLimit(.minutes(1)))
struct AccountTokenTests {
    /// A one-shot barrier: `wait()` suspends until `open()` (bounded by the suite's time limit).
    actor Gate {
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

    /// One mutation request as the server received it.
    struct Arrival: Sendable, Equatable {
        var key: String
        var token: String
        var status: Int
        var user: String { String(token.prefix(while: { $0 != "-" })) }
    }

    /// The API and its token endpoint behind a `StubTransport`. `POST /oauth/token` answers a new
    /// token pair of the user whose refresh token it got (after `refreshGate` opens, when set);
    /// `/mutations` answers 201 (or 401 for the tokens in `refused`) and records the token.
    final class Server: Sendable {
        struct State: Sendable {
            var arrivals: [Arrival] = []
            var refreshes = 0
            var refused: Set<String> = []
            var refreshGate: Gate?
        }
        private let state: Locked<State>
        /// Opened when the first refresh request arrives.
        let refreshStarted: Gate
        let transport: StubTransport

        init() {
            let state = Locked(State())
            let refreshStarted = Gate()
            self.state = state
            self.refreshStarted = refreshStarted
            transport = StubTransport { request in
                try await Self.answer(request, state: state, refreshStarted: refreshStarted)
            }
        }

        var arrivals: [Arrival] { state.current.arrivals }

        func holdRefreshes(until gate: Gate) { state.withLock { $0.refreshGate = gate } }
        func refuse(_ token: String) { state.withLock { _ = $0.refused.insert(token) } }

        private static func answer(_ request: URLRequest, state: Locked<State>, refreshStarted: Gate) async throws -> HTTPResponse
        {
            let path = request.url?.path ?? ""
            if path.hasSuffix("/oauth/token") {
                let form = String(decoding: request.httpBody ?? Data(), as: UTF8.self)
                let user = form.components(separatedBy: "refresh_token=").dropFirst().first?.prefix(while: { $0 != "-" })
                let (gate, serial) = state.withLock { state -> (Gate?, Int) in
                    state.refreshes += 1
                    return (state.refreshGate, state.refreshes)
                }
                await refreshStarted.open()
                if let gate { await gate.wait() }
                guard let user else { return .status(400) }
                let body =
                    #"{"access_token":"\#(user)-refreshed\#(serial)","token_type":"Bearer","expires_in":3600,"refresh_token":"\#(user)-rt-r\#(serial)"}"#
                return HTTPResponse(
                    statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8), url: request.url)
            }
            let authorization = request.value(forHTTPHeaderField: "Authorization") ?? ""
            let token = authorization.hasPrefix("Bearer ") ? String(authorization.dropFirst(7)) : "none"
            let key = request.value(forHTTPHeaderField: "Idempotency-Key") ?? ""
            let status = state.withLock { state -> Int in
                let status = state.refused.contains(token) ? 401 : 201
                state.arrivals.append(Arrival(key: key, token: token, status: status))
                return status
            }
            return .status(status)
        }
    }

    /// Holds the first request to `/mutations` before the auth step (the outermost interceptor)
    /// until `release` opens: the moment between the queue's account check and the send.
    final class HoldBeforeAuth: Interceptor {
        let reached = Gate()
        let release = Gate()
        private let held = Locked(false)
        var capabilities: PipelineCapabilities { [] }

        func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
            let first = held.withLock { held -> Bool in
                defer { held = true }
                return !held
            }
            if first, request.url?.path.contains("/mutations") == true {
                await reached.open()
                await release.wait()
            }
            return try await next(request)
        }
    }

    /// How the app switches accounts while a u1 mutation is on its way.
    enum Switch: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Signs u2 in over u1's session (no sign-out first).
        case signInU2
        /// Signs u1 out, then u2 in.
        case signOutThenSignInU2
        /// u1 out, u2 in, u2 out, u1 in again (with new tokens).
        case roundTripBackToU1
        /// Signs u1 out only.
        case signOutOnly

        var testDescription: String { rawValue }
    }

    /// When the switch happens.
    enum Moment: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// While the token refresh the send started (u1's token had expired) is in flight.
        case duringProactiveRefresh
        /// While the refresh after the server answered u1's request 401 is in flight.
        case duringRefreshAfter401
        /// After the queue checked the account, before the auth step reads the token.
        case betweenAccountCheckAndAuth

        var testDescription: String { rawValue }
    }

    static let environment = APIEnvironment(name: "accounts", baseURL: URL(string: "https://api.example.test")!)
    static let tokenURL = URL(string: "https://api.example.test/oauth/token")!

    static func tokens(_ user: String, _ tag: String, expired: Bool = false) -> AuthTokens {
        AuthTokens(
            accessToken: "\(user)-\(tag)", refreshToken: "\(user)-rt-\(tag)",
            expiresAt: Date().addingTimeInterval(expired ? -60 : 3600))
    }

    /// The app's sign-in state: its account (what the queue records) and the token manager,
    /// switched in the documented order — the account says nobody while the sign-in changes.
    struct App {
        let account = Locked<String?>(nil)
        let tokens: TokenManager

        func signIn(_ user: String, _ tag: String, expired: Bool = false) async throws {
            account.set(nil)
            try await tokens.signIn(AccountTokenTests.tokens(user, tag, expired: expired))
            account.set(user)
        }

        func signOut() async throws {
            account.set(nil)
            try await tokens.signOut()
        }

        func perform(_ change: Switch) async throws {
            switch change {
            case .signInU2:
                try await signIn("u2", "a")
            case .signOutThenSignInU2:
                try await signOut()
                try await signIn("u2", "a")
            case .roundTripBackToU1:
                try await signOut()
                try await signIn("u2", "a")
                try await signOut()
                try await signIn("u1", "again")
            case .signOutOnly:
                try await signOut()
            }
        }
    }

    static func makeQueue(
        _ dir: TemporaryDirectory, server: Server, app: App, extra: [any Interceptor] = []
    ) throws -> MutationQueue {
        let client = APIClient(environment: environment) {
            $0.transport = server.transport
            $0.interceptors =
                extra + .standard(tokenManager: app.tokens, retry: RetryInterceptor(budget: nil, circuitBreaker: nil))
        }
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        configuration.defaultKind = .init(policy: .authorizedWrite.with(\.retry, .none))
        let account = app.account
        configuration.account = { account.current }
        return try MutationQueue(path: dir.path("queue.sqlite"), client: client, configuration: configuration)
    }

    @Test(arguments: Moment.allCases, Switch.allCases)
    func aSwitchWhileAMutationIsOnItsWayNeverSendsItWithAnotherAccountsToken(moment: Moment, change: Switch) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let server = Server()
        let app = App(tokens: TokenManager(store: InMemoryTokenStore(), grant: .oauth2(tokenURL: Self.tokenURL)))
        let hold = HoldBeforeAuth()
        let queue = try Self.makeQueue(dir, server: server, app: app, extra: moment == .betweenAccountCheckAndAuth ? [hold] : [])
        try await app.signIn("u1", "a", expired: moment == .duringProactiveRefresh)
        if moment == .duringRefreshAfter401 { server.refuse("u1-a") }
        try await queue.enqueue(.json(id: "m1", method: .post, path: "/mutations", body: ["amount": 100]))

        let refreshGate = Gate()
        if moment != .betweenAccountCheckAndAuth { server.holdRefreshes(until: refreshGate) }
        let flush = Task { try await queue.flush() }
        switch moment {
        case .duringProactiveRefresh, .duringRefreshAfter401:
            await server.refreshStarted.wait()
            try await app.perform(change)
            await refreshGate.open()
        case .betweenAccountCheckAndAuth:
            await hold.reached.wait()
            try await app.perform(change)
            await hold.release.open()
        }
        _ = try await flush.value
        #expect(server.arrivals.allSatisfy { $0.user == "u1" }, "u1's mutation arrived with \(server.arrivals)")

        // While another account (or nobody) is signed in, the mutation waits and is not sent.
        let whileAway = try await queue.flush()
        #expect(server.arrivals.allSatisfy { $0.user == "u1" }, "u1's mutation arrived with \(server.arrivals)")
        if change != .roundTripBackToU1 {
            #expect(whileAway.sent == 0)
            #expect(try await queue.pending().map(\.mutation.id) == ["m1"])
            try await app.signIn("u1", "back")
        }

        // Back under u1: delivered once, with u1's token.
        _ = try await queue.flush()
        #expect(try await queue.pending().isEmpty)
        let delivered = server.arrivals.filter { $0.status == 201 }
        #expect(delivered.count == 1)
        #expect(delivered.allSatisfy { $0.user == "u1" && $0.key == "m1" })
        #expect(server.arrivals.allSatisfy { $0.user == "u1" })
    }

    /// A u2 mutation enqueued after the switch goes with u2's token while u1's waits.
    @Test func theNextAccountsMutationsGoWithItsTokenWhileThePreviousAccountsWait() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let server = Server()
        let app = App(tokens: TokenManager(store: InMemoryTokenStore(), grant: .oauth2(tokenURL: Self.tokenURL)))
        let hold = HoldBeforeAuth()
        let queue = try Self.makeQueue(dir, server: server, app: app, extra: [hold])
        try await app.signIn("u1", "a")
        try await queue.enqueue(.json(id: "m1", method: .post, path: "/mutations", body: ["amount": 100]))
        let flush = Task { try await queue.flush() }
        await hold.reached.wait()
        try await app.perform(.signInU2)
        await hold.release.open()
        _ = try await flush.value
        try await queue.enqueue(.json(id: "m2", method: .post, path: "/mutations", body: ["amount": 5]))
        let report = try await queue.flush()
        #expect(report.sent == 1 && report.held == 1)
        #expect(server.arrivals == [Arrival(key: "m2", token: "u2-a", status: 201)])
        try await app.signIn("u1", "back")
        #expect(try await queue.flush().sent == 1)
        #expect(server.arrivals.map(\.token) == ["u2-a", "u1-back"])
        #expect(server.arrivals.map(\.key) == ["m2", "m1"])
    }
}
