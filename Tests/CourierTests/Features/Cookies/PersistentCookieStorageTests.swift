import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

@Suite("Persistent cookies")
struct PersistentCookieStorageTests {
    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("cookies-\(UUID().uuidString)", isDirectory: true)
    }

    /// A server that sets `sid=<n>` on `/login` and echoes the request's `Cookie` field elsewhere.
    static func server() -> StubTransport {
        StubTransport { request in
            let url = request.url ?? URL(fileURLWithPath: "/")
            if url.path.hasSuffix("/login") {
                return HTTPResponse(
                    statusCode: 204,
                    headers: HTTPHeaders([
                        .init(name: "Set-Cookie", value: "sid=abc123; Path=/; Max-Age=3600; HttpOnly"),
                        .init(name: "Set-Cookie", value: "theme=dark; Path=/"),
                    ]), url: url)
            }
            return HTTPResponse(statusCode: 200, body: Data((request.value(forHTTPHeaderField: "Cookie") ?? "").utf8), url: url)
        }
    }

    static func client(
        _ folder: URL, namespace: String = "production", account: String = "alice", base: StubTransport
    )
        -> (APIClient, PersistentCookieStorage)
    {
        let storage = PersistentCookieStorage(directory: folder, namespace: namespace, account: { account })
        let client = CoreFixture.client(base) { $0.transport = CookieStoringTransport(storage: storage, base: base) }
        return (client, storage)
    }

    static func sentCookie(_ client: APIClient) async throws -> String {
        String(decoding: try await client.send(Request<Data>.get("/me")), as: UTF8.self)
    }

    @Test("cookies set by the server are sent back and survive a new client on the same folder")
    func survivesRelaunch() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (first, storage) = Self.client(folder, base: Self.server())
        try await first.send(Request<Void>.get("/login"))
        #expect(try await Self.sentCookie(first) == "sid=abc123; theme=dark")
        #expect(FileManager.default.fileExists(atPath: storage.fileURL(account: "alice").path))

        let (relaunched, _) = Self.client(folder, base: Self.server())
        #expect(try await Self.sentCookie(relaunched) == "sid=abc123; theme=dark")
    }

    @Test("another environment or another account does not see them")
    func partitioned() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (client, _) = Self.client(folder, base: Self.server())
        try await client.send(Request<Void>.get("/login"))
        let (staging, _) = Self.client(folder, namespace: "staging", base: Self.server())
        #expect(try await Self.sentCookie(staging) == "")
        let (bob, _) = Self.client(folder, account: "bob", base: Self.server())
        #expect(try await Self.sentCookie(bob) == "")
    }

    @Test("resetSession deletes the account's cookies on disk; other accounts keep theirs")
    func resetSessionClears() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (alice, storage) = Self.client(folder, base: Self.server())
        let (bob, bobStorage) = Self.client(folder, account: "bob", base: Self.server())
        try await alice.send(Request<Void>.get("/login"))
        try await bob.send(Request<Void>.get("/login"))
        try await alice.resetSession()
        #expect(!FileManager.default.fileExists(atPath: storage.fileURL(account: "alice").path))
        #expect(try await Self.sentCookie(alice) == "")
        #expect(FileManager.default.fileExists(atPath: bobStorage.fileURL(account: "bob").path))
        let (relaunched, _) = Self.client(folder, base: Self.server())
        #expect(try await Self.sentCookie(relaunched) == "")
    }

    /// Answers with `Set-Cookie: sid=<n>` once the test lets it, after saying the request arrived.
    final class HeldServer: Transport {
        let arrived = AsyncStream<Void>.makeStream()
        let release = AsyncStream<Void>.makeStream()
        func send(_ request: URLRequest) async throws -> HTTPResponse {
            arrived.continuation.yield()
            for await _ in release.stream { break }
            return HTTPResponse(
                statusCode: 204, headers: HTTPHeaders([.init(name: "Set-Cookie", value: "sid=old-session; Path=/")]),
                url: request.url)
        }
    }

    @Test(
        "a response to a request sent before resetSession does not bring the reset session's cookies back",
        .timeLimit(.minutes(1)))
    func lateSetCookieAfterResetIsDropped() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = PersistentCookieStorage(directory: folder, namespace: "p", account: { "alice" })
        let server = HeldServer()
        let transport = CookieStoringTransport(storage: storage, base: server)
        let url = try #require(URL(string: "https://api.example.test/login"))
        let login = Task { try await transport.send(URLRequest(url: url)) }
        for await _ in server.arrived.stream { break }
        try await transport.resetSession()  // sign-out while the login is in flight
        server.release.continuation.yield()
        _ = try await login.value
        #expect(try await storage.allCookies().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: storage.fileURL(account: "alice").path))

        // A request sent after the reset stores its cookies as usual.
        let next = Task { try await transport.send(URLRequest(url: url)) }
        for await _ in server.arrived.stream { break }
        server.release.continuation.yield()
        _ = try await next.value
        #expect(try await storage.allCookies().map(\.value) == ["old-session"])
    }

    @Test("a corrupted file is a typed error on every call, and the file is left as it was")
    func corruptedFile() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let stub = Self.server()
        let (client, storage) = Self.client(folder, base: stub)
        let file = storage.fileURL(account: "alice")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("{\"version\":1,\"cook".utf8).write(to: file)
        let error = await #expect(throws: NetworkError.self) { try await client.send(Request<Void>.get("/login")) }
        guard case .corrupted(let path, _) = error?.cookieStorageError else {
            Issue.record("expected a corrupted cookie file, got \(String(describing: error))")
            return
        }
        #expect(path == file.path)
        #expect(stub.requestCount == 0)
        #expect(try Data(contentsOf: file) == Data("{\"version\":1,\"cook".utf8))
        await #expect(throws: CookieStorageError.self) { try await storage.allCookies() }
        // The app's way out: drop the account's cookies.
        try await storage.removeAll()
        try await client.send(Request<Void>.get("/login"))
        #expect(try await storage.allCookies().count == 2)
    }

    @Test("an unreadable file (a folder in its place) is a typed error")
    func unreadableFile() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = PersistentCookieStorage(directory: folder, namespace: "p", account: { "a" })
        try FileManager.default.createDirectory(at: storage.fileURL(account: "a"), withIntermediateDirectories: true)
        await #expect(throws: CookieStorageError.self) { try await storage.allCookies() }
    }

    @Test("a base transport that handles cookies itself is refused with a typed error")
    func refusesCookieHandlingBase() async throws {
        let storage = PersistentCookieStorage(directory: Self.folder(), namespace: "p")
        let transport = CookieStoringTransport(storage: storage, base: URLSessionTransport())
        let error = await #expect(throws: URLError.self) {
            _ = try await transport.send(URLRequest(url: try #require(URL(string: "http://127.0.0.1:9/x"))))
        }
        #expect(error?.cookieStorageError == .baseTransportHandlesCookies("URLSessionTransport"))

        // Also one level down: a PinningTransport over a session with its own cookie jar (shared
        // by every account of the storage above) is refused; one over a cookie-less session is not.
        let policy = try PinningPolicy(pins: [
            "api.example.test": [String(repeating: "A", count: 43) + "=", String(repeating: "B", count: 43) + "="]
        ])
        let pinned = CookieStoringTransport(storage: storage, base: PinningTransport(policy: policy))
        let nested = await #expect(throws: URLError.self) {
            _ = try await pinned.send(URLRequest(url: try #require(URL(string: "http://127.0.0.1:9/x"))))
        }
        #expect(nested?.cookieStorageError == .baseTransportHandlesCookies("PinningTransport"))
        let cookieless = PinningTransport(
            policy: policy, base: URLSessionTransport(configuration: CookieStoringTransport.baseConfiguration()))
        #expect(!cookieless.handlesCookies)
    }

    @Test("expired and Max-Age=0 cookies delete the stored one; session cookies can be kept off disk")
    func expiryAndSessionCookies() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try #require(URL(string: "https://api.example.test/v1/login"))
        let storage = PersistentCookieStorage(
            directory: folder, namespace: "p", account: { "a" }, persistsSessionCookies: false,
            now: { Date(timeIntervalSince1970: 1_800_000_000) })
        try await storage.store(setCookieFields: ["a=1; Max-Age=60", "b=2"], receivedFrom: url, account: "a", sentAt: 0)
        #expect(try await storage.allCookies().map(\.name) == ["a", "b"])
        // On disk only the cookie with an expiry (a storage on the same folder in this process
        // shares the one in memory, so the file is read directly).
        let onDisk = String(decoding: try Data(contentsOf: storage.fileURL(account: "a")), as: UTF8.self)
        #expect(onDisk.contains(#""name":"a""#))
        #expect(!onDisk.contains(#""name":"b""#))
        try await storage.store(setCookieFields: ["a=gone; Max-Age=0"], receivedFrom: url, account: "a", sentAt: 0)
        #expect(try await storage.allCookies().map(\.name) == ["b"])
        try await storage.store(
            setCookieFields: ["b=old; Expires=Wed, 21 Oct 2015 07:28:00 GMT"], receivedFrom: url, account: "a", sentAt: 0)
        #expect(try await storage.allCookies().isEmpty)
    }

    @Test(
        "Set-Cookie storage rules (RFC 6265 §5.3) and matching (§5.4)",
        arguments: [
            // field, received from, request URL, sent?
            ("a=1", "https://api.example.test/v1/login", "https://api.example.test/v1/items", true),
            ("a=1", "https://api.example.test/v1/login", "https://api.example.test/other", false),  // default path /v1
            ("a=1", "https://api.example.test/v1/login", "https://cdn.api.example.test/v1/x", false),  // host-only
            ("a=1; Domain=example.test", "https://api.example.test/", "https://cdn.example.test/", true),
            ("a=1; Domain=.example.test", "https://api.example.test/", "https://example.test/", true),
            ("a=1; Domain=other.test", "https://api.example.test/", "https://other.test/", false),  // foreign domain
            ("a=1; Domain=test", "https://api.example.test/", "https://other.test/", false),  // a TLD
            ("a=1; Path=/v1; Secure", "https://api.example.test/", "http://api.example.test/v1", false),
            ("a=1; Path=/v1; Secure", "https://api.example.test/", "https://api.example.test/v1/x", true),
            ("a=1; Path=/v1", "https://api.example.test/", "https://api.example.test/v10", false),
            ("a=1; Secure", "http://api.example.test/", "https://api.example.test/", false),  // not stored
            ("noequals", "https://api.example.test/", "https://api.example.test/", false),
        ])
    func rules(_ field: String, _ from: String, _ to: String, _ sent: Bool) async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = PersistentCookieStorage(directory: folder, namespace: "p", account: { "a" })
        try await storage.store(setCookieFields: [field], receivedFrom: try #require(URL(string: from)), account: "a", sentAt: 0)
        let header = try await storage.cookieHeader(for: try #require(URL(string: to)), account: "a").field
        #expect((header != nil) == sent, "\(field) from \(from) to \(to): \(header ?? "nil")")
    }

    @Test("two storages on one folder: a sign-out through one is seen by the other, and its cookies are not lost")
    func twoStoragesOnOneFolder() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Two clients of one environment and account (say, the REST client and another module's),
        // each with its own storage on the same folder.
        let (first, firstStorage) = Self.client(folder, base: Self.server())
        let (second, secondStorage) = Self.client(folder, base: Self.server())
        try await first.send(Request<Void>.get("/login"))
        #expect(try await Self.sentCookie(second) == "sid=abc123; theme=dark")

        // Signed out through the first client: the second must not go on sending the old session,
        // nor write it back to disk with the next cookie it stores.
        try await first.resetSession()
        #expect(try await Self.sentCookie(second) == "")
        try await secondStorage.store(
            setCookieFields: ["other=1; Path=/"], receivedFrom: try #require(URL(string: "https://api.example.test/x")),
            account: "alice", sentAt: 1)
        #expect(try await Self.sentCookie(first) == "other=1")
        let onDisk = String(decoding: try Data(contentsOf: firstStorage.fileURL(account: "alice")), as: UTF8.self)
        #expect(onDisk.contains("other"))
        #expect(!onDisk.contains("abc123"))
    }

    @Test(
        "a response whose cookies cannot be written (full disk) is still delivered: the cookies are used from memory and written on a later request"
    )
    func anAnswerWhoseCookiesCannotBeWrittenIsDelivered() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let stub = Self.server()
        let (client, storage) = Self.client(folder, base: stub)
        #expect(try await Self.sentCookie(client) == "")  // the jar is read (empty): no file yet
        // A folder where the file goes: the atomic rename fails as a full disk's write would.
        let file = storage.fileURL(account: "alice")
        let obstacle = file.appendingPathComponent("obstacle")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: obstacle)

        // The server has acted on the request: its answer reaches the caller.
        try await client.send(Request<Void>.get("/login"))
        #expect(stub.requestCount == 2)
        guard case .unwritable(let path, _) = await storage.unsavedChanges() else {
            Issue.record("expected the write failure to be kept")
            return
        }
        #expect(path == file.path)
        // The cookies are in use from memory; a request is sent once, not failed.
        #expect(try await Self.sentCookie(client) == "sid=abc123; theme=dark")
        #expect(stub.requestCount == 3)

        // Room again: the next request writes what memory holds.
        try FileManager.default.removeItem(at: file)
        #expect(try await Self.sentCookie(client) == "sid=abc123; theme=dark")
        #expect(await storage.unsavedChanges() == nil)
        let written = String(decoding: try Data(contentsOf: file), as: UTF8.self)
        #expect(written.contains("abc123") && written.contains("dark"))
    }

    /// A storage that shares nothing in memory with the others on its folder: another process's.
    static func processStorage(_ folder: URL) -> PersistentCookieStorage {
        PersistentCookieStorage(
            directory: folder, namespace: "production", account: { "alice" }, persistsSessionCookies: true,
            now: { Date() }, sharesMemory: false)
    }

    @Test("two processes on one folder (an app and its extension) keep each other's cookies")
    func twoProcessesKeepEachOthersCookies() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let app = Self.processStorage(folder)
        let widget = Self.processStorage(folder)
        let url = try #require(URL(string: "https://api.example.test/login"))
        // Both have read the (empty) jar before either stores anything.
        #expect(try await app.cookieHeader(for: url, account: "alice").field == nil)
        #expect(try await widget.cookieHeader(for: url, account: "alice").field == nil)

        let appMark = try await app.cookieHeader(for: url, account: "alice").sentAt
        try await app.store(setCookieFields: ["sid=1; Path=/"], receivedFrom: url, account: "alice", sentAt: appMark)
        // The widget sends the app's session, and its own cookie does not write it out of the file.
        #expect(try await widget.cookieHeader(for: url, account: "alice").field == "sid=1")
        let widgetMark = try await widget.cookieHeader(for: url, account: "alice").sentAt
        try await widget.store(setCookieFields: ["theme=dark; Path=/"], receivedFrom: url, account: "alice", sentAt: widgetMark)
        #expect(try await app.cookieHeader(for: url, account: "alice").field == "sid=1; theme=dark")
        let relaunched = Self.processStorage(folder)
        #expect(try await relaunched.cookieHeader(for: url, account: "alice").field == "sid=1; theme=dark")
    }

    @Test("a sign-out in one process is not undone by another's response to a request sent before it")
    func aSignOutInAnotherProcessIsNotUndoneByALateResponse() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let app = Self.processStorage(folder)
        let widget = Self.processStorage(folder)
        let url = try #require(URL(string: "https://api.example.test/feed"))
        try await app.store(setCookieFields: ["sid=1; Path=/"], receivedFrom: url, account: "alice", sentAt: 0)
        let (sent, inFlight) = try await widget.cookieHeader(for: url, account: "alice")
        #expect(sent == "sid=1")

        try await app.removeAll()  // the user signs out in the app while the widget's call is out
        try await widget.store(setCookieFields: ["sid=1b; Path=/"], receivedFrom: url, account: "alice", sentAt: inFlight)
        #expect(try await widget.cookieHeader(for: url, account: "alice").field == nil)
        #expect(!FileManager.default.fileExists(atPath: app.fileURL(account: "alice").path))

        // A request the widget sends after the sign-out stores its cookies (a new sign-in).
        let afterSignOut = try await widget.cookieHeader(for: url, account: "alice").sentAt
        try await widget.store(setCookieFields: ["sid=2; Path=/"], receivedFrom: url, account: "alice", sentAt: afterSignOut)
        #expect(try await app.cookieHeader(for: url, account: "alice").field == "sid=2")
    }

    @Test("a lock file holding garbage (counters at their maximum) is no crash: cookies are still stored and removed")
    func aLockFileOfGarbageIsNoCrash() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = Self.processStorage(folder)
        let url = try #require(URL(string: "https://api.example.test/login"))
        let lock = storage.lockFileURL(account: "alice")
        try FileManager.default.createDirectory(at: lock.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(repeating: 0xFF, count: 16).write(to: lock)
        let mark = try await storage.cookieHeader(for: url, account: "alice").sentAt
        try await storage.store(setCookieFields: ["sid=1; Path=/"], receivedFrom: url, account: "alice", sentAt: mark)
        #expect(try await storage.cookieHeader(for: url, account: "alice").field == "sid=1")
        try await storage.removeAll(account: "alice")
        #expect(try await storage.cookieHeader(for: url, account: "alice").field == nil)
    }

    @Test("file names keep accounts apart whatever characters they use")
    func fileNames() {
        #expect(PersistentCookieStorage.fileName("a/b") != PersistentCookieStorage.fileName("a_b"))
        #expect(PersistentCookieStorage.fileName("..") == "%2E%2E")
        #expect(PersistentCookieStorage.fileName("user-42") == "user-42")
    }
}
