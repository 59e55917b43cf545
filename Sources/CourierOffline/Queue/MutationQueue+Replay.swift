import Foundation
import Courier

extension MutationQueue {
    /// Delivers every pending mutation that can go now and returns when no group can make
    /// progress: each group is empty, or waiting after a transient failure (its backoff is
    /// scheduled; the flush does not wait for it). Backoff pauses are ignored: an explicit flush
    /// tries every group at once.
    ///
    /// Joins a drain already under way. Cancelling the calling task cancels the request in
    /// flight; the queue is left as it was (the mutation stays at the head, unchanged).
    ///
    /// Only mutations of the client's current environment and account are sent; the others are
    /// held or discarded (``Configuration/foreignMutations``). When another queue on the same
    /// file is delivering (another process), nothing is sent and
    /// ``FlushReport/otherQueueDelivering`` says so.
    ///
    /// - Throws: ``MutationQueueError/storage(_:)`` when a write of the queue's bookkeeping failed
    ///   (``storageFailure``): delivery stopped, and resumes on a later flush once storage works.
    @discardableResult
    public func flush() async throws -> FlushReport {
        var task = requestDrain(ignoringBackoff: true)
        while true {
            let joined = task
            await withTaskCancellationHandler {
                await joined.value
            } onCancel: {
                joined.cancel()
            }
            // The drain this flush joined was cancelled by another caller's cancelled flush; this
            // one was not, so it drains again rather than report what the other left undone.
            guard task.isCancelled, !Task.isCancelled else { break }
            task = requestDrain(ignoringBackoff: true)
        }
        var result = report
        do {
            result.pending = try store.count()
        } catch {
            noteStorageFailure(error, mutation: nil)
        }
        if let failedStorage { throw failedStorage }
        return result
    }

    /// Why the queue is not delivering: a write of its bookkeeping failed (the file became
    /// read-only, the disk is full, an I/O error, another connection held the database beyond its
    /// busy timeout), or `nil` while storage works. While set, nothing is sent: a mutation whose
    /// delivery could not be recorded would otherwise be sent again. Every later flush (explicit,
    /// on connectivity or on enqueue, and the queue's own retries on its `Backoff`
    /// schedule: 1 s, 2 s, 4 s … up to the backoff's cap) first writes what could not be written;
    /// once that works the queue clears this and delivers again. The ``MutationEvent/Outcome/storageUnavailable(_:)``
    /// event reports the moment it is set.
    public var storageFailure: MutationQueueError? { failedStorage }

    /// Writes the bookkeeping that failed before; returns whether storage works again.
    private func recordUnrecordedWrites() -> Bool {
        guard failedStorage != nil else { return true }
        while let write = unrecordedWrites.first {
            do {
                try write()
            } catch {
                failedStorage = MutationQueueError(storageError: error)
                return false
            }
            unrecordedWrites.removeFirst()
        }
        failedStorage = nil
        storageRetries = 0
        storageRetryTask?.cancel()
        storageRetryTask = nil
        return true
    }

    /// While storage fails, tries it again on the backoff schedule (each try is a drain whose
    /// first step writes what failed).
    private func scheduleStorageRetry() {
        guard failedStorage != nil, storageRetryTask == nil else { return }
        storageRetries += 1
        let delay = configuration.backoff.delay(
            afterFailures: storageRetries, random: configuration.random(), retryAfter: nil)
        storageRetryTask = wakeUp(after: delay) { $0.retryStorage() }
    }

    /// A task that sleeps `delay` on the queue's clock, then runs `action` on the queue (unless
    /// cancelled, or the queue is gone).
    private func wakeUp(
        after delay: Duration, _ action: @escaping @Sendable (isolated MutationQueue) -> Void
    ) -> Task<Void, Never> {
        let clock = configuration.clock
        return Task { [weak self] in
            do { try await clock.sleep(for: delay) } catch { return }
            await self?.run(action)
        }
    }

    private func run(_ action: @Sendable (isolated MutationQueue) -> Void) { action(self) }

    private func retryStorage() {
        storageRetryTask = nil
        requestDrain(ignoringBackoff: false)
    }

    /// Stops delivery after a failed bookkeeping write; `retry` is the write to try again.
    func noteStorageFailure(_ error: any Error, mutation: Mutation?, retry: (() throws -> Void)? = nil) {
        if let retry { unrecordedWrites.append(retry) }
        let first = failedStorage == nil
        failedStorage = MutationQueueError(storageError: error)
        if first, let mutation, let failure = failedStorage { publish(mutation, .storageUnavailable(failure)) }
    }

