import Foundation
import Courier

/// A pending row: the mutation plus its bookkeeping.
struct StoredMutation: Sendable {
    var mutation: Mutation
    var seq: Int64
    var generation: Int
    var revision: Int
    var attempts: Int
    var conflicts: Int
    var enqueuedAt: Date
    var lastError: String?
    /// The environment and account it was made in.
    var origin: MutationOrigin
    /// Whether its current payload may have reached the server (an attempt was claimed for it).
    var mayHaveSent: Bool

    /// `id`, or `id~generation` once the payload was replaced after an attempt.
    var idempotencyKey: String { generation == 0 ? mutation.id : "\(mutation.id)~\(generation)" }

    var pending: PendingMutation {
        PendingMutation(
            mutation: mutation, idempotencyKey: idempotencyKey, attempts: attempts,
            enqueuedAt: enqueuedAt, lastError: lastError, origin: origin)
    }
}

/// The queue's tables, one method per transaction. Used by ``MutationQueue`` only.
///
/// Several processes may open one file (an app and its extension): every decision that depends
/// on the table — coalesce or insert, whether a payload needs a new key, which mutation is sent
/// next — is taken inside one `BEGIN IMMEDIATE` transaction from what the table says, never from
/// one process's memory.
///
/// Durability: what the app hands over (enqueue, a re-queued dead letter) commits with
/// `synchronous=FULL` before the call returns. Bookkeeping after an attempt (attempt counts,
/// removal after delivery, dead-lettering, conflict rewrites) commits with `NORMAL`: it survives
/// a crash of the process, and a power loss can at worst undo it, which replays a mutation the
/// server then recognises by its `Idempotency-Key`. That halves the fsyncs per delivery.
final class MutationStore {
    private let db: SQLiteDatabase

    /// How long the key an id was last sent under is remembered after its row left the queue
    /// (``spentKeyRetention``): 30 days, beyond the 24 hours servers commonly keep keys.
    static let spentKeyRetention: TimeInterval = 30 * 24 * 3600

    /// How many of the most recently spent keys are kept whatever the wall clock says
    /// (``spentKeysKept``): the device clock can jump (set by hand, a reset before the network
    /// time arrives), and forgetting a key the server still remembers sends a new payload under
    /// it, which the server refuses (`422`) and the queue dead-letters.
    static let spentKeysKept = 1000

    init(path: String, now: Date) throws {
        db = try SQLiteDatabase(path: path)
        try SQLiteDatabase.retryingWhileBusy { try QueueSchema.migrate(db) }
        try SQLiteDatabase.retryingWhileBusy {
            try lightly {
                // Older than the retention on the wall clock and not among the newest kept: a
                // clock that jumped forward (or was behind when the keys were spent) forgets
                // nothing of an app's recent keys.
                _ = try db.run(
                    """
                    DELETE FROM spent_keys WHERE spent_at < ? AND id NOT IN
                      (SELECT id FROM spent_keys ORDER BY spent_at DESC LIMIT ?)
                    """,
                    [.real(now.timeIntervalSince1970 - Self.spentKeyRetention), .integer(Int64(Self.spentKeysKept))])
            }
        }
    }

    /// Commits the app's own writes with an fsync.
    private func durably<R>(_ body: () throws -> R) throws -> R {
        try db.setSynchronous(full: true)
        try db.checkFileIsInPlace()
        let result = try db.transaction(body)
        // Committed into a file that was deleted meanwhile (an app's "reset data", a purged
        // folder): not durable, so not reported as stored.
        try db.checkFileIsInPlace()
        return result
    }

    /// Commits bookkeeping without an fsync (see the type's documentation).
    private func lightly<R>(_ body: () throws -> R) throws -> R {
        try db.setSynchronous(full: false)
        return try db.transaction(body)
    }

    private static let columns =
        """
        seq, id, grp, kind, method, path, headers, body, content_type, generation, revision, attempts, conflicts, \
        enqueued_at, last_error, environment, account, may_have_sent, query
        """

    /// The rows a client in `origin` delivers: its own, and rows from before origins were recorded.
    private static let deliverable = "(environment IS NULL OR (environment = ? AND account IS ?))"

