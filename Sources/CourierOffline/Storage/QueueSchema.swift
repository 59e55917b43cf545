import Foundation

/// The queue database's schema, versioned with `PRAGMA user_version` and upgraded by ordered
/// migrations. A migration runs in one transaction with the version bump, so a crash mid-upgrade
/// leaves the previous version intact.
enum QueueSchema {
    /// The columns a stored mutation has in both `pending` and `dead_letters`, as migration 1
    /// writes them (joined so that its statements stay byte for byte as shipped).
    private static let mutationColumns = [
        "grp TEXT NOT NULL", "kind TEXT NOT NULL", "method TEXT NOT NULL", "path TEXT NOT NULL",
        "headers BLOB NOT NULL", "body BLOB", "content_type TEXT",
    ].joined(separator: ",\n    ")

    /// Migration `n` (0-based) upgrades version `n` to `n + 1`. Append only; never edit a
    /// shipped migration.
    static let migrations: [String] = [
        // 1: pending mutations and the dead-letter table.
        """
        CREATE TABLE pending (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            \(mutationColumns),
            generation INTEGER NOT NULL DEFAULT 0,
            revision INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            conflicts INTEGER NOT NULL DEFAULT 0,
            enqueued_at REAL NOT NULL,
            last_error TEXT
        );
        CREATE INDEX pending_group_order ON pending (grp, seq);
        CREATE TABLE dead_letters (
            id TEXT PRIMARY KEY,
            \(mutationColumns),
            status INTEGER,
            reason TEXT NOT NULL,
            response_body BLOB NOT NULL,
            attempts INTEGER NOT NULL,
            enqueued_at REAL NOT NULL,
            failed_at REAL NOT NULL
        );
        """,
        // 2: the environment and account a mutation was made in (NULL for rows written before:
        // delivered wherever the queue's client points), and whether its current payload may
        // have reached the server (set before each send, in the database so that every process
        // sharing the file sees it; rows from version 1 may have been sent).
        """
        ALTER TABLE pending ADD COLUMN environment TEXT;
        ALTER TABLE pending ADD COLUMN account TEXT;
        ALTER TABLE pending ADD COLUMN may_have_sent INTEGER NOT NULL DEFAULT 0;
        UPDATE pending SET may_have_sent = 1;
        ALTER TABLE dead_letters ADD COLUMN environment TEXT;
        ALTER TABLE dead_letters ADD COLUMN account TEXT;
        CREATE INDEX pending_origin_order ON pending (environment, account, grp, seq);
        """,
        // 3: the key generation a dead letter was last sent under, so a retried letter goes out
        // under that key again (never its id's first key with a later payload).
        """
        ALTER TABLE dead_letters ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
        """,
        // 4: the last key generation each id was sent under after its row left the queue
        // (delivered, dropped, discarded), so a later change with the same id goes out under a
        // new key: the server remembers the old key with the old payload.
        """
        CREATE TABLE spent_keys (
            id TEXT PRIMARY KEY,
            generation INTEGER NOT NULL,
            spent_at REAL NOT NULL
        );
        """,
        // 5: when a group may be tried again after a transient failure of its head (wall clock,
        // seconds since 1970; NULL: now), so that every queue on the file respects the backoff
        // and Retry-After, not only the one that got the failure.
        """
        ALTER TABLE pending ADD COLUMN next_attempt_at REAL;
        """,
        // 6: the length of that pause (seconds), so a wall clock set back after it was recorded
        // (by the user, or a wrong clock corrected) cannot stretch it: a queue never waits longer
        // than the pause asked for (NULL: rows paused before this version).
        """
        ALTER TABLE pending ADD COLUMN pause_seconds REAL;
        """,
        // 7: a mutation's query items (a JSON list of [name, value-or-null] pairs; NULL: rows
        // written before, which have no query).
        """
        ALTER TABLE pending ADD COLUMN query BLOB;
        ALTER TABLE dead_letters ADD COLUMN query BLOB;
        """,
    ]

    /// The version this build writes.
    static var currentVersion: Int { migrations.count }

    /// Brings `database` to ``currentVersion``.
    ///
    /// - Throws: ``MutationQueueError/unsupportedSchemaVersion(_:)`` when the file was written by
    ///   a newer build (downgrading would lose data); ``SQLiteError`` when a migration fails.
    ///
    /// Each step reads the version inside its own write transaction, so two processes opening the
    /// file at once never run a migration twice: the second sees the first one's result.
    static func migrate(_ database: SQLiteDatabase) throws {
        let version = Int(try database.queryInt("PRAGMA user_version") ?? 0)
        guard version <= currentVersion else { throw MutationQueueError.unsupportedSchemaVersion(version) }
        guard version < currentVersion else { return }
        var done = false
        while !done {
            try database.transaction {
                let version = Int(try database.queryInt("PRAGMA user_version") ?? 0)
                guard version <= currentVersion else { throw MutationQueueError.unsupportedSchemaVersion(version) }
                guard version < currentVersion else {
                    done = true
                    return
                }
                try database.execute(migrations[version])
                try database.execute("PRAGMA user_version = \(version + 1)")
            }
        }
    }
}

/// Errors of ``MutationQueue`` itself (network failures are reported as events instead).
public enum MutationQueueError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The database file was written by a newer schema version than this build knows.
    case unsupportedSchemaVersion(Int)
    /// The mutation cannot be stored or sent: a safe method (GET, HEAD, OPTIONS, TRACE) or
    /// CONNECT; an id that is empty, longer than 200 bytes, not
    /// visible ASCII or contains `~`; an empty group or kind; a path not starting with `/` or with
    /// a `..` segment; a header with CR, LF or NUL; an id pending for another environment or
    /// account; a dead letter retried while a newer change of its id is pending.
    case invalidMutation(String)
    /// No dead letter with this id.
    case noSuchDeadLetter(String)
    /// The database failed.
    case storage(SQLiteError)
    /// A stored mutation cannot be read back as it was written: a field is missing or its header
    /// list does not decode (another program wrote the file, or a page was damaged). It is never
    /// sent with a guessed field. It stays stored, set aside (``MutationQueue/unreadableMutations()``),
    /// and the mutations behind it are delivered. ``MutationQueue/discardPending(id:)`` removes
    /// it. `id` is `nil` when even the id is unreadable.
    case unreadableMutation(id: String?, reason: String)

    /// A sentence for logs.
    public var description: String {
        switch self {
        case .unsupportedSchemaVersion(let v):
            return "queue database has schema version \(v), newer than this build's \(QueueSchema.currentVersion)"
        case .invalidMutation(let why): return "invalid mutation: \(why)"
        case .noSuchDeadLetter(let id): return "no dead letter with id \(id)"
        case .storage(let error): return "queue storage failed: \(error)"
        case .unreadableMutation(let id, let reason):
            return "stored mutation \(id ?? "(no id)") cannot be read back: \(reason)"
        }
    }
}