    /// Starts a drain, or asks the running one for another pass. Returns the drain task.
    @discardableResult
    func requestDrain(ignoringBackoff: Bool) -> Task<Void, Never> {
        if ignoringBackoff {
            for task in paused.values { task.cancel() }
            paused.removeAll()
            ignoresRecordedPauses = true
        }
        if let drainTask {
            drainRequested = true
            return drainTask
        }
        report = FlushReport(sent: 0, deadLettered: 0, dropped: 0, transientFailures: 0, pending: 0)
        let task = Task { await self.drain() }
        drainTask = task
        return task
    }

    private func drain() async {
        defer {
            drainLock.release()
            drainTask = nil
            scheduleStorageRetry()
            // A flush trigger (connectivity, the app's lifecycle, an enqueue) joined this drain
            // after it was cancelled: it gets a drain of its own instead of being lost.
            if drainRequested, Task.isCancelled {
                drainRequested = false
                requestDrain(ignoringBackoff: false)
            }
        }
        do {
            guard try drainLock.tryAcquire() else {
                report.otherQueueDelivering = true
                scheduleLockRetry()
                return
            }
        } catch {
            noteStorageFailure(error, mutation: nil)
            return
        }
        // Passes run for rows another queue on the file (an app extension) stored while this one
        // held the drain lock: it was turned away, and may have ended since.
        var passesForOthers = 0
        repeat {
            drainRequested = false
            guard recordUnrecordedWrites() else { break }
            let origin = currentOrigin
            let groups: [String]
            do {
                try settleForeignMutations(origin: origin)
                groups = dueGroups(try store.groups(for: origin, now: configuration.now()))
            } catch {
                noteStorageFailure(error, mutation: nil)
                break
            }
            await withTaskGroup(of: Void.self) { tasks in
                for group in groups {
                    tasks.addTask { await self.drain(group: group, origin: origin) }
                }
            }
            if !drainRequested, !Task.isCancelled, failedStorage == nil, passesForOthers < Self.passesForOtherQueues {
                do {
                    // A group this pass did not deliver (new since it read the groups) is another
                    // queue's: deliver it before letting the lock go (bounded, so a group that
                    // cannot move — a switched environment — does not spin).
                    let now = configuration.now()
                    let waiting = try store.groups(for: currentOrigin, now: now).filter { group, retryAt in
                        paused[group] == nil && !groups.contains(group) && (retryAt.map { $0 <= now } ?? true)
                    }
                    if !waiting.isEmpty {
                        passesForOthers += 1
                        drainRequested = true
                    }
                } catch {
                    noteStorageFailure(error, mutation: nil)
                }
            }
        } while drainRequested && !Task.isCancelled
    }

    /// Extra passes per drain for groups other queues on the file added meanwhile.
    static let passesForOtherQueues = 3

    /// The groups this pass tries: not paused here, and past the pause any queue on the file
    /// recorded (unless its pause ended on this queue's clock, or a flush ignores backoff). A
    /// group another queue paused gets a wake-up here for the rest of its pause.
    private func dueGroups(_ groups: [(group: String, retryAt: Date?)]) -> [String] {
        let resumed = resumedGroups
        let ignoresPauses = ignoresRecordedPauses
        resumedGroups = []
        ignoresRecordedPauses = false
        let now = configuration.now()
        return groups.compactMap { group, retryAt in
            guard paused[group] == nil else { return nil }
            if let retryAt, retryAt > now, !ignoresPauses, !resumed.contains(group) {
                pause(group: group, for: .seconds(retryAt.timeIntervalSince(now)))
                return nil
            }
            return group
        }
    }

    /// Tries the drain again after ``Configuration/drainLockRetryInterval``, while mutations wait.
    private func scheduleLockRetry() {
        guard lockRetryTask == nil else { return }
        lockRetryTask = wakeUp(after: configuration.drainLockRetryInterval) { $0.retryAfterLockContention() }
    }

    private func retryAfterLockContention() {
        lockRetryTask = nil
        do {
            guard try store.count() > 0 else { return }
        } catch {
            noteStorageFailure(error, mutation: nil)
            return
        }
        requestDrain(ignoringBackoff: false)
    }

