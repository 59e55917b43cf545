import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Owns the signed-in session: hands out a valid access token, refreshes it — once, however many
/// requests need it at the same moment — and ends the session when the refresh token is refused.
///
/// **Proactive refresh.** ``validAccessToken()`` refreshes before sending when the token expires
/// within `leeway` (``AuthTokens/accessTokenExpiry``: the token response's `expires_in` from
/// local receipt, or the JWT `exp` claim, RFC 7519 §4.1.4, corrected by the server's `Date`; the
/// client never verifies the token — the server does). A skewed device clock never causes more
/// than one refresh per real expiry: a token that arrives already looking expired is not
/// refreshed proactively again (a 401 still refreshes it once). If that refresh fails
/// transiently while the token is still valid, the current token is used.
///
/// **Single flight.** At most one refresh runs at a time; every caller that needs a token
/// meanwhile waits for that one. A caller whose request came back 401 passes the token it sent
/// to `refresh(failedToken:)`: if the stored token already differs, someone refreshed in
/// between and the stored token is returned without another refresh. Waiting is cancellable per
/// caller; the refresh itself keeps running for the others.
///
/// **Straight to the transport.** The refresh request (built by ``RefreshTokenGrant``) is sent
/// with the transport directly, never through the pipeline, so a 401 from the token endpoint
/// cannot start another refresh. A refresh that failed is not repeated by the calls that waited
/// for it: each ends with its error (``RetryInterceptor`` does not retry the auth step's failures,
/// nor count them against the API's host). Its answer stops at 1 MiB once decoded
/// (``NetworkError/responseTooLarge(limit:)``): the client's `maximumResponseBodySize` is the
/// pipeline's, and a compression bomb from the token endpoint must not be held whole.
///
/// **Outcomes.** A refused refresh token (``TokenRefreshRejection``: `invalid_grant`, or a
/// 400/401 from the token endpoint, or a token of another type than Bearer) clears the store, publishes ``SessionEvent/sessionExpired(_:)``
/// and fails every waiter with ``NetworkError/sessionExpired`` — unless the store then holds
/// other tokens than this process last read or wrote there, with another refresh token than the
/// refused one: another process (an app extension) refreshed or signed in meanwhile, and those
/// tokens are used as ``reloadFromStore()`` would take them in, without ending the session. A transient failure (offline,
/// timeout, 5xx) fails the waiters with the matching ``NetworkError`` and keeps the user signed in.
///
/// **Hold after a transient failure.** When the token endpoint is in trouble — a 408, 429 or 5xx
/// answer, a time-out, a refused or lost connection — the manager sends no refresh for a while:
/// the endpoint's `Retry-After` when it sent one (at most 5 minutes), else 0.5–1 s after a first
/// failure, doubling with each failure in a row up to 15–30 s (a ``Backoff`` with equal jitter).
/// Meanwhile a call that needs a refresh fails at once with
/// ``NetworkError/backendUnavailable(host:retryAfter:)`` (the token endpoint's host, the rest of
/// the hold) and sends nothing — unless its token is still valid, which it then uses. A token the
/// API answered 401 for is not sent again: after the hold, the next call refreshes first. The hold
/// runs on `now` (a clock set back ends it) and ends with a new sign-in, a sign-out or tokens
/// another process stored; a refresh that failed because the device is offline sets none.
///
/// Tokens are cached in memory after the first read; the ``TokenStore`` is written on every
/// change. A write (or clear) that failed is tried again by the next ``validAccessToken()`` or
/// refresh — one attempt per call until one succeeds, each failure published as
/// ``SessionEvent/storeFailed(_:)`` — so a rotated refresh token reaches the store once it can
/// be written. Call ``reloadFromStore()`` if another process (an app extension) may have changed it:
/// when it signed another user in (or out), requests and a refresh of the earlier sign-in end
/// there (see ``reloadFromStore()``).
///
/// The store's reads and writes block (a file store syncs each write to disk, the Keychain is a
/// synchronous API), so the manager runs on a serial dispatch queue of its own, never on Swift's
/// cooperative pool.
public actor TokenManager {
    /// Internal so a client built for an `EnvironmentSet` can check environments do not share it.
    let store: any TokenStore
    /// The store's lock across processes, taken around every refresh (``TokenStore/refreshLock``).
    private let refreshLock: TokenRefreshLock?
    /// The transport the refresh goes through: the one given to `init`, else the transport of the
    /// first client whose pipeline holds this manager's ``AuthInterceptor``.
    private nonisolated let transport: Locked<(any Transport)?>
    /// The clock a refresh's time limit runs on: the client's (``adoptTransport(_:clock:)``), else
    /// the continuous clock.
    private nonisolated let refreshClock = Locked<(any Clock<Duration>)?>(nil)
    /// The environment of the client holding this manager when it was adopted, and its current
    /// one (``adoptEnvironment(_:)``).
    private nonisolated let laneEnvironment = Locked<(adopted: APIEnvironment, current: @Sendable () -> APIEnvironment)?>(nil)
    private let grant: RefreshTokenGrant
    /// How long before expiry the access token is refreshed proactively: the `leeway` given to
    /// `init`, 30 s by default. A token whose expiry is within `leeway` counts as expired — except
    /// that the leeway never exceeds half the token's lifetime when that is known (the JWT's `exp`
    /// minus its `iat`, or the expiry minus when this manager received the token), so a token that
    /// lives 40 s is refreshed 20 s before it expires instead of on every call.
    public let leeway: Duration
    private let now: @Sendable () -> Date
    private let broadcaster = EventBroadcaster<SessionEvent>()
    private nonisolated let executor = BlockingWorkExecutor(label: "courier.auth.token-manager")

    /// The serial dispatch queue the manager (and its ``TokenStore`` calls) runs on.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// `nil` until the store was read; then the cached tokens (`.some(nil)` when signed out).
    private var cache: AuthTokens??
    /// What the store holds as far as this process knows: what it last read there or wrote
    /// there successfully; `nil` when unknown. A store read that finds something else was
    /// written by another process.
    private var stored: AuthTokens??
    /// Set by ``reloadFromStore()`` until the store was read again (a read that failed is
    /// tried again, and its error thrown, by the next call that needs the tokens).
    private var reloadPending = false
    /// Bumped by sign-in, sign-out, session expiry and a reload that finds another sign-in
    /// stored: a refresh started in an older generation must not store its result, and a
    /// request sent in an older one is not sent again.
    private var generation = 0
    private var inFlight: Task<Void, Never>?
    private var waiters: [UUID: CheckedContinuation<String, any Error>] = [:]
    /// The access token a refresh returned already due for refresh (see `needsRefresh`).
    private var expiredOnArrival: String?
    /// The access token this manager received last (sign-in or refresh) and when, by `now`.
    private var received: (accessToken: String, at: Date)?
    /// After a transient refresh failure: no refresh is sent before `until` (by `now`), and calls
    /// that need one fail at once. Ends early when `now` goes back before `since` (a clock set
    /// back), with a new session, or with tokens another process stored.
    private var hold: (since: Date, until: Date, host: String)?
    /// Transient refresh failures in a row: the `n` of ``refreshHoldBackoff``.
    private var transientFailures = 0
    /// The access token a server answered 401 for, while no refresh replaced it yet: never sent
    /// again, and refreshed before the next call even when its expiry is unknown.
    private var refusedAccessToken: String?

    /// The hold after a transient refresh failure when the token endpoint sent no `Retry-After`:
    /// 0.5–1 s after the first failure in a row (equal jitter: devices that failed together do
    /// not come back together), doubling per further failure up to 15–30 s.
    package static let refreshHoldBackoff = Backoff(initialDelay: .seconds(1), maximumDelay: .seconds(30), jitter: .equal)
    /// The longest hold a token endpoint's `Retry-After` sets (the ``CircuitBreaker``'s default
    /// ``CircuitBreaker/maximumPause``, 5 minutes): one misconfigured answer never keeps the app
    /// from refreshing for longer.
    package static let maximumRefreshHold = CircuitBreaker.standard.maximumPause

    /// What must be forgotten when a session ends (the cached responses of a standard pipeline
    /// whose cache is not partitioned per account), run in order by ``sessionEnded()``.
    private nonisolated let sessionEndActions = Locked<[@Sendable () async -> Void]>([])
    /// How the last session ended while nobody signed in since: ``NetworkError/sessionExpired``
    /// (its refresh token refused) or ``NetworkError/signedOut``; `nil` while a session runs.
    private var sessionEnd: NetworkError?
    /// The running (or finished) forgetting of the last session that ended: no access token of
    /// a later session is handed out before it finished.
    private var sessionEndWork: Task<Void, Never>?
    /// ``currentSession`` and how many session-end works run, readable without a hop to the
    /// manager's executor (a thread of its own): the cache and de-duplication steps read them on
    /// every authorized call. Written on the actor, with `generation` and `sessionEndWork`.
    private nonisolated let published = Locked<(generation: Int, endsRunning: Int)>((0, 0))

    /// Number of refresh requests this manager has sent (for metrics, demos and benchmarks).
    package private(set) var refreshCount = 0

    /// Creates a manager.
    ///
    /// - Parameters:
    ///   - store: Where the tokens persist.
    ///   - transport: Sends the refresh request. `nil` (the default) uses the transport of the
    ///     client whose pipeline holds this manager's ``AuthInterceptor`` — one connection pool and
    ///     one cookie jar, wired once. Pass one only to refresh through a different transport.
    ///   - grant: How the refresh request is built and its answer read.
    ///   - leeway: Refresh proactively when the access token expires within this time; 30 s by
    ///     default (covers clock skew and the request's own travel time), capped at half the
    ///     token's lifetime when that is known (see ``leeway``). Zero refreshes only tokens
    ///     already expired by the local clock.
    ///   - now: The wall clock compared with token expiry, and the one a refreshed token's
    ///     `expires_in` counts from (with ``RefreshTokenGrant/oauth2(tokenURL:encoding:clientID:scope:additionalParameters:timeout:)``;
    ///     a custom ``RefreshTokenGrant/parseResponse`` reads its own); injectable for tests.
    public init(
        store: any TokenStore,
        transport: (any Transport)? = nil,
        grant: RefreshTokenGrant,
        leeway: Duration = .seconds(30),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.refreshLock = store.refreshLock
        self.transport = Locked(transport)
        self.grant = grant
        self.leeway = leeway
        self.now = now
    }

    /// Uses `transport` for refreshes unless one was given to `init` or adopted before, and
    /// `clock` for their time limit unless one was adopted before.
    nonisolated func adoptTransport(_ transport: any Transport, clock: any Clock<Duration>) {
        self.transport.withLock { current in
            if current == nil { current = transport }
        }
        refreshClock.withLock { current in
            if current == nil { current = clock }
        }
    }

    /// Takes the environment of the client that holds this manager (the first client's), read at
    /// each refresh: a refresh through a transport that does not enforce its pins never goes to a
    /// host they pin (``PinningFailure/transportIgnoresPins(host:)``), and once a plain client
    /// switched to another origin, a refresh is never sent to a token endpoint on an origin of the
    /// environment it left (the next server's refresh token would reach the previous one).
    nonisolated func adoptEnvironment(_ environment: @escaping @Sendable () -> APIEnvironment) {
        let adopted = environment()
        laneEnvironment.withLock { current in
            if current == nil { current = (adopted, environment) }
        }
    }

    deinit {
        inFlight?.cancel()
        broadcaster.finish()
    }

    // MARK: Observing

    /// A stream of session events from now on. Any number of observers may subscribe; each
    /// stream keeps its newest 32 unconsumed events and ends when the manager is released.
    public nonisolated func events() -> AsyncStream<SessionEvent> {
        broadcaster.subscribe()
    }

    /// Registers `action` to run whenever a session ends — a sign-out, a session expiry, a new
    /// sign-in, another sign-in (or a sign-out) found in the store — before any access token of the
    /// next session is handed out. The standard pipeline registers its cache's clearing here.
    package nonisolated func onSessionEnd(_ action: @escaping @Sendable () async -> Void) {
        sessionEndActions.withLock { $0.append(action) }
    }

    /// How a request's session ended, for a request whose 401 came after it did: its sign-in
    /// is over, and nobody else signed in since. ``NetworkError/sessionExpired`` after a refused
    /// refresh token, ``NetworkError/signedOut`` after a sign-out; `nil` when another sign-in
    /// began (the request's 401 is then its answer: sent again, it would act as that user).
    package func outcome(ofEnded session: Int) -> NetworkError? {
        session == generation ? nil : sessionEnd
    }

    /// Ends the current session (a sign-in, a sign-out, an expiry, another sign-in found in the
    /// store): a new generation, the session-end actions started, the refresh hold and the refresh
    /// in flight abandoned. `endedBy`: how the session ended while nobody is signed in after it
    /// (see ``outcome(ofEnded:)``); `nil` when a new sign-in begins.
    private func startNewSession(endedBy: NetworkError?) {
        generation += 1
        sessionEnded()
        // After the session-end work is counted: whoever sees the new sign-in also sees the work
        // that must finish before it reads the shared cache.
        published.withLock { $0.generation = generation }
        sessionEnd = endedBy
        endHold()
        inFlight?.cancel()
        inFlight = nil
    }

    /// Starts the session-end actions, after those of an earlier end still running.
    private func sessionEnded() {
        let actions = sessionEndActions.withLock { $0 }
        guard !actions.isEmpty else { return }
        let earlier = sessionEndWork
        let published = self.published
        published.withLock { $0.endsRunning += 1 }
        sessionEndWork = Task {
            await earlier?.value
            for action in actions { await action() }
            published.withLock { $0.endsRunning -= 1 }
        }
    }

    /// Waits until what the last session that ended left is forgotten. Cancelling the calling
    /// task ends the wait, not the work: a background revalidation the cache's clearing cancels
    /// and waits for must not wait here for that clearing in turn.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled while waiting.
    private func awaitSessionEnd() async throws {
        guard let work = sessionEndWork else { return }
        struct Waiting: Sendable {
            var continuation: CheckedContinuation<Void, any Error>?
            var cancelled = false
        }
        let waiting = Locked(Waiting())
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = waiting.withLock { waiting in
                    if !waiting.cancelled { waiting.continuation = continuation }
                    return waiting.cancelled
                }
                if cancelled { return continuation.resume(throwing: CancellationError()) }
                Task {
                    await work.value
                    waiting.withLock { waiting in
                        defer { waiting.continuation = nil }
                        return waiting.continuation
                    }?.resume()
                }
            }
        } onCancel: {
            waiting.withLock { waiting in
                waiting.cancelled = true
                defer { waiting.continuation = nil }
                return waiting.continuation
            }?.resume(throwing: CancellationError())
        }
        if sessionEndWork == work { sessionEndWork = nil }
    }

    /// Waits until what the last session that ended left is forgotten (the standard pipeline's
    /// clearing of a cache partition shared by every account); returns at once when nothing runs.
    /// For a cache read, which never reaches the auth step when it is answered from the cache:
    /// made once ``signIn(_:)`` or ``signOut()`` returned, it must not find the previous user's
    /// entries.
    ///
    /// - Returns: The sign-in (see ``currentSession``) current when the wait began if another
    ///   sign-in (or a sign-out) came while waiting, else `nil`: a call made then belongs to
    ///   that sign-in, not to the next one.
    /// - Throws: `CancellationError` when the calling task is cancelled while waiting.
    package nonisolated func awaitForgottenSession() async throws -> Int? {
        let (entered, running) = published.withLock { ($0.generation, $0.endsRunning) }
        guard running > 0 else { return nil }  // nothing to wait for: no hop to the manager
        try await awaitSessionEnd()
        return currentSession == entered ? nil : entered
    }

    /// Whether tokens are stored.
    ///
    /// - Throws: ``TokenStoreError`` when the store cannot be read.
    public func isSignedIn() throws -> Bool {
        try cachedTokens() != nil
    }

    // MARK: Session lifecycle

    /// Stores the tokens of a new sign-in and publishes ``SessionEvent/signedIn``. Requests waiting
    /// for a refresh get the new access token. Tokens without an ``AuthTokens/grantID`` get a new
    /// one, which their refreshes keep.
    ///
    /// - Throws: ``TokenStoreError`` when the store cannot be written (the tokens are still used
    ///   from memory for this process, and written by the next call that needs a token).
    public func signIn(_ tokens: AuthTokens) throws {
        var tokens = tokens
        if tokens.grantID == nil { tokens.grantID = UUID().uuidString }
        startNewSession(endedBy: nil)
        cache = .some(tokens)
        received = (tokens.accessToken, now())
        resumeWaiters(with: .success(tokens.accessToken))
        broadcaster.publish(.signedIn)
        try write(tokens)
    }

    /// Forgets the tokens and publishes ``SessionEvent/signedOut``. Requests waiting for a refresh
    /// end with ``NetworkError/signedOut``, as a request that starts after the sign-out does (their
    /// tasks were not cancelled: a screen still waiting shows the signed-out state).
    ///
    /// - Throws: ``TokenStoreError`` when the store cannot be cleared (the tokens are forgotten in
    ///   memory regardless, and the store is cleared by the next call that needs a token).
    public func signOut() throws {
        startNewSession(endedBy: .signedOut)
        cache = .some(nil)
        resumeWaiters(with: .failure(NetworkError.signedOut))
        broadcaster.publish(.signedOut)
        try write(nil)
    }

    /// Reads the ``TokenStore`` again, for when another process (an app extension) may have
    /// changed it.
    ///
    /// - A refresh by the other process is adopted: the next call uses the stored tokens. A refresh
    ///   is stored tokens of the same ``AuthTokens/grantID`` — a rotated refresh token included —
    ///   or, when either side has none (tokens written before Courier kept it), the first refresh
    ///   of those tokens (its grant ID derived from the refresh token it spent), the same refresh
    ///   token (or none on either side and the same access token).
    /// - Anything else is another sign-in (or a sign-out). It starts a new session, as ``signIn(_:)`` does:
    ///   a refresh in flight is abandoned (its tokens are neither stored nor handed out), requests
    ///   waiting for it get the stored access token (or ``NetworkError/signedOut``), and a request
    ///   sent before is never sent again with the stored token — its 401 is the answer. No
    ///   ``SessionEvent`` is published: the other process changed the session, not this one.
    ///
    /// When the store cannot be read now, the next call that needs the tokens reads it again and
    /// throws its ``TokenStoreError``.
    public func reloadFromStore() {
        reloadPending = true
        do {
            _ = try cachedTokens()
        } catch {
            // Not lost: `reloadPending` stays set, so the next call that needs the tokens reads
            // the store again and throws this error to its caller.
        }
    }

    // MARK: Tokens

    /// The access token to send now, refreshed first when it expires within `leeway`.
    ///
    /// - Returns: The token, or `nil` when nobody is signed in.
    /// - Throws: ``NetworkError/sessionExpired`` when the needed refresh was refused; the
    ///   refresh's ``NetworkError`` when it failed transiently and the current token has already
    ///   expired; ``NetworkError/backendUnavailable(host:retryAfter:)`` when a refresh is needed
    ///   while refreshes are held back after such a failure (nothing is sent); `CancellationError`
    ///   when the calling task is cancelled while waiting; ``TokenStoreError`` when the store
    ///   cannot be read.
    public func validAccessToken() async throws -> String? {
        try await validAccessToken(ofWaitingSession: false)
    }

    /// ``validAccessToken()``; with `ofWaitingSession`, a token of the sign-in current when the
    /// caller began to wait, or none: when another sign-in (or a sign-out, or another sign-in
    /// found in the store) comes while the caller waits for a refresh (or for the end of the
    /// previous session to be cleared up), the wait ends with
    /// ``NetworkError/signedOut`` — what a wait cut short by a sign-out (``APIClient/resetSession(also:)``)
    /// ends with — instead of the next sign-in's token: a request of the user who was signed in
    /// when it asked must not go out as the next one.
    private func validAccessToken(ofWaitingSession: Bool) async throws -> String? {
        let enteredSession = generation
        try await awaitSessionEnd()
        // Another sign-in while the caller waited for the previous session's end to be cleared up.
        if ofWaitingSession, generation != enteredSession { throw NetworkError.signedOut }
        if inFlight == nil {
            let cached = try cachedTokens()
            saveIfUnsaved()
            guard let tokens = cached else { return nil }
            let refused = tokens.accessToken == refusedAccessToken
            guard refused || needsRefresh(tokens), let refreshToken = tokens.refreshToken else { return tokens.accessToken }
            if let held = heldRefresh() {
                // No refresh now: the current token still works until it actually expires.
                if !refused, !isExpired(tokens) { return tokens.accessToken }
                throw held
            }
            startRefresh(current: tokens, refreshToken: refreshToken)
        }
        let waitingSession = generation
        let refreshed: String
        do {
            refreshed = try await waitForRefresh()
        } catch NetworkError.sessionExpired {
            throw NetworkError.sessionExpired
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            if ofWaitingSession, generation != waitingSession { throw NetworkError.signedOut }
            // A transient failure: the current token still works until it actually expires.
            if let tokens = try cachedTokens(), tokens.accessToken != refusedAccessToken, !isExpired(tokens) {
                return tokens.accessToken
            }
            throw error
        }
        // A sign-in while the refresh was awaited hands its token to the waiters: not this caller's user.
        if ofWaitingSession, generation != waitingSession { throw NetworkError.signedOut }
        return refreshed
    }

    /// ``validAccessToken()`` and the sign-in it belongs to: a number that changes with every
    /// sign-in, sign-out and session expiry. A request sent with the token answers to that
    /// sign-in only (see ``refresh(failedToken:session:)``).
    ///
    /// A caller that waited for a refresh while another sign-in (or a sign-out) came gets
    /// ``NetworkError/signedOut``, never the next sign-in's token.
    package func accessTokenAndSession() async throws -> (token: String, session: Int)? {
        guard let token = try await validAccessToken(ofWaitingSession: true) else { return nil }
        return (token, generation)
    }

    /// The number of the current sign-in (see ``accessTokenAndSession()``), without reading the
    /// store or refreshing: what ``accessTokenAndSession()`` would pair a token with now.
    package nonisolated var currentSession: Int { published.withLock { $0.generation } }

    /// ``refresh(failedToken:)`` for a request sent with a token of sign-in `session`: `nil` when
    /// another sign-in (or a sign-out) came since. The request was made as the user of that
    /// sign-in; sent again with the token of whoever is signed in now, it would act as them.
    package func refresh(failedToken: String, session: Int) async throws -> String? {
        guard session == generation else { return nil }
        let token = try await refresh(failedToken: failedToken)
        // A sign-in while the refresh was awaited hands its token to the waiters: not this
        // request's user either.
        return session == generation ? token : nil
    }

    /// A new access token after a request carrying `failedToken` was answered 401.
    ///
    /// - Parameter failedToken: The access token the rejected request carried. When the stored
    ///   token already differs, it is returned without refreshing (another caller refreshed in
    ///   between). `nil` forces a refresh.
    /// - Returns: The access token to retry with.
    /// - Throws: ``NetworkError/sessionExpired`` when nobody is signed in or the refresh token was
    ///   refused; the refresh's ``NetworkError`` when it failed transiently;
    ///   ``NetworkError/backendUnavailable(host:retryAfter:)`` while refreshes are held back after
    ///   such a failure; `CancellationError` when the calling task is cancelled while waiting.
    package func refresh(failedToken: String?) async throws -> String {
        if inFlight == nil {
            let cached = try cachedTokens()
            saveIfUnsaved()
            guard let tokens = cached else { throw NetworkError.sessionExpired }
            if let failedToken, tokens.accessToken != failedToken { return tokens.accessToken }
            if failedToken != nil { refusedAccessToken = tokens.accessToken }
            guard let refreshToken = tokens.refreshToken else {
                expireSession(.noRefreshToken)
                throw NetworkError.sessionExpired
            }
            if let held = heldRefresh() { throw held }
            startRefresh(current: tokens, refreshToken: refreshToken)
        } else if let failedToken, (cache ?? nil)?.accessToken == failedToken {
            refusedAccessToken = failedToken  // in case the refresh in flight fails
        }
        return try await waitForRefresh()
    }

    // MARK: Refresh machinery

    private enum Outcome: Sendable {
        case refreshed(AuthTokens)
        case rejected(TokenRefreshRejection)
        /// `host`: the token endpoint's (``FleetGuard/hostKey(of:)``), `nil` when no request was sent.
        case failed(NetworkError, host: String?)
    }

    private func cachedTokens() throws -> AuthTokens? {
        if let cache, !reloadPending { return cache }
        let tokens = try store.read()
        reloadPending = false
        adoptStored(tokens)
        return cache ?? nil
    }

    /// Takes in what a read found in the store: the first read fills the cache; what this
    /// process last read or wrote changes nothing; anything else another process wrote — its
    /// refresh of this sign-in is adopted, another sign-in (or a sign-out) starts a new session.
    private func adoptStored(_ tokens: AuthTokens?) {
        defer { stored = .some(tokens) }
        guard let current = cache else {
            cache = .some(tokens)
            return
        }
        if let stored, stored == tokens { return }
        if Self.sameSignIn(current, tokens) {
            // Another process refreshed: its tokens are used, not held back by this one's failures.
            if tokens?.accessToken != current?.accessToken { endHold() }
            cache = .some(tokens)
        } else {
            startSession(with: tokens)
        }
    }

    /// Whether `b` can be a refresh of `a`'s sign-in: the same ``AuthTokens/grantID`` (a rotated
    /// refresh token included, RFC 6749 §6); without one on either side, the first refresh of
    /// the side without (``grantID(continuing:)`` of its refresh token), the same refresh token,
    /// or neither has one and the access tokens are the same. (Without grant IDs a rotated
    /// refresh token looks like another sign-in: treated as one, it costs a request its resend,
    /// never the session.)
    private static func sameSignIn(_ a: AuthTokens?, _ b: AuthTokens?) -> Bool {
        switch (a, b) {
        case (nil, nil):
            return true
        case (let a?, let b?):
            if let grant = a.grantID, let other = b.grantID { return grant == other }
            // Tokens stored before grant IDs were kept, and the first refresh of them.
            if let grant = b.grantID, let spent = a.refreshToken, grant == grantID(continuing: spent) { return true }
            if let grant = a.grantID, let spent = b.refreshToken, grant == grantID(continuing: spent) { return true }
            if a.refreshToken != nil || b.refreshToken != nil { return a.refreshToken == b.refreshToken }
            return a.accessToken == b.accessToken
        default:
            return false
        }
    }

    /// The ``AuthTokens/grantID`` a refresh gives tokens stored without one (by a Courier version
    /// that did not keep it): derived from the refresh token it spent, so that another process
    /// still holding those tokens takes the refresh for one of the same sign-in, not another
    /// user's. (A random one made the first refresh after an update end the waiting calls of the
    /// other processes with ``NetworkError/signedOut``.)
    private static func grantID(continuing refreshToken: String) -> String {
        "refresh-" + Data(SHA256.hash(Data(refreshToken.utf8)).prefix(16)).base64EncodedString()
    }

    /// A session another process started (or ended) in the store: what ``signIn(_:)`` or
    /// ``signOut()`` does, without writing the store or publishing an event.
    private func startSession(with tokens: AuthTokens?) {
        startNewSession(endedBy: tokens == nil ? .signedOut : nil)
        cache = .some(tokens)
        if let tokens {
            resumeWaiters(with: .success(tokens.accessToken))
        } else {
            resumeWaiters(with: .failure(NetworkError.signedOut))
        }
    }

    /// Writes `tokens` to the store (`nil` clears it) and remembers that the store holds them.
    private func write(_ tokens: AuthTokens?) throws {
        if let tokens {
            try store.write(tokens)
        } else {
            try store.clear()
        }
        stored = .some(tokens)
    }

    /// Writes the tokens in use when the store may not hold them (a write or clear that failed
    /// before): one attempt per call, until one succeeds.
    private func saveIfUnsaved() {
        guard let tokens = cache else { return }
        if let stored, stored == tokens { return }
        save(tokens)
    }

    /// ``write(_:)``, publishing ``SessionEvent/storeFailed(_:)`` when it fails.
    private func save(_ tokens: AuthTokens?) {
        do {
            try write(tokens)
        } catch {
            broadcaster.publish(.storeFailed(error as? TokenStoreError ?? .failed(String(describing: error))))
        }
    }

    private func needsRefresh(_ tokens: AuthTokens) -> Bool {
        // A token that looked expired the moment it arrived means the expiry is in the wrong
        // time frame (a skewed clock and no `expires_in`/`Date`): refreshing again would get
        // another such token on every call. It is used until the server answers 401.
        guard tokens.accessToken != expiredOnArrival, let expiry = tokens.accessTokenExpiry else { return false }
        return now().addingTimeInterval(effectiveLeeway(for: tokens, expiry: expiry)) >= expiry
    }

    /// `leeway` in seconds, at most half the access token's lifetime when that is known: from the
    /// JWT's own `iat` to `exp` (one time frame, whatever the clock skew), else from when this
    /// manager received the token to its expiry by the local clock.
    private func effectiveLeeway(for tokens: AuthTokens, expiry: Date) -> TimeInterval {
        let configured = Self.seconds(leeway)
        let lifetime: TimeInterval?
        if let claims = JSONWebToken.claims(of: tokens.accessToken), let issued = claims.issuedAt,
            let expiration = claims.expiration
        {
            lifetime = expiration.timeIntervalSince(issued)
        } else if let received, received.accessToken == tokens.accessToken {
            lifetime = expiry.timeIntervalSince(received.at)
        } else {
            lifetime = nil
        }
        guard let lifetime, lifetime > 0 else { return configured }
        return min(configured, lifetime / 2)
    }

    private func isExpired(_ tokens: AuthTokens) -> Bool {
        guard let expiry = tokens.accessTokenExpiry else { return false }
        return now() >= expiry
    }

    private func startRefresh(current: AuthTokens, refreshToken: String) {
        refreshCount += 1
        let generation = self.generation
        let grant = self.grant
        let transport = self.transport.current
        let clock = refreshClock.current ?? ContinuousClock()
        let lane = laneEnvironment.current.map { (adopted: $0.adopted, current: $0.current()) }
        let now = self.now
        let refreshLock = self.refreshLock
        inFlight = Task {
            // Another process sharing the store may refresh too: one at a time, and the tokens
            // another stored before this one got the lock are used instead of spending the same
            // refresh token again.
            let held = await refreshLock?.acquire()
            defer { held?.release() }
            if held != nil, self.takeInRefreshStoredMeanwhile(refreshToken: refreshToken, generation: generation) {
                return
            }
            let outcome: Outcome
            if let transport {
                outcome = await Self.exchange(
                    refreshToken: refreshToken, current: current, grant: grant, transport: transport, clock: clock, lane: lane,
                    now: now)
            } else {
                outcome = .failed(
                    .invalidRequest(
                        "the TokenManager has no transport: pass one to init or put its AuthInterceptor in a client's pipeline"),
                    host: nil)
            }
            self.finishRefresh(outcome, refreshToken: refreshToken, generation: generation)
        }
    }

    /// Sends the refresh request and classifies the answer, `expires_in` counted from `now` at
    /// receipt. Runs off the actor. `lane`: the environment of the client holding this manager
    /// when it was adopted and now (``adoptEnvironment(_:)``). The request's `timeoutInterval`
    /// limits the whole exchange on `clock` too (``send(_:through:within:)``).
    private static func exchange(
        refreshToken: String, current: AuthTokens, grant: RefreshTokenGrant, transport: any Transport,
        clock: any Clock<Duration>, lane: (adopted: APIEnvironment, current: APIEnvironment)?, now: @Sendable () -> Date
    ) async -> Outcome {
        var host: String?
        do {
            let request = try grant.makeRequest(refreshToken)
            if let lane, let url = request.url, lane.adopted.isOrigin(of: url), !lane.current.isOrigin(of: url) {
                // The grant's token endpoint is the left environment's: the refresh token of
                // whoever signed in since belongs to the current environment's server.
                throw NetworkError.invalidRequest(
                    "the token endpoint \(url.scheme ?? "")://\(url.host ?? "")\(url.port.map { ":\($0)" } ?? "") belongs to "
                        + "environment '\(lane.adopted.id)', and the client now points at '\(lane.current.id)': the refresh token "
                        + "is not sent there. Give each environment its own TokenManager (an EnvironmentSet), or a grant whose "
                        + "URL follows the client's environment")
            }
            if let pins = lane?.current.pins, !pins.isEnforced(by: transport) { try pins.refuseUnenforced(request.url) }
            host = FleetGuard.hostKey(of: request.url)
            let response = try await send(request, through: transport, within: clock)
            var tokens = try grant.parse(response, current: current, receivedAt: now())
            // A refresh continues the sign-in; one from before grant IDs were kept gets one that
            // every process sharing the store can tell from the refresh token it spent.
            tokens.grantID = current.grantID ?? Self.grantID(continuing: refreshToken)
            return .refreshed(tokens)
        } catch let rejection as TokenRefreshRejection {
            return .rejected(rejection)
        } catch {
            return .failed(NetworkError(error), host: host)
        }
    }

    /// Sends `request`, failing with `URLError.timedOut` once its `timeoutInterval` has passed on
    /// `clock` (the request is cancelled). The interval is an idle timeout for the transport, which
    /// a token endpoint (or a proxy) trickling a byte at a time never trips: every call that needs
    /// a token would wait on that one refresh for as long as the trickle lasts. The answer's body
    /// stops at ``RefreshTokenGrant/maximumResponseSize`` (see there).
    private static func send(
        _ request: URLRequest, through transport: any Transport, within clock: any Clock<Duration>
    ) async throws -> HTTPResponse {
        try await TransportReporter.$bound.withValue(RefreshTokenGrant.responseReporter) {
            try await sendWithinTimeLimit(request, through: transport, within: clock)
        }
    }

    private static func sendWithinTimeLimit(
        _ request: URLRequest, through transport: any Transport, within clock: any Clock<Duration>
    ) async throws -> HTTPResponse {
        // At most a year, as on the requests Courier builds (``RequestBuilder/maxIdleTimeout``): a
        // custom grant's "no limit" (`.greatestFiniteMagnitude`, `.infinity`) made a `Duration`
        // that traps past about 1.7e20 s, and URLSession on Linux traps past about 9.2e15 s.
        var bounded = request
        if bounded.timeoutInterval > RequestBuilder.maxIdleTimeout { bounded.timeoutInterval = RequestBuilder.maxIdleTimeout }
        let request = bounded
        let seconds = request.timeoutInterval
        guard seconds.isFinite, seconds > 0 else { return try await transport.send(request) }
        return try await withThrowingTaskGroup(of: HTTPResponse?.self) { group in
            group.addTask { try await transport.send(request) }
            group.addTask {
                try await clock.sleep(for: .seconds(seconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let response = first else {
                let reason = "the token refresh took longer than its \(Int(seconds.rounded(.up))) s time limit"
                throw URLError(.timedOut, userInfo: [NSLocalizedDescriptionKey: reason])
            }
            return response
        }
    }

    private func finishRefresh(_ outcome: Outcome, refreshToken: String, generation: Int) {
        // Signed in or out meanwhile: those already answered the waiters.
        guard generation == self.generation else { return }
        inFlight = nil
        switch outcome {
        case .refreshed(let tokens):
            if takeInSessionStoredMeanwhile() { return }
            endHold()
            cache = .some(tokens)
            received = (tokens.accessToken, now())
            expiredOnArrival = needsRefresh(tokens) ? tokens.accessToken : nil
            resumeWaiters(with: .success(tokens.accessToken))
            broadcaster.publish(.refreshed)
            save(tokens)
        case .rejected(let rejection):
            if resumeWithRefreshAdoptedSince(refused: refreshToken) { return }
            if adoptTokensStoredSince(refused: refreshToken) { return }
            expireSession(rejection)
        case .failed(let error, let host):
            if let host, Self.holdsRefreshesBack(error) { startHold(after: error, host: host) }
            resumeWaiters(with: .failure(error))
        }
    }

    /// With the refresh lock held (``TokenRefreshLock``): whether the store holds what another
    /// process stored since this one last read it — a refresh of this sign-in, adopted and handed
    /// to the waiters, or another sign-in or a sign-out, taken in as a reload would — so that this
    /// refresh is not sent. `true` as well when this session ended meanwhile.
    private func takeInRefreshStoredMeanwhile(refreshToken: String, generation: Int) -> Bool {
        guard generation == self.generation else { return true }
        guard let found = storeWrittenSinceLastRead() else { return false }
        if let found, found.refreshToken == refreshToken { return false }  // nobody refreshed
        inFlight = nil
        reloadPending = false
        adoptStored(found)
        // A new session (another sign-in, a sign-out) answered the waiters already.
        if generation == self.generation, let tokens = cache ?? nil {
            resumeWaiters(with: .success(tokens.accessToken))
        }
        return true
    }

    /// Before a refresh's tokens are stored: whether another process sharing the store signed
    /// another user in (another ``AuthTokens/grantID``) or signed out while the refresh was out.
    /// That session is taken in as ``reloadFromStore()`` would — the waiters of the sign-in that
    /// ended get what a reload gives them — and the refreshed tokens are neither stored (they
    /// would replace the other process's sign-in, or undo its sign-out) nor handed out. A store
    /// that cannot be read, or holds a refresh of this sign-in, changes nothing.
    private func takeInSessionStoredMeanwhile() -> Bool {
        guard let found = storeWrittenSinceLastRead(), let current = cache, !Self.sameSignIn(current, found) else {
            return false
        }
        reloadPending = false
        adoptStored(found)
        return true
    }

    /// What the store holds when another process wrote it since this one last read or wrote it
    /// (`.some(nil)`: it was cleared); `nil` when nothing changed or the store cannot be read now
    /// (a Keychain locked in the background: the caller goes on as if nothing changed, and a
    /// store that stays unusable is reported by the next write, ``SessionEvent/storeFailed(_:)``).
    private func storeWrittenSinceLastRead() -> AuthTokens?? {
        let found: AuthTokens?
        do {
            found = try store.read()
        } catch {
            return nil
        }
        if let stored, stored == found { return nil }
        return .some(found)
    }

    // MARK: Hold after a transient failure

    /// Whether a refresh that failed with `error` says the token endpoint is in trouble, so the
    /// next refresh waits: a 408, 429 or 5xx answer, or a transport failure a new attempt could
    /// fix (``RetryPolicy/transientErrorCodes``: time-out, refused or lost connection, DNS).
    /// Not the device being offline (the refresh goes out as soon as the network is back), nor a
    /// request that could not be built or an answer that could not be read.
    private static func holdsRefreshesBack(_ error: NetworkError) -> Bool {
        if let status = error.statusCode { return status == 408 || status == 429 || (500...599).contains(status) }
        switch error {
        case .transport(let underlying), .timedOut(let underlying?):
            return RetryPolicy.transientErrorCodes.contains(underlying.code)
        default:
            return false
        }
    }

    /// Holds refreshes back after `error`: for the token endpoint's `Retry-After` when it sent
    /// one (at most ``maximumRefreshHold``), else ``refreshHoldBackoff`` after the failures in a row.
    private func startHold(after error: NetworkError, host: String) {
        transientFailures += 1
        let now = self.now()
        let wait: Duration
        if let asked = error.retryAfter?.delay(from: now), asked > .zero {
            wait = min(asked, Self.maximumRefreshHold)
        } else {
            wait = Self.refreshHoldBackoff.delay(afterFailures: transientFailures, random: Double.random(in: 0...1))
        }
        hold = (now, now.addingTimeInterval(Self.seconds(wait)), host)
    }

    /// The error of a call that needs a refresh while refreshes are held back —
    /// ``NetworkError/backendUnavailable(host:retryAfter:)`` for the token endpoint's host and the
    /// rest of the hold, nothing sent — or `nil` when there is no hold (any more).
    private func heldRefresh() -> NetworkError? {
        guard let hold else { return nil }
        let now = self.now()
        guard now >= hold.since, now < hold.until else {
            self.hold = nil
            return nil
        }
        let remaining = hold.until.timeIntervalSince(now)
        return .backendUnavailable(host: hold.host, retryAfter: .milliseconds(Int64((remaining * 1000).rounded(.up))))
    }

    /// Forgets the hold and the failures in a row (a refresh succeeded, or the session changed).
    private func endHold() {
        hold = nil
        transientFailures = 0
        refusedAccessToken = nil
    }

    /// After the token endpoint refused `refused`: whether another process stored other tokens
    /// since this one last read or wrote the store (it refreshed first and the server rotated the
    /// refresh token this one sent, or it signed in). Those are taken in as a reload would — the
    /// same session for a refresh of the same ``AuthTokens/grantID``, a new one otherwise, the
    /// store left as is — instead of clearing them.
    private func adoptTokensStoredSince(refused: String) -> Bool {
        let found: AuthTokens?
        do {
            found = try store.read()
        } catch {
            broadcaster.publish(.storeFailed(error as? TokenStoreError ?? .failed(String(describing: error))))
            return false
        }
        guard let found, found.refreshToken != refused else { return false }
        if let stored, stored == found { return false }  // what this process stored: not newer
        reloadPending = false
        adoptStored(found)
        resumeWaiters(with: .success(found.accessToken))  // none left when a new session started
        return true
    }

    /// After the token endpoint refused `refused`: whether this process took in another process's
    /// refresh of the same sign-in while the refused one was out (``reloadFromStore()`` found a
    /// rotated refresh token of the same ``AuthTokens/grantID``). The waiters get its access token.
    private func resumeWithRefreshAdoptedSince(refused: String) -> Bool {
        guard let tokens = cache ?? nil, tokens.grantID != nil, let newer = tokens.refreshToken, newer != refused else {
            return false
        }
        resumeWaiters(with: .success(tokens.accessToken))
        return true
    }

    private func expireSession(_ rejection: TokenRefreshRejection) {
        startNewSession(endedBy: .sessionExpired)
        cache = .some(nil)
        save(nil)
        resumeWaiters(with: .failure(NetworkError.sessionExpired))
        broadcaster.publish(.sessionExpired(rejection))
    }

    /// Waits for the in-flight refresh; cancelling the calling task ends only this wait.
    private func waitForRefresh() async throws -> String {
        let id = UUID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                // Runs on the actor, synchronously: either cancellation was already requested
                // (the handler below may have run before this registration and found nothing),
                // or the handler's removal is queued behind this registration.
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else if inFlight == nil {
                    // Nothing to wait for (callers start a refresh first without leaving the
                    // actor, so this is defensive): answer from the cache, never strand a waiter.
                    if let tokens = cache ?? nil {
                        continuation.resume(returning: tokens.accessToken)
                    } else {
                        continuation.resume(throwing: NetworkError.sessionExpired)
                    }
                } else {
                    waiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    /// Number of callers currently waiting for the in-flight refresh (for tests).
    var pendingRefreshWaiters: Int { waiters.count }

    private func cancelWaiter(_ id: UUID) {
        waiters.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }

    private func resumeWaiters(with result: Result<String, any Error>) {
        let pending = waiters
        waiters.removeAll()
        for continuation in pending.values {
            continuation.resume(with: result)
        }
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
