import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// Cookies in a ``PersistentCookieStorage`` against the reference server's `/cookies` routes, on the
/// transport `COURIER_TRANSPORT` selects (URLSession or libcurl underneath, their own cookies off).
@Suite("Persistent cookies (integration)")
struct PersistentCookiesIntegrationTests {
    struct Jar: Decodable {
        let cookie: String?
        let cookies: [String: String]
    }

    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("cookies-it-\(UUID().uuidString)", isDirectory: true)
    }

    static func client(
        folder: URL, environment: APIEnvironment, account: String = "alice"
    )
        -> (APIClient, PersistentCookieStorage)
    {
        let storage = PersistentCookieStorage(
            directory: folder, namespace: environment.storageNamespace, account: { account })
        let client = APIClient(environment: environment) {
            $0.transport = CookieStoringTransport(storage: storage, base: TestTransport.makeWithoutCookies())
        }
        return (client, storage)
    }

    @Test("cookies the server set survive a new client (a relaunch) on the same storage")
    func survivesRelaunch() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = try TestServers.apiEnvironment(namespace: TestServers.makeNamespace("ck"))
        let (first, _) = Self.client(folder: folder, environment: environment)
        try await first.send(Request<Void>.get("/cookies/set", query: ["session": "s-1", "theme": "dark"]))
        #expect(try await first.send(Request<Jar>.get("/cookies")).cookies == ["session": "s-1", "theme": "dark"])

        let (relaunched, _) = Self.client(folder: folder, environment: environment)
        let seen = try await relaunched.send(Request<Jar>.get("/cookies"))
        #expect(seen.cookies == ["session": "s-1", "theme": "dark"], "the server saw \(seen.cookie ?? "no Cookie field")")

        try await relaunched.send(Request<Void>.get("/cookies/delete", query: ["theme": ""]))
        let (again, _) = Self.client(folder: folder, environment: environment)
        #expect(try await again.send(Request<Jar>.get("/cookies")).cookies == ["session": "s-1"])
    }

    /// The account's cookie file held the server's session cookie in clear with mode 0644: any
    /// other user of the machine could read the session and replay it.
    @Test("the session cookie the server set is on disk in a file readable by its owner alone")
    func theCookieFileIsReadableByItsOwnerAlone() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = try TestServers.apiEnvironment(namespace: TestServers.makeNamespace("ck"))
        let (client, storage) = Self.client(folder: folder, environment: environment)
        try await client.send(Request<Void>.get("/cookies/set", query: ["session": "s-private-1"]))
        #expect(try await client.send(Request<Jar>.get("/cookies")).cookies == ["session": "s-private-1"])

        let file = storage.fileURL(account: "alice")
        #expect(String(decoding: try Data(contentsOf: file), as: UTF8.self).contains("s-private-1"))
        let mode = { (url: URL) in
            try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue
        }
        #expect(try mode(file) == 0o600)
    }

    /// The storage's folder (made when the storage is made, before the first cookie file) was
    /// 0755 and the account's lock file 0644: other local users could list the folder, whose
    /// file names say whose cookies are there (`alice.cookies`).
    @Test("the cookie folders and the account's lock file are their owner's alone")
    func theCookieFoldersAndLockFileAreTheirOwnersAlone() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = try TestServers.apiEnvironment(namespace: TestServers.makeNamespace("ck"))
        let (client, storage) = Self.client(folder: folder, environment: environment)
        try await client.send(Request<Void>.get("/cookies/set", query: ["session": "s-private-2"]))
        #expect(try await client.send(Request<Jar>.get("/cookies")).cookies == ["session": "s-private-2"])

        let mode = { (path: String) in
            try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
        }
        let file = storage.fileURL(account: "alice")
        #expect(try mode(folder.path) == 0o700)
        #expect(try mode(file.deletingLastPathComponent().path) == 0o700)
        #expect(try mode(file.deletingLastPathComponent().appendingPathComponent("alice.cookies.lock").path) == 0o600)
    }

    /// A cookie file an earlier version wrote 0644 stayed so when only read: the session cookie
    /// stayed readable by other local users until the server set a cookie again.
    @Test("a cookie file an earlier version left readable by others is made private when read")
    func aCookieFileLeftReadableIsMadePrivateWhenRead() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = try TestServers.apiEnvironment(namespace: TestServers.makeNamespace("ck"))
        let file = try await {
            // An earlier launch, gone before the next one reads the file.
            let (client, storage) = Self.client(folder: folder, environment: environment)
            try await client.send(Request<Void>.get("/cookies/set", query: ["session": "s-private-3"]))
            return storage.fileURL(account: "alice")
        }()
        #expect(chmod(file.path, 0o644) == 0)

        let (relaunched, _) = Self.client(folder: folder, environment: environment)
        #expect(try await relaunched.send(Request<Jar>.get("/cookies")).cookies == ["session": "s-private-3"])
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
    }

    @Test("another environment (the second server, same host) or another account sees none of them")
    func partitioned() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let servers = try TwoServers()
        let staging = try APIEnvironment("staging", baseURL: TwoServers.base(servers.first, servers.namespace))
        let production = try APIEnvironment("production", baseURL: TwoServers.base(servers.second, servers.namespace))
        let (stagingClient, _) = Self.client(folder: folder, environment: staging)
        try await stagingClient.send(Request<Void>.get("/cookies/set", query: ["session": "staging-1"]))

        let (productionClient, _) = Self.client(folder: folder, environment: production)
        let seen = try await productionClient.send(Request<Jar>.get("/cookies"))
        #expect(seen.cookie == nil, "production saw \(seen.cookie ?? "")")
        let (bob, _) = Self.client(folder: folder, environment: staging, account: "bob")
        #expect(try await bob.send(Request<Jar>.get("/cookies")).cookie == nil)
        // Server-side proof: the second server's log has no Cookie field at all.
        #expect(try await servers.log(servers.second).allSatisfy { $0.header("Cookie") == nil })
    }

    @Test("resetSession clears them on disk: a relaunched client sends none")
    func resetSessionClears() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = try TestServers.apiEnvironment(namespace: TestServers.makeNamespace("ck"))
        let (client, storage) = Self.client(folder: folder, environment: environment)
        try await client.send(Request<Void>.get("/cookies/set", query: ["session": "s-2"]))
        #expect(FileManager.default.fileExists(atPath: storage.fileURL(account: "alice").path))
        try await client.resetSession()
        #expect(!FileManager.default.fileExists(atPath: storage.fileURL(account: "alice").path))
        let (relaunched, _) = Self.client(folder: folder, environment: environment)
        #expect(try await relaunched.send(Request<Jar>.get("/cookies")).cookie == nil)
    }

    @Test("a corrupted cookie file fails the call with a typed error and nothing is sent")
    func corruptedFile() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let namespace = TestServers.makeNamespace("ck")
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        let (client, storage) = Self.client(folder: folder, environment: environment)
        let file = storage.fileURL(account: "alice")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data([0xFF, 0x00, 0x7B]).write(to: file)
        let error = await #expect(throws: NetworkError.self) { try await client.send(Request<Jar>.get("/cookies")) }
        #expect(error?.cookieStorageError.map { if case .corrupted = $0 { true } else { false } } == true)
        #expect(try await TestServers.requestLog(namespace: namespace).isEmpty)
    }

    @Test("a sign-out through one client is seen by another whose folder path leads to the same folder")
    func aSignOutReachesAStorageOnTheSameFolderThroughASymbolicLink() async throws {
        let base = Self.folder()
        defer { try? FileManager.default.removeItem(at: base) }
        // One cookie folder, reached by two paths (a symbolic link here; another letter case on a
        // case-insensitive disk is the same): two clients of one environment and account.
        let folder = base.appendingPathComponent("Cookies", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let link = base.appendingPathComponent("link", isDirectory: true)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: folder)
        let namespace = TestServers.makeNamespace("ck")
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        let (first, _) = Self.client(folder: folder, environment: environment)
        let (second, _) = Self.client(folder: link, environment: environment)
        try await first.send(Request<Void>.get("/cookies/set", query: ["session": "s-1"]))
        #expect(try await second.send(Request<Jar>.get("/cookies")).cookies == ["session": "s-1"])

        try await first.resetSession()  // sign-out
        let seen = try await second.send(Request<Jar>.get("/cookies"))

        #expect(seen.cookie == nil, "the second client still sent \(seen.cookie ?? "")")
        // Server-side proof: the request after the sign-out carried no Cookie field.
        let last = try #require(try await TestServers.requestLog(namespace: namespace, path: "/cookies").last)
        #expect(last.header("Cookie") == nil)
    }

    @Test("a response whose cookies cannot be written is delivered once, and its cookies are sent from memory")
    func aResponseWhoseCookiesCannotBeWrittenIsDeliveredOnce() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let namespace = TestServers.makeNamespace("ck")
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        let (client, storage) = Self.client(folder: folder, environment: environment)
        #expect(try await client.send(Request<Jar>.get("/cookies")).cookie == nil)
        // A folder where the cookie file goes: its write fails as on a full disk.
        let file = storage.fileURL(account: "alice")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: file.appendingPathComponent("obstacle"))

        try await client.send(Request<Void>.get("/cookies/set", query: ["session": "s-4"]))
        #expect(await storage.unsavedChanges() != nil)
        let seen = try await client.send(Request<Jar>.get("/cookies"))
        #expect(seen.cookies == ["session": "s-4"])
        // Server-side proof: the request that set the cookie arrived once (no failure the app
        // would answer by sending it again) and the next one carried the cookie.
        #expect(try await TestServers.requestLog(namespace: namespace, path: "/cookies/set").count == 1)
        let last = try #require(try await TestServers.requestLog(namespace: namespace, path: "/cookies").last)
        #expect(last.header("Cookie") == "session=s-4")

        try FileManager.default.removeItem(at: file)
        _ = try await client.send(Request<Jar>.get("/cookies"))
        #expect(await storage.unsavedChanges() == nil)
        #expect(String(decoding: try Data(contentsOf: file), as: UTF8.self).contains("s-4"))
    }

    @Test("an app and its extension on one cookie folder send each other's cookies, and a sign-out in one reaches the other")
    func anAppAndItsExtensionShareTheirCookiesThroughTheFolder() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let namespace = TestServers.makeNamespace("ck")
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        // Two processes: storages that share nothing in memory, only the folder.
        func process() -> APIClient {
            let storage = PersistentCookieStorage(
                directory: folder, namespace: environment.storageNamespace, account: { "alice" },
                persistsSessionCookies: true, now: { Date() }, sharesMemory: false)
            return APIClient(environment: environment) {
                $0.transport = CookieStoringTransport(storage: storage, base: TestTransport.makeWithoutCookies())
            }
        }
        let app = process()
        let appExtension = process()
        #expect(try await appExtension.send(Request<Jar>.get("/cookies")).cookie == nil)

        try await app.send(Request<Void>.get("/cookies/set", query: ["session": "s-1"]))
        try await appExtension.send(Request<Void>.get("/cookies/set", query: ["theme": "dark"]))
        #expect(try await app.send(Request<Jar>.get("/cookies")).cookies == ["session": "s-1", "theme": "dark"])

        try await app.resetSession()  // sign-out in the app
        #expect(try await appExtension.send(Request<Jar>.get("/cookies")).cookie == nil)
        // Server-side proof: the extension's last request carried no Cookie field.
        let last = try #require(try await TestServers.requestLog(namespace: namespace, path: "/cookies").last)
        #expect(last.header("Cookie") == nil)
    }

    @Test("a sign-out in an extension launched after the account's lock file was deleted reaches the app")
    func aSignOutReachesTheAppAfterTheLockFileWasDeleted() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let namespace = TestServers.makeNamespace("ck")
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        // Two processes: storages that share nothing in memory, only the folder.
        func process() -> (APIClient, PersistentCookieStorage) {
            let storage = PersistentCookieStorage(
                directory: folder, namespace: environment.storageNamespace, account: { "alice" },
                persistsSessionCookies: true, now: { Date() }, sharesMemory: false)
            let client = APIClient(environment: environment) {
                $0.transport = CookieStoringTransport(storage: storage, base: TestTransport.makeWithoutCookies())
            }
            return (client, storage)
        }
        let (app, storage) = process()
        try await app.send(Request<Void>.get("/cookies/set", query: ["session": "s-1"]))
        // The app's cleanup of files it does not know deletes the lock file while the app runs;
        // the extension, launched after, opens a new one and signs the user out.
        try FileManager.default.removeItem(
            at: storage.fileURL(account: "alice").deletingPathExtension().appendingPathExtension("lock"))
        let (appExtension, _) = process()
        #expect(try await appExtension.send(Request<Jar>.get("/cookies")).cookies == ["session": "s-1"])
        try await appExtension.resetSession()

        let seen = try await app.send(Request<Jar>.get("/cookies"))
        #expect(seen.cookie == nil, "the app still sent \(seen.cookie ?? "")")
        // Server-side proof: the app's request after the sign-out carried no Cookie field.
        let last = try #require(try await TestServers.requestLog(namespace: namespace, path: "/cookies").last)
        #expect(last.header("Cookie") == nil)
    }
}
