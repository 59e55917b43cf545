import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A cookie jar on disk that survives relaunch (RFC 6265), opt-in: put it under a
/// ``CookieStoringTransport``. One JSON file per account in
/// `directory/<namespace>/`, written atomically after every change; reads and writes run off
/// Swift's cooperative pool.
///
/// Cookies are partitioned twice: by `namespace` — pass ``APIEnvironment/storageNamespace``, so
/// staging and production never share a session cookie even on one host (cookies do not isolate
/// by port, RFC 6265 §8.5) — and by account, asked of `account` once per request (the same kind
/// of closure as ``HTTPCache/Configuration/partition``). ``APIClient/resetSession(also:)`` deletes
/// the current account's file (through the transport). Storages on the same `directory` and
/// `namespace` in one process (two clients of one environment) share the cookies they read: a
/// cookie stored or a sign-out through one is seen by the others — also when their `directory`
/// paths differ but lead to one folder (a symbolic link, another letter case on a
/// case-insensitive disk). Processes that share the folder (an app and its extensions, the folder
/// in their app group container) share them too: each change of an account's file is made under a
/// `flock(2)` on `<account>.cookies.lock` over the file as it is then, a process reads the file
/// again when another changed it, and a sign-out in one process is not undone by a response another
/// receives for a request sent before it.
///
/// Storage follows RFC 6265 §5.3: a `Domain` attribute the host does not domain-match is ignored,
/// `Max-Age` wins over `Expires`, an expired cookie deletes the one it replaces, a `Secure` cookie
/// is accepted only from `https` (RFC 6265bis) and sent only over `https`. Session cookies (no
/// expiry) are kept across relaunches unless `persistsSessionCookies` is `false` — an app's
/// "session" usually outlives its process. Public-suffix domains (`co.uk`) are not recognised:
/// a server could set a cookie for one; this is the same trust URLSession on Linux gives.
///
/// A file that cannot be read or is not a cookie file is a ``CookieStorageError``, never
/// replaced: every call of that account fails with it until the app removes it. A file that
/// cannot be written (a full disk) fails no call: the cookies are used from memory, the write is
/// tried again on each later request, and ``unsavedChanges(account:)`` reports it meanwhile.
///
/// ```swift
/// let cookies = PersistentCookieStorage(
///     directory: appSupport.appendingPathComponent("Cookies"),
///     namespace: APIEnvironment.production.storageNamespace,
///     account: { "signed-in-user" })
/// let client = APIClient(environment: .production) {
///     $0.transport = CookieStoringTransport(storage: cookies)
/// }
/// ```
public actor PersistentCookieStorage {
    private nonisolated let executor = BlockingWorkExecutor(label: "courier.cookies")
    /// Runs the storage's file I/O on a queue of its own, off the cooperative pool.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The folder holding one sub-folder per namespace.
    public nonisolated let directory: URL
    /// This storage's partition of `directory` (the environment's ``APIEnvironment/storageNamespace``).
    public nonisolated let namespace: String
    /// Whether cookies without an expiry are written to disk; `true` by default.
    public nonisolated let persistsSessionCookies: Bool
    private nonisolated let account: @Sendable () -> String
    private nonisolated let now: @Sendable () -> Date
    /// The cookies read so far and the removal counts of the namespace folder, shared with every
    /// other storage on the same folder in this process; found at the first use (``sharedFolder()``).
    private var folder: CookieFolder?

    /// Creates a storage; nothing is read until the first request.
    ///
    /// - Parameters:
    ///   - directory: Where the cookie files live (Application Support, not Caches: a purged
    ///     cache would sign the user out).
    ///   - namespace: The environment's ``APIEnvironment/storageNamespace``.
    ///   - account: The account of the request being sent; `"shared"` by default.
    ///   - persistsSessionCookies: Whether cookies without an expiry survive relaunch.
    public init(
        directory: URL, namespace: String, account: @escaping @Sendable () -> String = { "shared" },
        persistsSessionCookies: Bool = true
    ) {
        self.init(
            directory: directory, namespace: namespace, account: account, persistsSessionCookies: persistsSessionCookies,
            now: { Date() })
    }

    /// A storage on an injected wall clock (expiry tests); with `sharesMemory` off, it shares
    /// nothing in memory with other storages on its folder — as a storage of another process.
    package init(
        directory: URL, namespace: String, account: @escaping @Sendable () -> String, persistsSessionCookies: Bool,
        now: @escaping @Sendable () -> Date, sharesMemory: Bool = true
    ) {
        self.directory = directory
        self.namespace = namespace
        self.account = account
        self.persistsSessionCookies = persistsSessionCookies
        self.now = now
        self.folder = sharesMemory ? nil : CookieFolder()
    }

    /// The state shared by every storage on this storage's namespace folder, found (and the folder
    /// created) the first time it is needed, on the storage's queue.
    private func sharedFolder() -> CookieFolder {
        if let folder { return folder }
        let found = CookieFolder.shared(folder: directory.appendingPathComponent(Self.fileName(namespace), isDirectory: true))
        folder = found
        return found
    }

    /// The account a request starting now belongs to.
    public nonisolated var currentAccount: String { account() }

    /// The file holding `account`'s cookies.
    public nonisolated func fileURL(account: String) -> URL {
        directory.appendingPathComponent(Self.fileName(namespace), isDirectory: true)
            .appendingPathComponent(Self.fileName(account) + ".cookies.json")
    }

    /// The lock file of `account` (see ``CounterLockFile``).
    nonisolated func lockFileURL(account: String) -> URL {
        directory.appendingPathComponent(Self.fileName(namespace), isDirectory: true)
            .appendingPathComponent(Self.fileName(account) + ".cookies.lock")
    }

    /// Every unexpired cookie of `account` (the current one by default).
    /// - Throws: ``CookieStorageError`` when the file cannot be read or is corrupted.
    public func allCookies(account: String? = nil) throws -> [HTTPCookie] {
        let date = now()
        let account = account ?? currentAccount
        return try sharedFolder().state.withLock { state in
            _ = try synchronized(account, in: &state)
            return try jar(account, in: &state)
        }.values.filter { !$0.isExpired(at: date) }
            .sorted { ($0.domain, $0.path, $0.name) < ($1.domain, $1.path, $1.name) }
            .compactMap(\.httpCookie)
    }

    /// The cookies a request to `url` carries (RFC 6265 §5.4), longest path first.
    /// - Throws: ``CookieStorageError`` when the file cannot be read or is corrupted.
    public func cookies(for url: URL, account: String? = nil) throws -> [HTTPCookie] {
        let account = account ?? currentAccount
        return try sharedFolder().state.withLock { state in
            _ = try synchronized(account, in: &state)
            return try matching(url, account: account, in: &state)
        }.compactMap(\.httpCookie)
    }

    /// Deletes every cookie of `account` (the current one by default), on disk too; other
    /// processes sharing the folder see the removal at their next request.
    /// - Throws: ``CookieStorageError/unwritable(path:reason:)`` when the file cannot be removed,
    ///   or the removal cannot be recorded for other processes in the account's lock file.
    public func removeAll(account: String? = nil) throws {
        let account = account ?? currentAccount
        let file = fileURL(account: account)
        try sharedFolder().state.withLock { state in
            let lock = lockFile(account, in: &state)
            try withLock(lock, exclusive: true) { _ in
                state.removals[account, default: 0] += 1
                state.jars[account] = [:]
                do {
                    if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
                    state.unsaved[account] = nil
                } catch {
                    state.jars[account] = nil  // read again next time: the file is still there
                    throw CookieStorageError.unwritable(path: file.path, reason: "\(error)")
                }
                guard let lock else { return }
                var counters = lock.cookieCounters()
                counters.removals &+= 1
                counters.changes &+= 1
                try lock.write(counters)
                state.seenChanges[account] = counters.changes
            }
        }
    }

    /// The account's removals when a request was sent: in this process, and by any process
    /// (`nil` without a lock file). The response's cookies are stored only when both are still the same.
    struct SentMark: Sendable, Equatable {
        var removals: Int
        var sharedRemovals: UInt64?
    }

    /// The `Cookie` field value for a request to `url` (`nil` when no cookie matches) and the
    /// account's removal counts at this moment, which the response's cookies are stored under.
    ///
    /// The cookie file is read again first when another process changed it. When an earlier write
    /// of the account failed (``unsavedChanges(account:)``), it is tried again; failing again, the
    /// request still goes out with the cookies in memory.
    func cookieHeader(for url: URL, account: String) throws -> (field: String?, sentAt: SentMark) {
        let (cookies, sentAt) = try sharedFolder().state.withLock { state in
            let shared = try synchronized(account, in: &state)
            if state.unsaved[account] != nil {
                do {
                    try change(account, in: &state) { _ in }
                } catch {
                    // Kept in `unsaved`: the request goes out with the cookies in memory.
                }
            }
            let mark = SentMark(removals: state.removals[account, default: 0], sharedRemovals: shared?.removals)
            return (try matching(url, account: account, in: &state), mark)
        }
        guard !cookies.isEmpty else { return (nil, sentAt) }
        return (cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; "), sentAt)
    }

    /// Stores the cookies of `Set-Cookie` field values received from `url`, writing the file
    /// when anything changed. Nothing is stored when the account's cookies were removed since the
    /// request was sent (`sentAt`, from ``cookieHeader(for:account:)``): a sign-out or session
    /// reset while a call was in flight must not let its late answer restore the old session.
    /// A removal by another process counts too (``CookieFileCounters/removals``).
    func store(setCookieFields fields: [String], receivedFrom url: URL, account: String, sentAt: SentMark) throws {
        guard !fields.isEmpty else { return }
        try sharedFolder().state.withLock { state in
            guard state.removals[account, default: 0] == sentAt.removals else { return }
            try change(account, unlessRemovedSince: sentAt.sharedRemovals, in: &state) { jar in
                apply(fields, receivedFrom: url, to: &jar)
            }
        }
    }

    /// ``store(setCookieFields:receivedFrom:account:sentAt:)`` for a request sent when the
    /// account's cookies had been removed `sentAt` times in this process.
    func store(setCookieFields fields: [String], receivedFrom url: URL, account: String, sentAt: Int) throws {
        try store(setCookieFields: fields, receivedFrom: url, account: account, sentAt: SentMark(removals: sentAt))
    }

    /// Changes `account`'s cookies with `body` and writes the file when anything changed (or an
    /// earlier write failed), holding the account's lock file when it has one: the file is read
    /// again first when another process changed it since this one last read or wrote it, so no
    /// process writes over another's cookies. Nothing is changed when `removals` is not `nil` and
    /// another count of removals is on file.
    /// - Throws: ``CookieStorageError``; a failed write is also kept in `unsaved`.
    private nonisolated func change(
        _ account: String, unlessRemovedSince removals: UInt64? = nil, in state: inout CookieFolder.State,
        _ body: (inout [StoredCookie.Key: StoredCookie]) -> Void
    ) throws {
        let lock = lockFile(account, in: &state)
        try withLock(lock, exclusive: true) { replaced in
            if replaced { forgetFile(account, in: &state) }
            var counters = lock?.cookieCounters()
            if let removals, let counters, counters.removals != removals { return }
            if let counters { try synchronize(account, changes: counters.changes, in: &state) }
            var jar = try jar(account, in: &state)
            let before = jar
            body(&jar)
            guard jar != before || state.unsaved[account] != nil else { return }
            state.jars[account] = jar
            do {
                try write(jar, account: account)
                if let lock, var written = counters {
                    written.changes &+= 1
                    try lock.write(written)
                    counters = written
                    state.seenChanges[account] = written.changes
                }
                state.unsaved[account] = nil
            } catch let error as CookieStorageError {
                state.unsaved[account] = error
                throw error
            }
        }
    }

    /// Applies `fields` received from `url` to `jar` (RFC 6265 §5.3, with the rules of RFC 6265bis
    /// noted below).
    private nonisolated func apply(_ fields: [String], receivedFrom url: URL, to jar: inout [StoredCookie.Key: StoredCookie]) {
        let date = now()
        let secureOrigin = url.scheme?.lowercased() == "https"
        for field in fields {
            guard var cookie = SetCookieParser.cookie(from: field, receivedFrom: url, at: date) else { continue }
            // RFC 6265bis §5.7 step 16: an insecure origin never replaces nor deletes a Secure
            // cookie of the same name whose domain and path overlap its own (session fixation
            // over plain http).
            if !secureOrigin, jar.values.contains(where: { $0.secure && $0.shadows(cookie) }) { continue }
            if cookie.isExpired(at: date) {
                jar[cookie.key] = nil
                continue
            }
            if let old = jar[cookie.key] { cookie.created = old.created }  // §5.3 step 11.3
            jar[cookie.key] = cookie
        }
        jar = Self.bounded(jar.filter { !$0.value.isExpired(at: date) })
    }

    /// `account`'s lock file, opened at its first use; `nil` when it cannot be opened (tried again
    /// next time).
    private nonisolated func lockFile(_ account: String, in state: inout CookieFolder.State) -> CounterLockFile? {
        if let lock = state.lockFiles[account] { return lock }
        guard let lock = CounterLockFile.cookies(lockFileURL(account: account)) else { return nil }
        state.lockFiles[account] = lock
        return lock
    }

    /// Runs `body` holding `lock` when there is one, telling it whether the lock file was opened
    /// again (see ``CounterLockFile/withLock(exclusive:_:)``).
    private nonisolated func withLock<T>(_ lock: CounterLockFile?, exclusive: Bool, _ body: (Bool) throws -> T) rethrows -> T {
        guard let lock else { return try body(false) }
        return try lock.withLock(exclusive: exclusive, body)
    }

    /// Forgets what this process read of `account`'s file and the change count it saw: its lock
    /// file was deleted or replaced (a cleanup of files the app does not know), and the new one's
    /// count, from zero again, may equal the old one's while another process changed the file.
    private nonisolated func forgetFile(_ account: String, in state: inout CookieFolder.State) {
        state.seenChanges[account] = nil
        state.jars[account] = nil
        state.unsaved[account] = nil
    }

    /// Reads `account`'s counters (under the shared lock) and takes in another process's change of
    /// its file; `nil` without a lock file.
    private nonisolated func synchronized(_ account: String, in state: inout CookieFolder.State) throws -> CookieFileCounters? {
        guard let lock = lockFile(account, in: &state) else { return nil }
        let counters = lock.withLock(exclusive: false) { replaced in
            if replaced { forgetFile(account, in: &state) }
            return lock.cookieCounters()
        }
        try synchronize(account, changes: counters.changes, in: &state)
        return counters
    }

    /// Reads `account`'s file again when its change count is not the one this process last saw
    /// (another process wrote or removed it); what memory held and could not write is then
    /// superseded by the other process's file.
    private nonisolated func synchronize(_ account: String, changes: UInt64, in state: inout CookieFolder.State) throws {
        guard state.seenChanges[account] != changes else { return }
        if state.seenChanges[account] != nil || changes != 0 {
            state.jars[account] = nil
            state.unsaved[account] = nil
        }
        _ = try jar(account, in: &state)
        state.seenChanges[account] = changes
    }

    /// The write failure (a full disk, a file that cannot be replaced) that left `account`'s
    /// cookies (the current account's by default) newer in memory than in their file, or `nil`
    /// when the file holds them all.
    ///
    /// Such cookies stay in use for this process's requests, and every later request of the
    /// account tries the write again (a relaunch before one succeeds would miss them). A
    /// ``CookieStoringTransport`` does not fail a call because its response's cookies could not
    /// be written: the server has answered, and may have acted on the request.
    public func unsavedChanges(account: String? = nil) -> CookieStorageError? {
        let account = account ?? currentAccount
        return sharedFolder().state.withLock { $0.unsaved[account] }
    }

    /// The most cookies kept per domain, and in all (RFC 6265bis §6.1 asks for at least 50 and
    /// 3000; more only make the `Cookie` field grow).
    static let maximumPerDomain = 50
    static let maximumTotal = 3000

    /// `jar` within the limits: the cookies created last go first when a domain or the jar has too
    /// many, so a server cannot grow the `Cookie` field of every request without bound.
    static func bounded(_ jar: [StoredCookie.Key: StoredCookie]) -> [StoredCookie.Key: StoredCookie] {
        var byDomain: [String: [StoredCookie]] = [:]
        for cookie in jar.values { byDomain[cookie.domain, default: []].append(cookie) }
        guard byDomain.values.contains(where: { $0.count > maximumPerDomain }) || jar.count > maximumTotal else {
            return jar
        }
        let oldestFirst: (StoredCookie, StoredCookie) -> Bool = {
            $0.created != $1.created ? $0.created < $1.created : ($0.name, $0.path) < ($1.name, $1.path)
        }
        let kept = byDomain.values.flatMap { $0.sorted(by: oldestFirst).prefix(maximumPerDomain) }
            .sorted(by: oldestFirst).prefix(maximumTotal)
        return Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0) })
    }

    private nonisolated func matching(
        _ url: URL, account: String, in state: inout CookieFolder.State
    ) throws
        -> [StoredCookie]
    {
        let date = now()
        return try jar(account, in: &state).values.filter { $0.matches(url, at: date) }
            .sorted {  // §5.4 step 2: longer paths first, then earlier creation (then by name, to be stable)
                if $0.path.count != $1.path.count { return $0.path.count > $1.path.count }
                return $0.created != $1.created ? $0.created < $1.created : $0.name < $1.name
            }
    }

    /// `account`'s cookies, read from disk the first time.
    private nonisolated func jar(
        _ account: String, in state: inout CookieFolder.State
    ) throws
        -> [StoredCookie.Key: StoredCookie]
    {
        if let jar = state.jars[account] { return jar }
        let file = fileURL(account: account)
        let data: Data
        do {
            data = try Data(contentsOf: file)
            // A file an earlier version wrote 0644 holds the session cookie too.
            AtomicFile.makePrivate(file)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            state.jars[account] = [:]
            return [:]
        } catch {
            if !FileManager.default.fileExists(atPath: file.path) {
                state.jars[account] = [:]
                return [:]
            }
            throw CookieStorageError.unreadable(path: file.path, reason: "\(error)")
        }
        let decoded: CookieFile
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            decoded = try decoder.decode(CookieFile.self, from: data)
        } catch {
            throw CookieStorageError.corrupted(path: file.path, reason: "not a cookie file (\(data.count) bytes)")
        }
        guard decoded.version == CookieFile.currentVersion else {
            throw CookieStorageError.corrupted(path: file.path, reason: "unknown version \(decoded.version)")
        }
        let jar = Dictionary(decoded.cookies.map { ($0.key, $0) }, uniquingKeysWith: { $1 })
        state.jars[account] = jar
        return jar
    }

    private nonisolated func write(_ jar: [StoredCookie.Key: StoredCookie], account: String) throws {
        let file = fileURL(account: account)
        let kept = jar.values.filter { persistsSessionCookies || $0.expires != nil }
            .sorted { ($0.domain, $0.path, $0.name) < ($1.domain, $1.path, $1.name) }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            encoder.dateEncodingStrategy = .secondsSince1970
            try AtomicFile.write(
                try encoder.encode(CookieFile(version: CookieFile.currentVersion, cookies: kept)), to: file, durable: true)
        } catch {
            throw CookieStorageError.unwritable(path: file.path, reason: "\(error)")
        }
    }

    /// A file-name-safe spelling of `name`: ASCII letters, digits, `-` and `_` as they are, every
    /// other byte as `%XX` — `.` too, so no account names `..` or a hidden file — and distinct
    /// names stay distinct.
    static func fileName(_ name: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_".utf8)
        let encoded = name.utf8.map { safe.contains($0) ? String(UnicodeScalar($0)) : String(format: "%%%02X", $0) }.joined()
        return encoded.isEmpty ? "%" : encoded
    }
}

