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
    @discardableResult
    public func flush() async -> FlushReport {
        let task = requestDrain(ignoringBackoff: true)
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        var result = report
        result.pending = (try? store.count()) ?? 0
        return result
    }

    /// Starts a drain, or asks the running one for another pass. Returns the drain task.
    @discardableResult
    func requestDrain(ignoringBackoff: Bool) -> Task<Void, Never> {
        if ignoringBackoff {
            for task in paused.values { task.cancel() }
            paused.removeAll()
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
        repeat {
            drainRequested = false
            let groups = ((try? store.groups()) ?? []).filter { paused[$0] == nil }
            await withTaskGroup(of: Void.self) { tasks in
                for group in groups {
                    tasks.addTask { await self.drain(group: group) }
                }
            }
        } while drainRequested && !Task.isCancelled
        drainTask = nil
    }

    /// Sends the group's head until the group is empty, paused, or the drain is cancelled.
    private func drain(group: String) async {
        while !Task.isCancelled, paused[group] == nil {
            let stored: StoredMutation
            do {
                guard let head = try store.head(group: group) else { return }
                store.markAttempt(head)
                stored = head
            } catch {
                pause(group: group, retryAfter: nil)
                return
            }
            let kind = configuration.kind(stored.mutation.kind)
            do {
                let response = try await client.response(for: request(for: stored, policy: kind.policy))
                failures[group] = nil
                _ = try? store.remove(stored)
                report.sent += 1
                publish(stored.mutation, .sent(statusCode: response.statusCode))
            } catch {
                switch FailureClass.of(error, now: configuration.now()) {
                case .cancelled:
                    return
                case .transient(let retryAfter):
                    let delay = pause(group: group, retryAfter: retryAfter)
                    try? store.recordFailure(stored, reason: String(describing: error))
                    report.transientFailures += 1
                    publish(stored.mutation, .retrying(error as? NetworkError ?? .transport(URLError(.unknown)), delay: delay))
                    return
                case .permanent:
                    deadLetter(stored, error: error)
                case .conflict:
                    await resolveConflict(stored, error: error, policy: kind.conflictPolicy)
                }
            }
        }
    }

    /// The request for a stored mutation: its method, path, headers and body, with its
    /// idempotency key in the policy.
    func request(for stored: StoredMutation, policy: EndpointPolicy) -> Request<Void> {
        let mutation = stored.mutation
        let body: RequestBody =
            mutation.body.map { .data($0, contentType: mutation.contentType ?? "application/octet-stream") } ?? .none
        return Request<Void>(
            method: mutation.method, path: mutation.path, headers: mutation.headers, body: body,
            policy: policy.with(\.idempotency, .key(stored.idempotencyKey)))
    }

    /// Pauses `group` for the backoff delay and schedules its wake-up. Returns the delay.
    @discardableResult
    private func pause(group: String, retryAfter: Duration?) -> Duration {
        let count = (failures[group] ?? 0) + 1
        failures[group] = count
        let delay = configuration.backoff.delay(afterFailures: count, random: configuration.random(), retryAfter: retryAfter)
        paused[group]?.cancel()
        let clock = configuration.clock
        paused[group] = Task { [weak self] in
            do { try await clock.sleep(for: delay) } catch { return }
            await self?.resume(group: group)
        }
        return delay
    }

    private func resume(group: String) {
        guard paused.removeValue(forKey: group) != nil else { return }
        requestDrain(ignoringBackoff: false)
    }

    private func deadLetter(_ stored: StoredMutation, error: any Error) {
        let response = (error as? NetworkError)?.failedResponse
        let reason: String
        if let networkError = error as? NetworkError {
            reason = response.map { "HTTP \($0.statusCode): \(networkError.userMessage)" } ?? String(describing: networkError)
        } else {
            reason = String(describing: error)
        }
        guard
            let letter = try? store.deadLetter(
                stored, statusCode: response?.statusCode, reason: reason,
                responseBody: response?.body ?? Data(), now: configuration.now())
        else { return }
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
            if (try? store.rewrite(stored, with: mutation)) == true {
                publish(mutation, .conflict(.resentWithoutPreconditions, statusCode: status))
            }
        case .merge(let merge):
            do {
                if var merged = try await merge(MutationConflict(mutation: stored.mutation, response: response)) {
                    merged.id = stored.mutation.id
                    merged.group = stored.mutation.group
                    try Self.validate(merged)
                    if (try? store.rewrite(stored, with: merged)) == true {
                        publish(merged, .conflict(.merged, statusCode: status))
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
        guard (try? store.remove(stored)) == true else { return }
        report.dropped += 1
        publish(stored.mutation, .conflict(resolution, statusCode: status))
    }

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
        for task in paused.values { task.cancel() }
        paused.removeAll()
        drainTask?.cancel()
    }
}