    /// Holds or discards the mutations made in another environment or account (never sends them).
    private func settleForeignMutations(origin: MutationOrigin) throws {
        let foreign = try store.foreign(to: origin)
        report.held = 0
        for stored in foreign {
            switch configuration.foreignMutations {
            case .hold:
                report.held += 1
                // Once per payload: every drain (each enqueue starts one) finds it again.
                if announcedHeld.insert("\(stored.mutation.id)#\(stored.revision)").inserted {
                    publish(stored.mutation, .held(stored.origin))
                }
            case .discard:
                guard try store.remove(stored, now: configuration.now()) else { continue }
                report.discarded += 1
                publish(stored.mutation, .discarded(stored.origin))
            }
        }
    }

    /// Sends the group's head until the group is empty, paused, or the drain is cancelled.
    private func drain(group: String, origin: MutationOrigin) async {
        while !Task.isCancelled, paused[group] == nil, failedStorage == nil {
            var stored: StoredMutation
            do {
                let (head, unreadable) = try store.head(group: group, origin: origin)
                // A row that cannot be read back can never be sent: it is set aside (stored,
                // listed by unreadableMutations()) like a dead letter, and its group goes on;
                // reported once per row.
                for (seq, error) in unreadable where announcedUnreadable.insert(seq).inserted {
                    guard case .unreadableMutation(let id, _) = error else { continue }
                    publish(id: id ?? "", group: group, .storageUnavailable(error))
                }
                guard let head else { return }
                stored = head
            } catch {
                noteStorageFailure(error, mutation: nil)
                return
            }
            // Whether an earlier attempt under this key may have reached the server: one that
            // failed, or one claimed and never recorded (a cancelled flush, a crash).
            let sentBefore = stored.mayHaveSent || stored.attempts > 0
            do {
                // Recorded as possibly sent before it goes out: unwritable storage stops here.
                guard try store.claim(stored) else { continue }  // replaced meanwhile: read again
                stored.mayHaveSent = true
            } catch {
                noteStorageFailure(error, mutation: stored.mutation)
                return
            }
            // The account may have changed since the drain started: such a mutation waits.
            if stored.origin.environment != nil, configuration.account() != stored.origin.account { return }
            let kind = configuration.kind(stored.mutation.kind)
            let response: Response<Void>
            do {
                response = try await client.response(
                    for: request(for: stored, policy: kind.policy), requiredEnvironment: stored.origin.environment,
                    requiredSignIn: signInRequirement(for: stored.origin))
            } catch is EnvironmentMismatch {
                // The client switched environments since the drain started: nothing was sent;
                // the next flush holds or discards it.
                return
            } catch is SignInMismatch {
                // The token to attach was of another sign-in (the account switched after the check
                // above, or while the send awaited a refresh): nothing was sent, the mutation stays
                // at its group's head for its account; the next flush holds or discards it, or
                // sends it once its account is signed in again.
                return
            } catch {
                guard await handleFailure(error, stored: stored, sentBefore: sentBefore, group: group, kind: kind) else {
                    return
                }
                continue
            }
            failures[group] = nil
            keyInProgressAnswers[stored.idempotencyKey] = nil
            report.sent += 1
            do {
                _ = try store.remove(stored, now: configuration.now())
            } catch {
                // Delivered but not recorded: nothing more is sent until the removal is written,
                // or the same mutation would go out again.
                noteStorageFailure(error, mutation: stored.mutation) { [store, now = configuration.now()] in
                    _ = try store.remove(stored, now: now)
                }
                publish(stored.mutation, .sent(statusCode: response.statusCode))
                return
            }
            publish(stored.mutation, .sent(statusCode: response.statusCode))
        }
    }