/// The cookies of one namespace folder in memory, shared by every ``PersistentCookieStorage`` on
/// that folder in this process: a sign-out or a new cookie through one storage is seen by the
/// others at once, and none writes back a copy the others changed.
final class CookieFolder: Sendable {
    struct State: Sendable {
        /// The accounts read so far, by account.
        var jars: [String: [StoredCookie.Key: StoredCookie]] = [:]
        /// How many times each account's cookies were removed: a response to a request sent
        /// before a removal must not bring the removed session back.
        var removals: [String: Int] = [:]
        /// The accounts whose cookies in memory are newer than their file, with the write failure
        /// that left them so; each later request of the account tries the write again.
        var unsaved: [String: CookieStorageError] = [:]
        /// Each account's lock file, open for the folder's life (see ``CounterLockFile``).
        var lockFiles: [String: CounterLockFile] = [:]
        /// The change count (``CookieFileCounters/changes``) of each account's file as this
        /// process last read or wrote it.
        var seenChanges: [String: UInt64] = [:]
    }

    /// Held for each whole read-change-write of a jar (file I/O included: the storages run it on
    /// their own queues, off the cooperative pool).
    let state = Locked(State())

    deinit {
        state.withLock { state in
            for lock in state.lockFiles.values { lock.close() }
        }
    }

    /// The folders in use (see ``FolderRegistry``).
    private static let registry = FolderRegistry<CookieFolder>()

    /// The state of the folder at `url`, shared with every storage on it however its path is
    /// spelled (see ``FolderIdentity/key(of:)``).
    static func shared(folder url: URL) -> CookieFolder {
        registry.value(for: url) { CookieFolder() }
    }
}

/// The on-disk shape: `{"version": 1, "cookies": [...]}`, dates in Unix seconds.
private struct CookieFile: Codable {
    static let currentVersion = 1
    var version: Int
    var cookies: [StoredCookie]
}