    private static func bindings(_ origin: MutationOrigin) -> [SQLiteValue] {
        [origin.environment.map { .text($0) } ?? .null, origin.account.map { .text($0) } ?? .null]
    }

    /// Stores `mutation` made in `origin`, coalescing with a pending one of the same id. Returns
    /// whether it replaced one.
    ///
    /// - Throws: ``MutationQueueError/invalidMutation(_:)`` when the id is pending for another
    ///   environment or account (replacing it would move a change to a server it was not made for).
    func enqueue(_ mutation: Mutation, origin: MutationOrigin, now: Date) throws -> Bool {
        try durably {
            let existing: StoredMutation?
            do {
                existing = try row(id: mutation.id)
            } catch MutationQueueError.unreadableMutation {
                // A row that cannot be read back is replaced like any pending one (coalescing),
                // never left to refuse every later change of its id.
                try replaceUnreadable(with: mutation, origin: origin)
                return true
            }
            if let existing {
                if existing.origin.environment != nil, existing.origin != origin {
                    throw MutationQueueError.invalidMutation(
                        "\(mutation.id) is pending for \(existing.origin), not \(origin): use another id")
                }
                let sent = existing.attempts > 0 || existing.mayHaveSent
                if existing.mutation.sendsSameRequest(as: mutation) {
                    if existing.mutation.group == mutation.group, existing.mutation.kind == mutation.kind { return true }
                    if sent {
                        // The same bytes may already be applied: they stay a replay under the same
                        // key (a new key would apply them twice) and in their group (the request
                        // in flight keeps its order); only the kind follows the new call.
                        try db.run("UPDATE pending SET kind = ? WHERE id = ?", [.text(mutation.kind), .text(mutation.id)])
                        return true
                    }
                }
                try replacePayload(with: mutation, origin: origin, sent: sent, group: existing.mutation.group)
                return true
            }
            try db.run(
                """
                INSERT INTO pending (id, grp, kind, method, path, headers, body, content_type, query, enqueued_at, environment,
                  account, generation)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                try [.text(mutation.id)] + Self.payload(mutation) + [.real(now.timeIntervalSince1970)] + Self.bindings(origin)
                    + [.integer(Int64(try firstGeneration(id: mutation.id)))])
            return false
        }
    }

    /// Replaces the payload of the pending row with `mutation`'s id (made in `origin`). A payload
    /// an attempt may already have carried (`sent`) — in this process or another one sharing the
    /// file — gets a new key (generation + 1, and past every key the id was spent under: a retried
    /// dead letter sits below them) and keeps its `group`: the payload in flight and its
    /// replacement stay in one order, so the older one cannot land last. The new payload is unsent.
    private func replacePayload(with mutation: Mutation, origin: MutationOrigin, sent: Bool, group: String) throws {
        let bump = sent ? 1 : 0
        let floor = sent ? try firstGeneration(id: mutation.id) : 0
        var payload = try Self.payload(mutation)
        if sent { payload[0] = .text(group) }
        try db.run(
            """
            UPDATE pending SET grp = ?, kind = ?, method = ?, path = ?, headers = ?, body = ?, content_type = ?, query = ?,
              generation = MAX(generation + ?, ?), revision = CAST(revision AS INTEGER) + 1, may_have_sent = 0,
              attempts = CASE WHEN ? = 1 THEN 0 ELSE attempts END, environment = ?, account = ?
            WHERE id = ?
            """,
            payload + [.integer(Int64(bump)), .integer(Int64(floor)), .integer(Int64(bump))] + Self.bindings(origin)
                + [.text(mutation.id)])
    }

    /// Replaces the pending row with `mutation`'s id that cannot be read back, from its
    /// bookkeeping alone (its payload is unknown: it may have been sent).
    ///
    /// - Throws: ``MutationQueueError/invalidMutation(_:)`` when the row is pending for another
    ///   environment or account.
    private func replaceUnreadable(with mutation: Mutation, origin: MutationOrigin) throws {
        var found: (origin: MutationOrigin, sent: Bool, group: String?)?
        try db.run(
            "SELECT environment, account, may_have_sent, attempts, grp FROM pending WHERE id = ?", [.text(mutation.id)]
        ) { row in
            found = (
                MutationOrigin(environment: row.text(0), account: row.text(1)), row.int(2) != 0 || row.int(3) > 0, row.text(4)
            )
        }
        guard let found else { return }
        if found.origin.environment != nil, found.origin != origin {
            throw MutationQueueError.invalidMutation(
                "\(mutation.id) is pending for \(found.origin), not \(origin): use another id")
        }
        try replacePayload(with: mutation, origin: origin, sent: found.sent, group: found.group ?? mutation.group)
    }

    /// The key generation a new row with `id` starts at: past every key the id was sent under
    /// (a delivered, dropped or discarded change in `spent_keys`, a dead letter), so the server,
    /// which remembers a key with its payload, never sees one key with two payloads.
    private func firstGeneration(id: String) throws -> Int {
        let spent = try db.queryInt("SELECT generation FROM spent_keys WHERE id = ?", [.text(id)])
        let letter = try db.queryInt("SELECT generation FROM dead_letters WHERE id = ?", [.text(id)])
        return [spent, letter].compactMap { $0 }.map { Int($0) + 1 }.max() ?? 0
    }

    /// Remembers that `id` was sent under `generation` (the row left the queue).
    private func spend(id: String, generation: Int, now: Date) throws {
        try db.run(
            """
            INSERT INTO spent_keys (id, generation, spent_at) VALUES (?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET generation = MAX(generation, excluded.generation), spent_at = excluded.spent_at
            """, [.text(id), .integer(Int64(generation)), .real(now.timeIntervalSince1970)])
    }

    /// The oldest pending mutation of `group` that `origin` delivers and that can be read back
    /// (`nil` when there is none), and the rows before it that cannot, by `seq` with their
    /// ``MutationQueueError/unreadableMutation(id:reason:)``: those are set aside, never sent.
    func head(
        group: String, origin: MutationOrigin
    ) throws -> (head: StoredMutation?, unreadable: [(seq: Int64, error: MutationQueueError)]) {
        var unreadable: [(seq: Int64, error: MutationQueueError)] = []
        var after = Int64.min
        while true {
            var result: StoredMutation?
            var found = false
            try db.run(
                "SELECT \(Self.columns) FROM pending WHERE grp = ? AND \(Self.deliverable) AND seq > ? ORDER BY seq LIMIT 1",
                [.text(group)] + Self.bindings(origin) + [.integer(after)]
            ) { row in
                found = true
                after = row.int(0)
                do {
                    result = try Self.stored(row)
                } catch let error as MutationQueueError {
                    guard case .unreadableMutation = error else { throw error }
                    unreadable.append((after, error))
                }
            }
            if result != nil || !found { return (result, unreadable) }
        }
    }

    /// Claims `stored` for a send: records, in one write transaction, that its payload may reach
    /// the server, so that a replacement enqueued by any process from now on gets a new key (and
    /// ends its group's pause: the attempt is under way).
    /// Returns `false` when the row was replaced or removed since it was read (read the head
    /// again).
    func claim(_ stored: StoredMutation) throws -> Bool {
        // Durable (synced) before the request leaves: after a power loss that kept the server's
        // copy but not this mark, the next edit would reuse the key with another payload.
        try durably {
            try db.run(
                "UPDATE pending SET may_have_sent = 1, next_attempt_at = NULL WHERE seq = ? AND revision = ?",
                [.integer(stored.seq), .integer(Int64(stored.revision))]) > 0
        }
    }

    /// Pending mutations made in another environment or account than `origin`, oldest first.
    /// Rows that cannot be read back are left out (they are never sent; their own group reports
    /// them when it is delivered).
    func foreign(to origin: MutationOrigin) throws -> [StoredMutation] {
        var result: [StoredMutation] = []
        try db.run(
            "SELECT \(Self.columns) FROM pending WHERE NOT \(Self.deliverable) ORDER BY seq", Self.bindings(origin)
        ) { row in
            do {
                result.append(try Self.stored(row))
            } catch MutationQueueError.unreadableMutation {
                return
            }
        }
        return result
    }

    /// Deletes the pending row with `id` whatever it holds (also one that cannot be read back),
    /// remembering the key it may have been sent under. Returns the group and origin it had
    /// (`nil` when no row has `id`).
    func discardPending(id: String, now: Date) throws -> (group: String, origin: MutationOrigin)? {
        try lightly {
            var found: (group: String, origin: MutationOrigin, generation: Int, spent: Bool)?
            try db.run(
                "SELECT grp, environment, account, generation, may_have_sent, attempts FROM pending WHERE id = ?",
                [.text(id)]
            ) { row in
                found = (
                    row.text(0) ?? "", MutationOrigin(environment: row.text(1), account: row.text(2)), Int(row.int(3)),
                    row.int(4) != 0 || row.int(5) > 0
                )
            }
            guard let found else { return nil }
            _ = try db.run("DELETE FROM pending WHERE id = ?", [.text(id)])
            if found.spent { try spend(id: id, generation: found.generation, now: now) }
            return (found.group, found.origin)
        }
    }

    /// The pending row with `id`.
    func row(id: String) throws -> StoredMutation? {
        var result: StoredMutation?
        try db.run("SELECT \(Self.columns) FROM pending WHERE id = ?", [.text(id)]) { result = try Self.stored($0) }
        return result
    }

    /// Groups with pending mutations that `origin` delivers, in order of their oldest mutation,
    /// each with the moment it may be tried again after a transient failure (written by
    /// ``recordFailure(_:reason:retryAt:pause:)`` of any queue on the file; `nil`: now). A moment
    /// further from `now` than the pause recorded with it (the wall clock was set back since) is
    /// brought back to `now` plus that pause.
    func groups(for origin: MutationOrigin, now: Date) throws -> [(group: String, retryAt: Date?)] {
        var result: [(group: String, retryAt: Date?)] = []
        try db.run(
            """
            SELECT grp, MAX(CASE WHEN next_attempt_at IS NULL OR pause_seconds IS NULL THEN next_attempt_at
                                 ELSE MIN(next_attempt_at, ? + pause_seconds) END)
            FROM pending WHERE \(Self.deliverable) GROUP BY grp ORDER BY MIN(seq)
            """,
            [.real(now.timeIntervalSince1970)] + Self.bindings(origin)
        ) { row in
            guard let group = row.text(0) else { return }
            result.append((group, row.isNull(1) ? nil : Date(timeIntervalSince1970: row.double(1))))
        }
        return result
    }

    /// Makes this connection refuse every write with `SQLITE_READONLY` (`PRAGMA query_only`), as a
    /// read-only file or a locked device does; for tests of the queue's storage failures.
    func refuseWrites(_ refuse: Bool) throws {
        try db.execute("PRAGMA query_only = \(refuse ? "ON" : "OFF")")
    }

    /// Caps the database at its current size (`PRAGMA max_page_count`), so a write that needs a new
    /// page fails with `SQLITE_FULL` as on a full disk; for tests.
    func capSizeAtCurrent() throws {
        let pages = try db.queryInt("PRAGMA page_count") ?? 1
        _ = try db.queryInt("PRAGMA max_page_count = \(pages)")
    }

    /// Removes a delivered, dropped or discarded mutation unless it was replaced meanwhile, and
    /// remembers the key it may have been sent under. Returns whether it did.
    func remove(_ stored: StoredMutation, now: Date) throws -> Bool {
        try lightly {
            guard try deleteRow(stored) else { return false }
            if stored.mayHaveSent || stored.attempts > 0 {
                try spend(id: stored.mutation.id, generation: stored.generation, now: now)
            }
            return true
        }
    }

    /// Rows are found by `seq` (their integer key, kept by coalescing), never by the id as read
    /// back: an id another program stored as bytes, or as text that is not UTF-8, does not compare
    /// equal to the string read from it, and a row that is never matched is sent again forever.
    private func deleteRow(_ stored: StoredMutation) throws -> Bool {
        try db.run(
            "DELETE FROM pending WHERE seq = ? AND revision = ?",
            [.integer(stored.seq), .integer(Int64(stored.revision))]) > 0
    }

    /// Records a transient failure: its text, one more attempt, and the moment its group may be
    /// tried again (`retryAt`, wall clock: every queue on the file skips the group until then) with
    /// the pause's length (`pause`, seconds: the most any queue waits, whatever the clock does).
    /// The pause is kept even when the row was replaced meanwhile: it is the server's health, not
    /// the payload's.
    func recordFailure(_ stored: StoredMutation, reason: String, retryAt: Date, pause: TimeInterval) throws {
        try lightly {
            _ = try db.run(
                """
                UPDATE pending SET
                  last_error = CASE WHEN revision = ? THEN ? ELSE last_error END,
                  attempts = attempts + CASE WHEN revision = ? THEN 1 ELSE 0 END,
                  next_attempt_at = ?, pause_seconds = ?
                WHERE seq = ?
                """,
                [
                    .integer(Int64(stored.revision)), .text(reason), .integer(Int64(stored.revision)),
                    .real(retryAt.timeIntervalSince1970), .real(pause), .integer(stored.seq),
                ])
        }
    }

    /// Replaces the payload after a conflict resolution (new key generation). Returns whether the
    /// row was still the one resolved.
    func rewrite(_ stored: StoredMutation, with mutation: Mutation) throws -> Bool {
        try lightly {
            try db.run(
                """
                UPDATE pending SET grp = ?, kind = ?, method = ?, path = ?, headers = ?, body = ?, content_type = ?, query = ?,
                  generation = MAX(generation + 1, ?), revision = revision + 1, attempts = 0, conflicts = conflicts + 1,
                  may_have_sent = 0
                WHERE seq = ? AND revision = ?
                """,
                try Self.payload(mutation) + [
                    .integer(Int64(try firstGeneration(id: stored.mutation.id))), .integer(stored.seq),
                    .integer(Int64(stored.revision)),
                ]) > 0
        }
    }

    /// Moves a mutation to the dead-letter table (one transaction). Returns the letter, or `nil`
    /// when the row was replaced meanwhile (the new payload stays pending).
    func deadLetter(
        _ stored: StoredMutation, statusCode: Int?, reason: String, responseBody: Data, now: Date
    ) throws -> DeadLetter? {
        try lightly {
            guard try deleteRow(stored) else { return nil }
            let letter = DeadLetter(
                mutation: stored.mutation, statusCode: statusCode, reason: reason,
                responseBody: responseBody, attempts: stored.attempts + 1,
                enqueuedAt: stored.enqueuedAt, failedAt: now, origin: stored.origin)
            try db.run(
                """
                INSERT OR REPLACE INTO dead_letters (id, grp, kind, method, path, headers, body, content_type, query,
                  status, reason, response_body, attempts, enqueued_at, failed_at, environment, account, generation)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                try [.text(stored.mutation.id)] + Self.payload(stored.mutation) + [
                    statusCode.map { .integer(Int64($0)) } ?? .null, .text(reason), .blob(responseBody),
                    .integer(Int64(letter.attempts)), .real(stored.enqueuedAt.timeIntervalSince1970),
                    .real(now.timeIntervalSince1970),
                ] + Self.bindings(stored.origin) + [.integer(Int64(stored.generation))])
            return letter
        }
    }

    /// Pending mutations, oldest first: those that can be read back, and those that cannot
    /// (set aside, never sent).
    func pending() throws -> (readable: [StoredMutation], unreadable: [UnreadableMutation]) {
        var readable: [StoredMutation] = []
        var unreadable: [UnreadableMutation] = []
        try db.run("SELECT \(Self.columns) FROM pending ORDER BY seq") { row in
            do {
                readable.append(try Self.stored(row))
            } catch let error as MutationQueueError {
                guard case .unreadableMutation(let id, _) = error else { throw error }
                unreadable.append(
                    UnreadableMutation(
                        id: id, group: row.text(2), enqueuedAt: Date(timeIntervalSince1970: row.double(13)),
                        origin: MutationOrigin(environment: row.text(15), account: row.text(16)), error: error))
            }
        }
        return (readable, unreadable)
    }

    func count() throws -> Int { Int(try db.queryInt("SELECT COUNT(*) FROM pending") ?? 0) }

    func oldestEnqueuedAt() throws -> Date? {
        var result: Date?
        try db.run("SELECT MIN(enqueued_at) FROM pending") { row in
            if !row.isNull(0) { result = Date(timeIntervalSince1970: row.double(0)) }
        }
        return result
    }

    /// Dead letters, oldest failure first: those that can be read back, and those that cannot.
    func deadLetters() throws -> (readable: [DeadLetter], unreadable: [UnreadableMutation]) {
        try deadLetters(id: nil)
    }

    /// Dead letters, oldest failure first; only the one with `id` when given. A letter that cannot
    /// be read back is listed apart when listing all of them, and throws
    /// ``MutationQueueError/unreadableMutation(id:reason:)`` for a call about that letter: it never
    /// fails a call about another.
    private func deadLetters(id: String?) throws -> (readable: [DeadLetter], unreadable: [UnreadableMutation]) {
        var result: [DeadLetter] = []
        var unreadable: [UnreadableMutation] = []
        try db.run(
            """
            SELECT id, grp, kind, method, path, headers, body, content_type, status, reason, response_body,
              attempts, enqueued_at, failed_at, environment, account, query FROM dead_letters
            \(id == nil ? "" : "WHERE id = ?") ORDER BY failed_at, rowid
            """, id.map { [.text($0)] } ?? []
        ) { row in
            let origin = MutationOrigin(environment: row.text(14), account: row.text(15))
            let enqueuedAt = Date(timeIntervalSince1970: row.double(12))
            let mutation: Mutation
            do {
                mutation = try Self.mutation(row, id: 0, query: 16)
            } catch let error as MutationQueueError {
                guard id == nil, case .unreadableMutation(let letterID, _) = error else { throw error }
                unreadable.append(
                    UnreadableMutation(id: letterID, group: row.text(1), enqueuedAt: enqueuedAt, origin: origin, error: error))
                return
            }
            result.append(
                DeadLetter(
                    mutation: mutation, statusCode: row.isNull(8) ? nil : Int(row.int(8)), reason: row.text(9) ?? "",
                    responseBody: row.blob(10), attempts: Int(row.int(11)), enqueuedAt: enqueuedAt,
                    failedAt: Date(timeIntervalSince1970: row.double(13)), origin: origin))
        }
        return (result, unreadable)
    }

    /// Moves a dead letter back to the end of the queue, in the environment and account it was
    /// made in (`origin` for letters from before origins were recorded), under the key it was last
    /// sent with (same key, same payload: the server sees a replay of what it refused, never one
    /// key with two payloads). Returns the mutation.
    ///
    /// - Throws: ``MutationQueueError/noSuchDeadLetter(_:)``; ``MutationQueueError/invalidMutation(_:)``
    ///   when a newer change with the same id is pending (retrying the letter would replace it).
    func requeueDeadLetter(id: String, origin: MutationOrigin, now: Date) throws -> Mutation {
        try durably {
            guard let letter = try deadLetters(id: id).readable.first else {
                throw MutationQueueError.noSuchDeadLetter(id)
            }
            if try row(id: id) != nil {
                throw MutationQueueError.invalidMutation(
                    "a newer change of \(id) is pending: retrying its dead letter would replace it (discard the letter)")
            }
            let generation = try db.queryInt("SELECT generation FROM dead_letters WHERE id = ?", [.text(id)]) ?? 0
            try db.run("DELETE FROM dead_letters WHERE id = ?", [.text(id)])
            let home = letter.origin.environment == nil ? origin : letter.origin
            try db.run(
                """
                INSERT INTO pending (id, grp, kind, method, path, headers, body, content_type, query, enqueued_at, environment,
                  account, generation, may_have_sent)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
                """,
                try [.text(id)] + Self.payload(letter.mutation) + [.real(now.timeIntervalSince1970)] + Self.bindings(home)
                    + [.integer(generation)])
            return letter.mutation
        }
    }

    /// Deletes a dead letter, remembering the key it was sent under. Returns whether one existed.
    func discardDeadLetter(id: String, now: Date) throws -> Bool {
        try lightly {
            guard let generation = try db.queryInt("SELECT generation FROM dead_letters WHERE id = ?", [.text(id)]) else {
                return false
            }
            try db.run("DELETE FROM dead_letters WHERE id = ?", [.text(id)])
            try spend(id: id, generation: Int(generation), now: now)
            return true
        }
    }

    // MARK: - Row mapping

    /// grp, kind, method, path, headers, body, content_type, query
    private static func payload(_ m: Mutation) throws -> [SQLiteValue] {
        [
            .text(m.group), .text(m.kind), .text(m.method.rawValue), .text(m.path), .blob(try encodeHeaders(m.headers)),
            m.body.map { .blob($0) } ?? .null, m.contentType.map { .text($0) } ?? .null,
            m.query.isEmpty ? .null : .blob(try encodeQuery(m.query)),
        ]
    }

    private static func stored(_ row: SQLiteRow) throws -> StoredMutation {
        // The revision guards every write about the row: one that is no integer matches none.
        guard row.isInteger(10) else { throw corrupt(row.text(1), "its revision is not an integer") }
        return StoredMutation(
            mutation: try mutation(row, id: 1, query: 18), seq: row.int(0), generation: Int(row.int(9)),
            revision: Int(row.int(10)),
            attempts: Int(row.int(11)), conflicts: Int(row.int(12)),
            enqueuedAt: Date(timeIntervalSince1970: row.double(13)), lastError: row.text(14),
            origin: MutationOrigin(environment: row.text(15), account: row.text(16)), mayHaveSent: row.int(17) != 0)
    }

    /// Reads id, grp, kind, method, path, headers, body, content_type starting at column `id`, and
    /// the query items at column `query` (NULL, as in rows written before queries were stored: none).
    ///
    /// A row is read as it was written or not at all: a missing field or a header list that does
    /// not decode throws ``MutationQueueError/unreadableMutation(id:reason:)``, never a guess (a
    /// default path or no headers would send the change somewhere else, or without its
    /// `Authorization` or `If-Match`).
    private static func mutation(_ row: SQLiteRow, id c: Int32, query q: Int32) throws -> Mutation {
        func field(_ column: Int32, _ name: String) throws -> String {
            guard let value = row.text(column) else { throw corrupt(row.text(c), "\(name) is missing") }
            return value
        }
        let id = try field(c, "id")
        return Mutation(
            id: id, method: HTTPMethod(rawValue: try field(c + 3, "method")), path: try field(c + 4, "path"),
            query: row.isNull(q) ? [] : try decodeQuery(row.blob(q), id: id),
            headers: try decodeHeaders(row.blob(c + 5), id: id), body: row.isNull(c + 6) ? nil : row.blob(c + 6),
            contentType: row.text(c + 7), group: try field(c + 1, "group"), kind: try field(c + 2, "kind"))
    }

    /// The error of a stored row that cannot be read back, naming the row.
    private static func corrupt(_ id: String?, _ why: String) -> MutationQueueError {
        .unreadableMutation(id: id, reason: why)
    }

    private static func encodeHeaders(_ headers: HTTPHeaders) throws -> Data {
        do {
            return try JSONEncoder().encode(headers.fields.map { [$0.name, $0.value] })
        } catch {
            throw MutationQueueError.invalidMutation("its header fields cannot be stored: \(error)")
        }
    }

    private static func encodeQuery(_ items: [URLQueryItem]) throws -> Data {
        do {
            return try JSONEncoder().encode(items.map { [$0.name, $0.value] })
        } catch {
            throw MutationQueueError.invalidMutation("its query items cannot be stored: \(error)")
        }
    }

    private static func decodeQuery(_ data: Data, id: String) throws -> [URLQueryItem] {
        let pairs: [[String?]]
        do {
            pairs = try JSONDecoder().decode([[String?]].self, from: data)
        } catch {
            throw corrupt(id, "its query items are not a JSON list of name-value pairs")
        }
        return try pairs.map { pair in
            guard pair.count == 2, let name = pair[0] else { throw corrupt(id, "a query item is not a name-value pair") }
            return URLQueryItem(name: name, value: pair[1])
        }
    }

    private static func decodeHeaders(_ data: Data, id: String) throws -> HTTPHeaders {
        let pairs: [[String]]
        do {
            pairs = try JSONDecoder().decode([[String]].self, from: data)
        } catch {
            throw corrupt(id, "its header fields are not a JSON list of name-value pairs")
        }
        return HTTPHeaders(
            try pairs.map { pair in
                guard pair.count == 2 else { throw corrupt(id, "a header field is not a name-value pair") }
                return HTTPHeaders.Field(name: pair[0], value: pair[1])
            })
    }
}