    /// Classifies a failed delivery and records what follows (backoff, dead letter, conflict).
    /// Returns whether the group goes on with its next mutation.
    /// `sentBefore`: an earlier attempt under the same key may have reached the server.
    private func handleFailure(
        _ error: any Error, stored: StoredMutation, sentBefore: Bool, group: String, kind: KindPolicy
    ) async -> Bool {
        do {
            var failure = FailureClass.of(error, now: configuration.now())
            // A 409 to a key an earlier attempt already carried without a final answer (a timeout,
            // a lost connection, a flush cancelled or a process ended mid-request) is the server
            // saying that request is still being processed (draft-ietf-httpapi-idempotency-key-header:
            // a retry during processing gets 409), not a conflict of data: resolving it would send
            // the change again under a new key, or drop it. It is retried under the same key after
            // a backoff, a bounded number of times.
            // Counted per key apart from the other failures: timeouts that never reached the server
            // do not use up the waits of the one request that did.
            if failure == .conflict, (error as? NetworkError)?.failedResponse?.statusCode == 409, sentBefore,
                keyInProgressAnswers[stored.idempotencyKey, default: 0] < Self.keyInProgressAttempts
            {
                keyInProgressAnswers[stored.idempotencyKey, default: 0] += 1
                failure = .transient(retryAfter: nil)
            }
            switch failure {
            case .cancelled:
                return false
            case .transient(let retryAfter):
                let delay = pause(group: group, failures: stored.attempts, retryAfter: retryAfter)
                let reason = String(describing: error)
                let pauseSeconds = Self.seconds(delay)
                let retryAt = configuration.now().addingTimeInterval(pauseSeconds)
                do {
                    try store.recordFailure(stored, reason: reason, retryAt: retryAt, pause: pauseSeconds)
                } catch {
                    noteStorageFailure(error, mutation: stored.mutation) { [store] in
                        try store.recordFailure(stored, reason: reason, retryAt: retryAt, pause: pauseSeconds)
                    }
                }
                report.transientFailures += 1
                publish(stored.mutation, .retrying(error as? NetworkError ?? .transport(URLError(.unknown)), delay: delay))
                return false
            case .permanent:
                keyInProgressAnswers[stored.idempotencyKey] = nil
                deadLetter(stored, error: error)
            case .conflict:
                keyInProgressAnswers[stored.idempotencyKey] = nil
                await resolveConflict(stored, error: error, policy: kind.conflictPolicy)
            }
        }
        return failedStorage == nil
    }

    /// What ties a mutation's send to its account: its token must be of a sign-in current while
    /// ``Configuration/account`` reports the mutation's account (``SignInRequirement``). `nil` for
    /// a mutation of no account (the app declares none, or none was current) or of an unrecorded
    /// origin: those go with whichever sign-in is current, as before.
    func signInRequirement(for origin: MutationOrigin) -> SignInRequirement? {
        guard origin.environment != nil, let account = origin.account else { return nil }
        let current = configuration.account
        return SignInRequirement { current() == account }
    }

    /// The request for a stored mutation: its method, path, query, headers and body, with its
    /// idempotency key in the policy. A `Retry-After` is never waited out inside the call
    /// (`maxRetryAfter` zero: a paused host fails the call at once): the queue waits itself, with
    /// the change back in the outbox, so an edit made meanwhile still replaces it.
    func request(for stored: StoredMutation, policy: EndpointPolicy) -> Request<Void> {
        let mutation = stored.mutation
        let body: RequestBody =
            mutation.body.map { .data($0, contentType: mutation.contentType ?? "application/octet-stream") } ?? .none
        var retry = policy.retry
        retry.maxRetryAfter = .zero
        return Request<Void>(
            method: mutation.method, path: mutation.path, query: Query(mutation.query), headers: mutation.headers, body: body,
            policy: policy.with(\.idempotency, .key(stored.idempotencyKey)).with(\.retry, retry))
    }

    /// Pauses `group` for the backoff delay after one more failure and schedules its wake-up.
    /// `failures`: the failed attempts the file recorded for its head (also those of other queues
    /// on the file), so the backoff grows whichever queue failed before. Returns the delay.
    private func pause(group: String, failures recorded: Int, retryAfter: Duration?) -> Duration {
        let count = max(failures[group] ?? 0, recorded) + 1
        failures[group] = count
        let delay = configuration.backoff.delay(afterFailures: count, random: configuration.random(), retryAfter: retryAfter)
        pause(group: group, for: delay)
        return delay
    }

    /// Pauses `group` for `delay` on the injected clock.
    private func pause(group: String, for delay: Duration) {
        paused[group]?.cancel()
        let clock = configuration.clock
        paused[group] = Task { [weak self] in
            do { try await clock.sleep(for: delay) } catch { return }
            await self?.resume(group: group)
        }
    }

