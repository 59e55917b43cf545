import Foundation
#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// A failure reported by SQLite, with its result code and message.
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The SQLite result code (`SQLITE_BUSY` = 5, `SQLITE_CORRUPT` = 11, …).
    public var code: Int32
    /// SQLite's message, or what Courier was doing.
    public var message: String

    /// Creates an error.
    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// `SQLite error <code>: <message>`.
    public var description: String { "SQLite error \(code): \(message)" }
}

extension SQLiteError {
    /// `SQLITE_CANTOPEN` (14) with `message`: a file Courier opens itself could not be opened.
    package static func cannotOpen(_ message: String) -> SQLiteError {
        SQLiteError(code: SQLITE_CANTOPEN, message: message)
    }

    /// `SQLITE_IOERR` (10) with `message`: an I/O failure around the database (a lock, a read).
    package static func ioFailure(_ message: String) -> SQLiteError {
        SQLiteError(code: SQLITE_IOERR, message: message)
    }
}

/// `SQLITE_TRANSIENT`: SQLite copies bound text and blobs before the call returns.
private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection, used by one actor only (not Sendable on purpose).
///
/// Opened in WAL mode with `synchronous=FULL`: a committed transaction survives a process
/// kill and a power loss (https://www.sqlite.org/pragma.html#pragma_synchronous).
final class SQLiteDatabase {
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    /// Opens (creating when missing) the database at `path`.
    ///
    /// A database this creates is readable by its owner alone (mode 0600, and so are its `-wal`
    /// and `-shm` files, which SQLite creates with the database's mode): it holds the pending
    /// changes of the signed-in user. A database an earlier version created 0644 is made 0600
    /// too, with the `-wal` and `-shm` files it has.
    ///
    /// - Throws: ``SQLiteError`` when the file cannot be opened, is not a database, or can only
    ///   be opened read-only (`SQLITE_READONLY`).
    init(path: String) throws {
        if !path.isEmpty, path != ":memory:" {
            // Created empty here (SQLite takes an empty file for a new database) with a mode of
            // its own, since SQLite would create it 0644. Any failure is left for the open to report.
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if descriptor >= 0 {
                close(descriptor)
            } else if errno == EEXIST {
                // A file of another user's stays as it is (EPERM), and the open reports what it must.
                for suffix in ["", "-wal", "-shm"] { _ = chmod(path + suffix, 0o600) }
            }
        }
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
            sqlite3_close(db)
            throw SQLiteError(code: rc, message: message)
        }
        handle = db
        // SQLite falls back to read-only when it may not write the file: refuse that at open
        // (https://www.sqlite.org/c3ref/db_readonly.html), not at the first write.
        if sqlite3_db_readonly(db, "main") == 1 {
            throw SQLiteError(code: SQLITE_READONLY, message: "\(path) can be read but not written")
        }
        sqlite3_busy_timeout(db, 5_000)
        // Switching a new file to WAL takes an exclusive lock and does not wait on the busy
        // timeout: when another process opens the same new file at the same moment, try again.
        let mode = try Self.retryingWhileBusy { try queryText("PRAGMA journal_mode=WAL") }
        guard mode?.lowercased() == "wal" else {
            throw SQLiteError(code: SQLITE_ERROR, message: "journal_mode=WAL refused (got \(mode ?? "nothing"))")
        }
        try execute("PRAGMA synchronous=FULL")
        try execute("PRAGMA foreign_keys=ON")
    }

    /// Runs `body` again while it fails with `SQLITE_BUSY`, in 10–100 ms steps, until about 5 s
    /// (SQLite's busy timeout) have passed in all — the time `body` itself spent waiting on the
    /// busy handler included (counting only the steps let one call wait minutes); for the steps of
    /// opening that SQLite does not retry itself.
    static func retryingWhileBusy<R>(_ body: () throws -> R) throws -> R {
        let clock = ContinuousClock()
        let start = clock.now
        var step = 10
        while true {
            do {
                return try body()
            } catch let error as SQLiteError where error.code & 0xFF == SQLITE_BUSY && clock.now - start < .seconds(5) {
                usleep(useconds_t(step * 1_000))
                step = min(step * 2, 100)
            }
        }
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    private var synchronousFull = true

    /// Switches between `synchronous=FULL` (a commit is fsynced before it returns: survives power
    /// loss) and `NORMAL` (in WAL mode a commit survives a process crash; a power loss may undo
    /// the latest ones). Only outside a transaction.
    func setSynchronous(full: Bool) throws {
        guard full != synchronousFull else { return }
        try execute(full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        synchronousFull = full
    }

    /// Runs one or more statements without parameters.
    func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        if rc != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? lastMessage
            sqlite3_free(error)
            throw SQLiteError(code: rc, message: message)
        }
    }

    /// Throws `SQLITE_READONLY_DBMOVED` (1032) when the database file this connection has open
    /// was deleted, renamed or replaced since it was opened (`SQLITE_FCNTL_HAS_MOVED`): in WAL mode
    /// SQLite goes on committing into the unlinked file, so a commit there is lost with it.
    func checkFileIsInPlace() throws {
        var moved: Int32 = 0
        let status = sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved)
        guard status == SQLITE_OK else { return }  // a VFS without the control: nothing to check
        if moved != 0 {
            throw SQLiteError(code: 1032, message: "the database file was deleted or replaced while open")
        }
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`; rolls back when it throws. Returns after the
    /// commit is durable.
    func transaction<R>(_ body: () throws -> R) throws -> R {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs a statement with `bindings`, calling `row` for each result row. Returns the number of
    /// rows the statement changed.
    @discardableResult
    func run(_ sql: String, _ bindings: [SQLiteValue] = [], row: ((SQLiteRow) throws -> Void)? = nil) throws -> Int {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in bindings.enumerated() {
            let position = Int32(index + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(statement, position)
            case .integer(let v): rc = sqlite3_bind_int64(statement, position, v)
            case .real(let v): rc = sqlite3_bind_double(statement, position, v)
            case .text(let v): rc = sqlite3_bind_text(statement, position, v, -1, transientDestructor)
            case .blob(let v):
                rc = v.withUnsafeBytes { raw in
                    sqlite3_bind_blob(statement, position, raw.baseAddress, Int32(raw.count), transientDestructor)
                }
            }
            guard rc == SQLITE_OK else { throw SQLiteError(code: rc, message: lastMessage) }
        }
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw SQLiteError(code: rc, message: lastMessage) }
            try row?(SQLiteRow(statement: statement))
        }
        return Int(sqlite3_changes(handle))
    }

    /// The first column of the first row as text.
    func queryText(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> String? {
        var result: String?
        try run(sql, bindings) { row in if result == nil { result = row.text(0) } }
        return result
    }

    /// The first column of the first row as an integer.
    func queryInt(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> Int64? {
        var result: Int64?
        try run(sql, bindings) { row in if result == nil { result = row.isNull(0) ? nil : row.int(0) } }
        return result
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw SQLiteError(code: rc, message: lastMessage) }
        statements[sql] = statement
        return statement
    }

    private var lastMessage: String { String(cString: sqlite3_errmsg(handle)) }
}

/// A value bound to a statement parameter.
enum SQLiteValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// The current row of a stepping statement.
struct SQLiteRow {
    fileprivate let statement: OpaquePointer

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
    func isInteger(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_INTEGER }
    func int(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
    func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: pointer)
    }
    func blob(_ column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return Data() }
        return Data(bytes: pointer, count: count)
    }
}
