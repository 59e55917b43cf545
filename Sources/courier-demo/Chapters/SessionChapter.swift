import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// The session chapter: sign in, let the access token expire under a burst of parallel screens
/// (one refresh serves them all, as the server's counters show), ride out a 503 burst with
/// backoff and `Retry-After`, and see the app told when the session really ends.
func runSessionChapter(_ demo: Demo) async throws {
    demo.chapter("Session: one refresh for many calls, retries with backoff, session expiry")
    let server = SessionDemoServer(demo: demo)
    let tokenFile = FileManager.default.temporaryDirectory
        .appendingPathComponent("courier-demo-\(demo.namespace)/session.json")
    defer { try? FileManager.default.removeItem(at: tokenFile.deletingLastPathComponent()) }

    // The app's wiring: one transport shared by the client and the token manager.
    let transport = URLSessionTransport()
    let store = FileTokenStore(fileURL: tokenFile)
    let tokens = TokenManager(
        store: store, transport: transport,
        grant: .oauth2(tokenURL: demo.environment.baseURL.appendingPathComponent("auth/refresh")),
        leeway: .zero)
    let client = demo.makeClient {
        $0.transport = transport
        $0.interceptors = [
            RequestIDInterceptor(),
            RetryInterceptor(),
            AuthInterceptor(tokenManager: tokens),
            IdempotencyInterceptor(),
        ]
    }
    let events = tokens.events()

    // Sign in with a short-lived access token.
    let ttl = 1.5
    let login = try await demo.signIn(through: client, into: tokens, accessTtl: ttl)
    demo.say(
        "signed in as alice — access token valid for \(ttl) s, tokens in \(tokenFile.lastPathComponent) (mode \(fileMode(tokenFile)))"
    )
    let me = try await client.send(SessionDemoServer.me)
    demo.say("GET /me → \(me.username) (token \(me.jti))")

    // Wait until the token has expired, then open eight screens at once.
    try await Task.sleep(for: .milliseconds(Int(ttl * 1000) + 100))
    try await server.post("auth/config", ["refreshDelay": 0.3, "accessTtl": 3600])
    let before = try await server.stats()
    let screens = 8
    let loaded = try await withThrowingTaskGroup(of: SessionDemoServer.ProtectedItems.self) { group in
        for _ in 0..<screens { group.addTask { try await client.send(SessionDemoServer.protectedItems) } }
        return try await group.reduce(into: []) { $0.append($1) }
    }
    let after = try await server.stats()
    let usedTokens = Set(loaded.map(\.auth.jti))
    demo.say(
        "token expired; \(screens) screens load /protected/items in parallel → \(loaded.count) × 200, "
            + "\(usedTokens.count == 1 ? "all with the same new token \(usedTokens.first ?? "")" : "with \(usedTokens.count) tokens")"
    )
    let rotated = try store.read()?.refreshToken != login.refreshToken
    demo.say(
        "server saw \(after.refreshCalls - before.refreshCalls) refresh for \(screens) calls "
            + "(\(after.unauthorized - before.unauthorized) × 401: refreshed before sending); "
            + "refresh token \(rotated ? "rotated" : "NOT rotated")")

    // A 503 burst: backoff, then the server's Retry-After.
    try await server.post(
        "_faults", ["method": "GET", "path": "/items", "faults": [["status": 503], ["status": 503, "retryAfter": "1"]]])
    let started = ContinuousClock.now
    let burst = try await client.response(for: Request<SessionDemoServer.ItemPage>.get("/items"))
    let waits = burst.context.retryRecords.map { record in
        "\(seconds(record.delay)) s (\(record.delaySource == .retryAfter ? "Retry-After" : "backoff"))"
    }
    demo.say(
        "503 burst on GET /items → \(burst.statusCode) on attempt \(burst.context.attempt) after waiting "
            + "\(waits.joined(separator: ", ")); \(burst.value.items.count) items in \(seconds(ContinuousClock.now - started)) s")

    // The server stops accepting the refresh token: the session really ends.
    try await server.post("auth/revoke", [:])
    try await server.post("auth/config", ["refreshFails": "invalid_grant"])
    do {
        _ = try await client.send(SessionDemoServer.me)
        demo.say("unexpected: the revoked session still works")
    } catch let error as NetworkError {
        demo.say("access token revoked, refresh refused → \"\(error.userMessage)\" [\(kind(error))]")
    }
    if let event = await firstSessionExpiry(in: events, within: .seconds(2)) {
        demo.say(
            "the app was told: \(event) → shows sign-in; token file removed: \(!FileManager.default.fileExists(atPath: tokenFile.path))"
        )
    } else {
        demo.say("unexpected: no session-expired event")
    }
}

/// The first ``SessionEvent/sessionExpired(_:)`` in `events`, or `nil` if none arrives in time.
private func firstSessionExpiry(in events: AsyncStream<SessionEvent>, within limit: Duration) async -> SessionEvent? {
    await withTaskGroup(of: SessionEvent?.self) { group in
        group.addTask {
            for await event in events {
                if case .sessionExpired = event { return event }
            }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

private func seconds(_ duration: Duration) -> String {
    let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    return String(format: "%.2f", value)
}

private func fileMode(_ url: URL) -> String {
    guard let permissions = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.posixPermissions] as? Int else {
        return "?"
    }
    return "0" + String(permissions, radix: 8)
}

/// The reference server's control routes and response shapes used by the session chapter.
private struct SessionDemoServer {
    let demo: Demo

    struct Me: Decodable, Sendable {
        var username: String
        var jti: String
    }

    struct ProtectedItems: Decodable, Sendable {
        struct Auth: Decodable, Sendable { var jti: String }
        var total: Int
        var auth: Auth
    }

    struct ItemPage: Decodable, Sendable {
        struct Item: Decodable, Sendable { var id: Int }
        var items: [Item]
    }

    struct Stats: Decodable {
        struct Auth: Decodable { var unauthorized: Int }
        var refreshCalls: Int
        var auth: Auth
        var unauthorized: Int { auth.unauthorized }
    }

    static let me = Request<Me>.get("/me").policy(.authorizedRead)
    static let protectedItems = Request<ProtectedItems>.get("/protected/items").policy(.authorizedRead)

    /// `POST /ns/{ns}/<path>` with a JSON body, outside the client under demonstration.
    func post(_ path: String, _ json: [String: Any]) async throws { try await demo.controlPOST(path, json) }

    func stats() async throws -> Stats { try await demo.serverStats() }
}