    private func resume(group: String) {
        guard paused.removeValue(forKey: group) != nil else { return }
        resumedGroups.insert(group)
        requestDrain(ignoringBackoff: false)
    }

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    private func deadLetter(_ stored: StoredMutation, error: any Error) {
        let response = (error as? NetworkError)?.failedResponse
        let reason: String
        if let networkError = error as? NetworkError {
            reason = response.map { "HTTP \($0.statusCode): \(networkError.userMessage)" } ?? String(describing: networkError)
        } else {
            reason = String(describing: error)
        }
        let now = configuration.now()
        let letter: DeadLetter?
        do {
            letter = try store.deadLetter(
                stored, statusCode: response?.statusCode, reason: reason, responseBody: response?.body ?? Data(), now: now)
        } catch {
            // Not moved: it would be sent again. Nothing goes out until the move is written.
            noteStorageFailure(error, mutation: stored.mutation) { [store] in
                _ = try store.deadLetter(
                    stored, statusCode: response?.statusCode, reason: reason, responseBody: response?.body ?? Data(),
                    now: now)
            }
            return
        }
        guard let letter else { return }
        report.deadLettered += 1
        publish(stored.mutation, .deadLettered(letter))
    }

    private func resolveConflict(_ stored: StoredMutation, error: any Error, policy: ConflictPolicy) async {
        guard let response = (error as? NetworkError)?.failedResponse else { return deadLetter(stored, error: error) }
        let status = response.statusCode
        if stored.conflicts >= configuration.maxConflictResolutions {
            publish(stored.mutation, .conflict(.unresolved, statusCode: status))
            return deadLetter(stored, error: error)
        }
        switch policy {
        case .serverWins:
            drop(stored, resolution: .serverWon, status: status)
        case .lastWriteWins:
            var mutation = stored.mutation
            for name in Self.preconditionFields { mutation.headers.remove(name) }
            do {
                if try store.rewrite(stored, with: mutation) {
                    publish(mutation, .conflict(.resentWithoutPreconditions, statusCode: status))
                }
            } catch {
                noteStorageFailure(error, mutation: mutation) { [store] in _ = try store.rewrite(stored, with: mutation) }
            }
        case .merge(let merge):
            do {
                if var merged = try await merge(MutationConflict(mutation: stored.mutation, response: response)) {
                    merged.id = stored.mutation.id
                    merged.group = stored.mutation.group
                    try Self.validate(merged)
                    let resolved = merged
                    do {
                        if try store.rewrite(stored, with: resolved) { publish(resolved, .conflict(.merged, statusCode: status)) }
                    } catch {
                        noteStorageFailure(error, mutation: resolved) { [store] in _ = try store.rewrite(stored, with: resolved) }
                    }
                } else {
                    drop(stored, resolution: .mergeDropped, status: status)
                }
            } catch {
                publish(stored.mutation, .conflict(.unresolved, statusCode: status))
                deadLetter(stored, error: error)
            }
        }
    }

    private func drop(_ stored: StoredMutation, resolution: ConflictResolution, status: Int) {
        do {
            guard try store.remove(stored, now: configuration.now()) else { return }
        } catch {
            noteStorageFailure(error, mutation: stored.mutation) { [store, now = configuration.now()] in
                _ = try store.remove(stored, now: now)
            }
            return
        }
        report.dropped += 1
        publish(stored.mutation, .conflict(resolution, statusCode: status))
    }

    /// How many 409 answers to one key, after an attempt under it that may have reached the
    /// server, are taken for "still processing" and retried under the key over the backoff (8, counted
    /// by this queue since it was created); the next is resolved as a data conflict (a server that
    /// answers 409 to the change whatever the key).
    static let keyInProgressAttempts = 8

    /// Conditional request fields (RFC 9110 §13.1) removed by last-write-wins.
    static let preconditionFields = ["If-Match", "If-None-Match", "If-Unmodified-Since", "If-Modified-Since"]

    // MARK: - Connectivity

    /// Flushes whenever `monitor` reports a reachable backend (``ConnectivityStatus/isReachable``)
    /// after it did not, and once at the start when it already does. Replaces an earlier monitor.
    /// The monitor is only a trigger: requests are never held back because of its status.
    public func flushes(on monitor: some ConnectivityMonitor) {
        connectivityTask?.cancel()
        let statuses = monitor.statuses()
        connectivityTask = Task { [weak self] in
            var wasReachable = false
            for await status in statuses {
                if status.isReachable, !wasReachable {
                    guard let self else { return }
                    await self.requestDrain(ignoringBackoff: true)
                }
                wasReachable = status.isReachable
            }
        }
    }

    /// Stops following a connectivity monitor and cancels pending backoff wake-ups and the drain.
    public func stop() {
        connectivityTask?.cancel()
        connectivityTask = nil
        lockRetryTask?.cancel()
        lockRetryTask = nil
        storageRetryTask?.cancel()
        storageRetryTask = nil
        for task in paused.values { task.cancel() }
        paused.removeAll()
        drainTask?.cancel()
    }
}
