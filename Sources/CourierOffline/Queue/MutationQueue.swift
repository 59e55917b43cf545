import Foundation
import Courier

/// A durable queue of mutations, delivered in order through an `APIClient` when the server is
/// reachable.
///
/// ```swift
/// let queue = try await MutationQueue.open(path: supportDirectory.appendingPathComponent("outbox.sqlite").path,
///                                          client: client)
/// try await queue.enqueue(.json(id: UUID().uuidString, method: .patch, path: "/items/42", body: edit))
/// for await event in await queue.events() { badge = event.pendingCount }   // "3 changes waiting"
/// await queue.flushes(on: connectivity)                                      // drain when online
/// ```
///
/// - Storage: SQLite in WAL mode with `synchronous=FULL`; ``enqueue(_:)`` returns after the
///   commit, so a change survives a crash or power loss from then on.
/// - Order: FIFO per ``Mutation/group``, one request in flight per group, groups in parallel.
/// - Delivery: through the client's pipeline (auth, logging, metrics, idempotency keys); the
///   mutation's id is its `Idempotency-Key`, so a replay after a crash mid-request is recognised
///   by the server.
/// - Failures: transient ones (offline, timed out, connection lost, 408, 429, 5xx) keep the
///   mutation at the head and pause its group with jittered exponential backoff (`Backoff`,
///   at least the server's `Retry-After`); permanent ones (other 4xx, and a transport failure
///   another try would repeat: a reply that cannot be read as HTTP, such as a response head over
///   the transport's limits, a refused certificate, a bad URL) move it to the dead-letter table
///   (``deadLetters()``) and its group goes on; 409/412 follow the kind's ``ConflictPolicy``.
/// - Triggers: ``enqueue(_:)`` (``Configuration/sendsOnEnqueue``), ``flush()``, a connectivity
///   monitor becoming reachable (``flushes(on:)``), the end of a backoff, and on Apple platforms
///   the app entering the foreground (``LifecycleFlushTrigger``). Nothing polls, except a queue
///   that waits for another process to finish delivering (below).
/// - Environments and accounts: each mutation records the client's environment and the
///   ``Configuration/account`` current at enqueue (``MutationOrigin``) and is sent only there;
///   after a switch it waits or is discarded (``Configuration/foreignMutations``), never sent to
///   another server. Call ``flush()`` after switching back. A mutation of an account goes out only
///   with a token of that account: when the account switches while it is on its way (during the
///   token refresh its send waits for, or after the queue checked the account) the auth step
///   refuses the next user's token, nothing is sent, and the mutation stays queued for its account
///   (see ``Configuration/account`` for the order the app switches in).
/// - Several processes on one file (an app and its extension, two app instances on macOS): every
///   process may enqueue; one queue at a time delivers, holding a lock on the file
///   `<path>-drain.lock` (released by the kernel if its process dies), and delivers every
///   process's mutations in order. A queue that finds the lock held sends nothing and tries again
///   after ``Configuration/drainLockRetryInterval``. A group's backoff pause (and `Retry-After`)
///   is recorded in the file, so every queue on it waits it out (each on its own clock) instead of
///   sending the paused group's head again at once. Coalescing, key generations and the choice
///   of the next mutation are decided inside SQLite transactions, so an edit made in one process
///   while another sends the same id gets a new key and is delivered after it, never lost.
///   On iOS, flush from an app extension only inside a background task: a process suspended while
///   it holds a lock in a shared container is terminated by the system.
/// - Threads: the queue runs on a serial dispatch queue of its own (SQLite calls block), never on
///   Swift's cooperative pool.
public actor MutationQueue {
    let store: MutationStore
    let drainLock: DrainLock
    let client: APIClient
    let configuration: Configuration
    private nonisolated let executor = BlockingWorkExecutor(label: "courier.offline.mutation-queue")

    /// The queue's own serial executor (see the type's documentation, Threads).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    var subscribers: [UUID: AsyncStream<MutationEvent>.Continuation] = [:]
    var drainTask: Task<Void, Never>?
    var drainRequested = false
    var report = FlushReport(sent: 0, deadLettered: 0, dropped: 0, transientFailures: 0, pending: 0)
    /// Consecutive transient failures per group.
    var failures: [String: Int] = [:]
    /// 409 "still processing" answers retried per idempotency key
    /// (``MutationQueue/keyInProgressAttempts``); a key's entry goes when its mutation is sent or resolved.
    var keyInProgressAnswers: [String: Int] = [:]
    /// Groups paused by backoff (this queue's, or one another queue on the file recorded), with
    /// the task that ends the pause on the injected clock.
    var paused: [String: Task<Void, Never>] = [:]
    /// Groups whose pause ended on this queue's clock: the next pass tries them even when the
    /// file's recorded pause (wall clock) is not over yet.
    var resumedGroups: Set<String> = []
    /// Set by a flush that ignores backoff: the next pass tries every group, paused or not.
    var ignoresRecordedPauses = false
    var connectivityTask: Task<Void, Never>?
    /// Set when a write of the queue's bookkeeping failed (read-only file, full disk, I/O error,
    /// busy beyond its timeout): nothing is sent until it is cleared. See ``storageFailure``.
    var failedStorage: MutationQueueError?
    /// The bookkeeping writes that failed, in order, tried again before anything is sent.
    var unrecordedWrites: [() throws -> Void] = []
    /// The wake-up after another queue held the drain lock.
    var lockRetryTask: Task<Void, Never>?
    /// The wake-up that tries failed storage again, and how many tries failed so far.
    var storageRetryTask: Task<Void, Never>?
    var storageRetries = 0
    /// The pending count last read, for events published while a read fails.
    var lastPendingCount = 0
    /// The held mutations (`id#revision`) already reported with a `held` event.
    var announcedHeld: Set<String> = []
    /// The rows (`seq`) that could not be read back and were set aside, each reported once.
    var announcedUnreadable: Set<Int64> = []

    /// Opens (creating or migrating) the queue database at `path` and delivers through `client`.
    /// The file's folder is created when missing (Application Support does not exist in a new
    /// iOS app's container until something creates it).
    ///
    /// Nothing is sent until a trigger fires: call ``flush()`` or ``flushes(on:)`` after launch
    /// to deliver what a previous run left.
    ///
    /// Opening blocks the calling thread for SQLite's open and migration (milliseconds; up to
    /// SQLite's 5 s busy timeout while another process migrates the same file): open the queue
    /// once at launch, and from async code with ``open(path:client:configuration:)``, which
    /// keeps the wait off Swift's cooperative pool.
    ///
    /// - Throws: `NetworkError.missingInterceptor` when `client`'s pipeline cannot keep a kind's
    ///   policy as the queue sends it — an endpoint that requires auth without an `AuthInterceptor`,
    ///   the mutation's `Idempotency-Key` without an `IdempotencyInterceptor` — so no mutation is
    ///   ever sent without its token or key; ``MutationQueueError/storage(_:)`` when the file (or
    ///   its lock file next to it) cannot be opened, is not a database, or can be read but not
    ///   written; ``MutationQueueError/unsupportedSchemaVersion(_:)`` when a newer build wrote it.
    public init(path: String, client: APIClient, configuration: Configuration = Configuration()) throws {
        for kind in [configuration.defaultKind] + configuration.kinds.values {
            let sent = kind.policy.with(\.idempotency, .key("setup-check"))
            if let reason = client.missingCapability(for: sent) { throw NetworkError.missingInterceptor(reason) }
        }
        if !path.isEmpty {
            // Like the other stores' folders (listable by their owner alone); when it cannot be
            // made, opening the file says why.
            try? FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true,
                attributes: AtomicFile.folderAttributes)
        }
        do {
            store = try MutationStore(path: path, now: configuration.now())
            drainLock = try DrainLock(databasePath: path)
        } catch let error as SQLiteError {
            throw MutationQueueError.storage(error)
        }
        self.client = client
        self.configuration = configuration
    }

    /// Opens the queue like ``init(path:client:configuration:)``, on a thread of its own: never
    /// a thread of Swift's cooperative pool, which SQLite's open, migration and fsync would block
    /// (for milliseconds, hundreds of them on a busy disk, up to SQLite's 5 s busy timeout while
    /// another process migrates the same file). The way to open a queue from async code.
    ///
    /// ```swift
    /// let outbox = try await MutationQueue.open(path: supportDirectory.appendingPathComponent("outbox.sqlite").path,
    ///                                           client: client)
    /// ```
    ///
    /// - Throws: As ``init(path:client:configuration:)``. Cancelling the calling task does not
    ///   stop an open under way.
    public static func open(
        path: String, client: APIClient, configuration: Configuration = Configuration()
    ) async throws -> MutationQueue {
        try await withCheckedThrowingContinuation { continuation in
            // A serial queue of its own targets the overcommitting root queue: a thread is added
            // while this one waits for the disk.
            DispatchQueue(label: "courier.offline.open").async {
                continuation.resume(with: Result { try MutationQueue(path: path, client: client, configuration: configuration) })
            }
        }
    }

    /// Makes the queue's database refuse writes (or accept them again), as a read-only file does:
    /// the tests' way to fail storage without waiting for a lock. Not public.
    func refuseStorageWrites(_ refuse: Bool) throws {
        try store.refuseWrites(refuse)
    }

    /// Caps the database at its current size, as a full disk does: the tests' way to get
    /// `SQLITE_FULL` without filling a file system. Not public.
    func capStorageAtCurrentSize() throws {
        try store.capSizeAtCurrent()
    }

    deinit {
        drainTask?.cancel()
        connectivityTask?.cancel()
        lockRetryTask?.cancel()
        storageRetryTask?.cancel()
        for task in paused.values { task.cancel() }
        for continuation in subscribers.values { continuation.finish() }
    }

    // MARK: - Enqueue

    /// Stores `mutation` durably, replacing a pending mutation with the same id, also one that
    /// cannot be read back (coalescing: only the newest payload is sent; its place in the group's
    /// order is kept). A replaced payload that may already have been sent keeps its group too (the edit's group is not applied), so
    /// that it and its replacement are never in flight at once. Returns after the SQLite commit. The mutation belongs to the client's current environment and the current
    /// ``Configuration/account`` (``MutationOrigin``).
    ///
    /// - Throws: ``MutationQueueError/invalidMutation(_:)`` for an empty id, an id outside
    ///   visible ASCII (it is sent as a header value), a path not starting with `/`, or an id
    ///   pending for another environment or account; ``MutationQueueError/storage(_:)`` when the
    ///   commit fails (nothing was stored).
    public func enqueue(_ mutation: Mutation) throws {
        try Self.validate(mutation)
        let origin = currentOrigin
        let replaced = try storage { try store.enqueue(mutation, origin: origin, now: configuration.now()) }
        publish(mutation, .enqueued(replaced: replaced))
        if configuration.sendsOnEnqueue { requestDrain(ignoringBackoff: false) }
    }

    /// The client's environment and the current account.
    var currentOrigin: MutationOrigin {
        MutationOrigin(environment: client.environment.id, account: configuration.account())
    }

    static func validate(_ mutation: Mutation) throws {
        let idBytes = Array(mutation.id.utf8)
        guard !idBytes.isEmpty, idBytes.count <= 200, idBytes.allSatisfy({ (0x21...0x7E).contains($0) }),
            !mutation.id.contains("~")
        else {
            throw MutationQueueError.invalidMutation("id must be 1...200 visible ASCII characters without spaces or \"~\"")
        }
        // A change of server state: a safe method (GET, HEAD, OPTIONS, TRACE; RFC 9110 §9.2.1)
        // changes nothing to replay, and CONNECT is no resource request.
        guard !([.get, .head, .options, .trace, "CONNECT"] as [HTTPMethod]).contains(mutation.method) else {
            throw MutationQueueError.invalidMutation(
                "method \(mutation.method.rawValue) changes nothing on the server: a mutation is POST, PUT, PATCH or DELETE")
        }
        guard mutation.path.hasPrefix("/") else {
            throw MutationQueueError.invalidMutation("path must start with \"/\" (got \(mutation.path))")
        }
        // What `Request` would refuse at send time: refused here, not dead-lettered later.
        guard !mutation.path.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == ".." }) else {
            throw MutationQueueError.invalidMutation("path must not contain a \"..\" segment (got \(mutation.path))")
        }
        // By scalar: "\r\n" is one Character, equal to neither "\r" nor "\n".
        let forbidden: Set<Unicode.Scalar> = ["\r", "\n", "\0"]
        for field in mutation.headers.fields
        where field.name.unicodeScalars.contains(where: forbidden.contains)
            || field.value.unicodeScalars.contains(where: forbidden.contains)
        {
            throw MutationQueueError.invalidMutation("header \(field.name) contains CR, LF or NUL")
        }
        guard !mutation.group.isEmpty, !mutation.kind.isEmpty else {
            throw MutationQueueError.invalidMutation("group and kind must not be empty")
        }
    }

    // MARK: - Inspection

    /// Mutations waiting to be delivered, also those that cannot be read back
    /// (``unreadableMutations()``).
    ///
    /// - Throws: ``MutationQueueError/storage(_:)``.
    public func pendingCount() throws -> Int { try storage { try store.count() } }

    /// How long the oldest pending mutation has waited (seconds, wall clock); `nil` when empty.
    ///
    /// - Throws: ``MutationQueueError/storage(_:)``.
    public func oldestPendingAge() throws -> Duration? {
        guard let oldest = try storage({ try store.oldestEnqueuedAt() }) else { return nil }
        return .seconds(max(0, configuration.now().timeIntervalSince(oldest)))
    }

    /// Pending mutations in delivery order (oldest first, all groups). A stored row that cannot
    /// be read back is not among them: ``unreadableMutations()`` lists it.
    ///
    /// - Throws: ``MutationQueueError/storage(_:)``.
    public func pending() throws -> [PendingMutation] { try storage { try store.pending().readable.map(\.pending) } }

    /// Pending mutations whose stored rows cannot be read back (oldest first), each with its
    /// ``MutationQueueError/unreadableMutation(id:reason:)``: set aside, never sent, and counted
    /// by ``pendingCount()`` until ``discardPending(id:)`` removes them. The mutations behind one,
    /// in its group too, are delivered.
    ///
    /// - Throws: ``MutationQueueError/storage(_:)``.
    public func unreadableMutations() throws -> [UnreadableMutation] { try storage { try store.pending().unreadable } }

    /// Mutations that failed permanently, oldest failure first. A dead letter that cannot be read
    /// back is not among them: ``unreadableDeadLetters()`` lists it.
    ///
    /// - Throws: ``MutationQueueError/storage(_:)``.
    public func deadLetters() throws -> [DeadLetter] { try storage { try store.deadLetters().readable } }

    /// Dead letters whose stored rows cannot be read back (oldest failure first), each with its
    /// ``MutationQueueError/unreadableMutation(id:reason:)``: kept until
    /// ``discardDeadLetter(id:)`` removes them (``retryDeadLetter(id:)`` refuses them).
    ///
    /// - Throws: ``MutationQueueError/storage(_:)``.
    public func unreadableDeadLetters() throws -> [UnreadableMutation] {
        try storage { try store.deadLetters().unreadable }
    }

    /// Moves a dead letter back to the end of its group (after the app fixed what the server
    /// refused, or to try again), in the environment and account it was made in.
    ///
    /// It goes out under the key it was last sent with (a replay of the same payload).
    ///
    /// - Throws: ``MutationQueueError/noSuchDeadLetter(_:)``; ``MutationQueueError/invalidMutation(_:)``
    ///   when a newer change with the same id is pending (retrying would replace it: discard the
    ///   letter instead); ``MutationQueueError/storage(_:)``.
    public func retryDeadLetter(id: String) throws {
        let origin = currentOrigin
        let mutation = try storage { try store.requeueDeadLetter(id: id, origin: origin, now: configuration.now()) }
        publish(mutation, .enqueued(replaced: false))
        if configuration.sendsOnEnqueue { requestDrain(ignoringBackoff: false) }
    }

    /// Deletes a pending mutation without sending it: a change the user abandoned, or one that
    /// cannot be read back (``unreadableMutations()``). Its group goes on with the next mutation; the event is
    /// ``MutationEvent/Outcome/discarded(_:)`` with the origin it was made in. A mutation being
    /// sent at this moment may still reach the server; its outcome is then not reported.
    ///
    /// - Returns: Whether a mutation with `id` was pending.
    /// - Throws: ``MutationQueueError/storage(_:)``.
    @discardableResult
    public func discardPending(id: String) throws -> Bool {
        guard let (group, origin) = try storage({ try store.discardPending(id: id, now: configuration.now()) }) else {
            return false
        }
        publish(id: id, group: group, .discarded(origin))
        if configuration.sendsOnEnqueue { requestDrain(ignoringBackoff: false) }
        return true
    }

    /// Deletes a dead letter.
    ///
    /// - Throws: ``MutationQueueError/noSuchDeadLetter(_:)``, ``MutationQueueError/storage(_:)``.
    public func discardDeadLetter(id: String) throws {
        guard try storage({ try store.discardDeadLetter(id: id, now: configuration.now()) }) else {
            throw MutationQueueError.noSuchDeadLetter(id)
        }
    }

    // MARK: - Events

    /// A stream of every event from now on (buffering the newest 1,000 when the reader is slow).
    /// Finishes when the queue is deallocated or the reader stops iterating.
    public func events() -> AsyncStream<MutationEvent> {
        let (stream, continuation) = AsyncStream<MutationEvent>.makeStream(bufferingPolicy: .bufferingNewest(1_000))
        let id = UUID()
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    private func unsubscribe(_ id: UUID) { subscribers[id] = nil }

    func publish(_ mutation: Mutation, _ outcome: MutationEvent.Outcome) {
        publish(id: mutation.id, group: mutation.group, outcome)
    }

    /// Publishes `outcome` for the mutation `id` of `group`.
    func publish(id: String, group: String, _ outcome: MutationEvent.Outcome) {
        guard !subscribers.isEmpty else { return }
        do {
            lastPendingCount = try store.count()
        } catch {
            // A read for the event's badge only: the event carries the last count read. A storage
            // fault that matters surfaces from the write or read that needs it (storageFailure).
        }
        let count = lastPendingCount
        let event = MutationEvent(mutationID: id, group: group, outcome: outcome, pendingCount: count)
        for continuation in subscribers.values { continuation.yield(event) }
    }

    func storage<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw MutationQueueError.storage(error)
        }
    }
}

extension MutationQueueError {
    /// The queue error for a failed storage call: ``storage(_:)`` with SQLite's error, or the
    /// error itself when it is one already.
    init(storageError error: any Error) {
        if let error = error as? MutationQueueError {
            self = error
        } else if let error = error as? SQLiteError {
            self = .storage(error)
        } else {
            self = .storage(.ioFailure(String(describing: error)))
        }
    }
}
