import Foundation
import Testing
import Courier
import CourierTesting
@testable import CourierOffline

@Suite("Offline storage")
struct StorageTests {
    let client = APIClient(environment: OfflineServer.unreachable)

    func manualQueue(_ path: String) throws -> MutationQueue {
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        return try MutationQueue(path: path, client: client, configuration: configuration)
    }

    @Test func enqueuedMutationsSurviveReopeningInOrder() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        do {
            let queue = try manualQueue(dir.path("q.sqlite"))
            for i in 0..<5 {
                try await queue.enqueue(Mutation(id: "m\(i)", method: .post, path: "/mutations", body: Data("{\"i\":\(i)}".utf8)))
            }
        }
        let reopened = try manualQueue(dir.path("q.sqlite"))
        let pending = try await reopened.pending()
        #expect(pending.map(\.mutation.id) == ["m0", "m1", "m2", "m3", "m4"])
        #expect(pending[3].mutation.body == Data("{\"i\":3}".utf8))
        #expect(pending[3].mutation.contentType == "application/json")
        #expect(pending[3].idempotencyKey == "m3")
        #expect(try await reopened.pendingCount() == 5)
    }

    /// The queue's database (and its `-wal` and `-shm` files) were created 0644 under the usual
    /// umask: any other user of the machine could read every pending change — a new password, an
    /// address — and the dead letters' answers.
    @Test func theQueueFilesAreReadableByTheirOwnerAlone() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.path("q.sqlite")
        let queue = try manualQueue(path)
        try await queue.enqueue(
            Mutation(id: "m0", method: .post, path: "/account/password", body: Data(#"{"new_password":"pw-1-private"}"#.utf8)))
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("q.sqlite") }
        #expect(Set(files).isSuperset(of: ["q.sqlite", "q.sqlite-wal"]))
        let stored = try files.map { try Data(contentsOf: dir.url.appendingPathComponent($0)) }
        #expect(stored.contains { String(decoding: $0, as: UTF8.self).contains("pw-1-private") })
        for file in files {
            let attributes = try FileManager.default.attributesOfItem(atPath: dir.path(file))
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(file)")
        }
        // A folder the queue makes for its file lists it to its owner alone, as the other stores' do.
        let nested = dir.url.appendingPathComponent("Offline/production")
        _ = try manualQueue(nested.appendingPathComponent("q.sqlite").path)
        for folder in [nested, nested.deletingLastPathComponent()] {
            let attributes = try FileManager.default.attributesOfItem(atPath: folder.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700, "\(folder.lastPathComponent)")
        }
    }

    /// A database an earlier version created (0644, with its `-wal` and `-shm`) kept that mode
    /// when the queue opened it again: the pending changes stayed readable by other local users.
    @Test func aDatabaseAnEarlierVersionLeftReadableIsMadePrivate() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.path("q.sqlite")
        let queue = try manualQueue(path)
        try await queue.enqueue(
            Mutation(id: "m0", method: .post, path: "/account/password", body: Data(#"{"new_password":"pw-2-private"}"#.utf8)))
        let files = { try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("q.sqlite") } }
        for file in try files() { #expect(chmod(dir.path(file), 0o644) == 0, "\(file)") }

        let reopened = try manualQueue(path)
        #expect(try await reopened.pending().map(\.mutation.id) == ["m0"])
        #expect(try files().contains("q.sqlite"))
        for file in try files() {
            let attributes = try FileManager.default.attributesOfItem(atPath: dir.path(file))
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(file)")
        }
        _ = queue
    }

    @Test func databaseIsInWALModeWithFullSync() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let db = try SQLiteDatabase(path: dir.path("q.sqlite"))
        #expect(try db.queryText("PRAGMA journal_mode") == "wal")
        #expect(try db.queryInt("PRAGMA synchronous") == 2)  // FULL
        try QueueSchema.migrate(db)
        #expect(try db.queryInt("PRAGMA user_version") == Int64(QueueSchema.currentVersion))
    }

    @Test func aDatabaseFromANewerBuildIsRefused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        do {
            let db = try SQLiteDatabase(path: dir.path("q.sqlite"))
            try db.execute("PRAGMA user_version = 99")
        }
        let error = #expect(throws: MutationQueueError.unsupportedSchemaVersion(99)) {
            _ = try manualQueue(dir.path("q.sqlite"))
        }
        #expect(
            error?.localizedDescription
                == "queue database has schema version 99, newer than this build's \(QueueSchema.currentVersion)")
    }

    @Test func aFileThatIsNotADatabaseIsATypedError() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        try Data(repeating: 0x41, count: 4096).write(to: dir.url.appendingPathComponent("junk.sqlite"))
        #expect {
            _ = try manualQueue(dir.path("junk.sqlite"))
        } throws: { error in
            if case MutationQueueError.storage = error { return true }
            return false
        }
    }

    /// A stored row that does not read back as written (another writer, a restored backup) is
    /// listed with a typed error naming the mutation: never a mutation without its header fields.
    @Test func aRowWhoseHeadersDoNotDecodeIsATypedErrorNotAMutationWithoutHeaders() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        do {
            let queue = try manualQueue(dir.path("q.sqlite"))
            try await queue.enqueue(
                Mutation(id: "m1", method: .put, path: "/notes/1", headers: ["If-Match": "\"v7\""], body: Data("{}".utf8)))
            try await queue.enqueue(Mutation(id: "m2", method: .post, path: "/notes", body: Data("{}".utf8)))
        }
        for garbage in ["X'00FF'", "'{\"If-Match\": 1}'", "'[[\"If-Match\"]]'"] {
            do {
                let db = try SQLiteDatabase(path: dir.path("q.sqlite"))
                try db.execute("UPDATE pending SET headers = \(garbage) WHERE id = 'm1'")
            }
            let reopened = try manualQueue(dir.path("q.sqlite"))
            #expect(try await reopened.pending().map(\.mutation.id) == ["m2"])
            let unreadable = try await reopened.unreadableMutations()
            #expect(unreadable.map(\.id) == ["m1"])
            guard case .unreadableMutation(let id, _) = unreadable.first?.error else {
                Issue.record("expected an unreadable mutation for \(garbage), got \(String(describing: unreadable))")
                continue
            }
            #expect(id == "m1")
        }
    }

    @Test func coalescingReplacesThePayloadInPlace() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let queue = try manualQueue(dir.path("q.sqlite"))
        try await queue.enqueue(Mutation(id: "a", method: .put, path: "/entities/a", body: Data("1".utf8)))
        try await queue.enqueue(Mutation(id: "b", method: .put, path: "/entities/b", body: Data("1".utf8)))
        try await queue.enqueue(Mutation(id: "a", method: .put, path: "/entities/a", body: Data("2".utf8)))
        let pending = try await queue.pending()
        #expect(pending.map(\.mutation.id) == ["a", "b"])
        #expect(pending[0].mutation.body == Data("2".utf8))
        #expect(pending[0].idempotencyKey == "a")  // never attempted: the key is unchanged
    }

    /// A payload whose send began — in this process or one that crashed mid-request — may have
    /// reached the server: replacing it switches to a new key (the server never sees one key with
    /// two payloads). A payload never sent keeps its key when replaced, and re-enqueueing the
    /// identical request keeps it too (a replay stays a replay). What was sent is read from the
    /// table, so it holds across processes and launches.
    @Test func replacingAPossiblySentPayloadChangesTheKey() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        do {
            // The request for y reaches the "server" and never gets an answer: the process dies
            // (here: the flush is cancelled) with y possibly applied.
            let hanging = StubTransport { _ in
                try await Task.sleep(for: .seconds(60))
                return .status(201)
            }
            let client = APIClient(environment: OfflineServer.unreachable) {
                $0.transport = hanging
                $0.interceptors = .standard()
            }
            var configuration = MutationQueue.Configuration()
            configuration.sendsOnEnqueue = false
            let queue = try MutationQueue(path: dir.path("q.sqlite"), client: client, configuration: configuration)
            try await queue.enqueue(Mutation(id: "y", method: .post, path: "/mutations", body: Data("1".utf8)))
            let flush = Task { try await queue.flush() }
            for _ in 0..<2000 where hanging.requestCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(hanging.requestCount == 1)
            flush.cancel()
            _ = try? await flush.value  // cancelled: the table is checked below
            try await queue.enqueue(Mutation(id: "x", method: .post, path: "/mutations", body: Data("1".utf8)))
            try await queue.enqueue(Mutation(id: "z", method: .post, path: "/mutations", body: Data("1".utf8)))
        }
        let reopened = try manualQueue(dir.path("q.sqlite"))
        try await reopened.enqueue(Mutation(id: "x", method: .post, path: "/mutations", body: Data("1".utf8)))
        try await reopened.enqueue(Mutation(id: "y", method: .post, path: "/mutations", body: Data("2".utf8)))
        try await reopened.enqueue(Mutation(id: "z", method: .post, path: "/mutations", body: Data("2".utf8)))
        let pending = try await reopened.pending()
        #expect(pending.map(\.idempotencyKey) == ["y~1", "x", "z"])
        #expect(pending.map(\.mutation.body) == [Data("2".utf8), Data("1".utf8), Data("2".utf8)])
    }

    @Test func invalidMutationsAreRejectedBeforeStoring() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let queue = try manualQueue(dir.path("q.sqlite"))
        for bad in [
            Mutation(id: "", method: .post, path: "/x"), Mutation(id: "has space", method: .post, path: "/x"),
            Mutation(id: "ok", method: .post, path: "no-slash"), Mutation(id: "a~1", method: .post, path: "/x"),
            Mutation(id: "ok", method: .post, path: "/../admin"),
            Mutation(id: "ok", method: .post, path: "/x", headers: HTTPHeaders([.init(name: "X-Note", value: "a\r\nb")])),
            Mutation(id: "ok", method: .get, path: "/x"), Mutation(id: "ok", method: .head, path: "/x"),
            Mutation(id: "ok", method: "CONNECT", path: "/x"),
        ] {
            await #expect(throws: MutationQueueError.self) { try await queue.enqueue(bad) }
        }
        #expect(try await queue.pendingCount() == 0)
    }

    @Test func oldestPendingAgeUsesTheInjectedWallClock() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let now = Locked(Date(timeIntervalSince1970: 1_000))
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        configuration.now = { now.current }
        let queue = try MutationQueue(path: dir.path("q.sqlite"), client: client, configuration: configuration)
        #expect(try await queue.oldestPendingAge() == nil)
        try await queue.enqueue(Mutation(id: "a", method: .post, path: "/x"))
        now.set(Date(timeIntervalSince1970: 1_090))
        try await queue.enqueue(Mutation(id: "b", method: .post, path: "/x"))
        now.set(Date(timeIntervalSince1970: 1_100))
        #expect(try await queue.oldestPendingAge() == .seconds(100))
    }
}

@Suite("Offline failure classification and backoff")
struct ClassificationTests {
    func failed(_ status: Int, headers: HTTPHeaders = HTTPHeaders()) -> FailedResponse {
        FailedResponse(HTTPResponse(statusCode: status, headers: headers))
    }

    @Test func transientPermanentConflictAndCancelled() {
        #expect(FailureClass.of(NetworkError.offline(URLError(.notConnectedToInternet))) == .transient(retryAfter: nil))
        #expect(FailureClass.of(NetworkError.timedOut(nil)) == .transient(retryAfter: nil))
        #expect(FailureClass.of(NetworkError.transport(URLError(.networkConnectionLost))) == .transient(retryAfter: nil))
        #expect(
            FailureClass.of(NetworkError.server(failed(503, headers: ["Retry-After": "7"])))
                == .transient(retryAfter: .seconds(7)))
        #expect(
            FailureClass.of(NetworkError.rateLimited(retryAfter: .seconds(3), response: failed(429)))
                == .transient(retryAfter: .seconds(3)))
        #expect(FailureClass.of(NetworkError.client(failed(408))) == .transient(retryAfter: nil))
        #expect(FailureClass.of(NetworkError.conflict(failed(409))) == .conflict)
        #expect(FailureClass.of(NetworkError.client(failed(412))) == .conflict)
        #expect(FailureClass.of(NetworkError.client(failed(400))) == .permanent)
        #expect(FailureClass.of(NetworkError.notFound(failed(404))) == .permanent)
        #expect(FailureClass.of(NetworkError.forbidden(failed(403))) == .permanent)
        #expect(FailureClass.of(NetworkError.invalidRequest("x")) == .permanent)
        #expect(FailureClass.of(NetworkError.cancelled) == .cancelled)
        #expect(FailureClass.of(CancellationError()) == .cancelled)
    }

    /// The server says "retry at 12:00:01" in a response dated 12:00:00; the device clock is an
    /// hour behind (or ahead): the wait is the server's 1 s either way.
    @Test func aRetryAfterDateIsReadAgainstTheResponseDateNotTheDeviceClock() throws {
        let served = try #require(HTTPDate.parse("Tue, 01 Dec 2026 12:00:00 GMT"))
        let headers: HTTPHeaders = ["Retry-After": "Tue, 01 Dec 2026 12:00:01 GMT", "Date": "Tue, 01 Dec 2026 12:00:00 GMT"]
        let skews: [TimeInterval] = [-3600, 0, 3600, -259_200]
        for skew in skews {
            let now = served.addingTimeInterval(skew)
            #expect(
                FailureClass.of(NetworkError.server(failed(503, headers: headers)), now: now)
                    == .transient(retryAfter: .seconds(1)))
            let response = failed(429, headers: headers)
            #expect(
                FailureClass.of(NetworkError.rateLimited(retryAfter: response.retryAfter, response: response), now: now)
                    == .transient(retryAfter: .seconds(1)))
            #expect(
                FailureClass.of(NetworkError.client(failed(408, headers: headers)), now: now)
                    == .transient(retryAfter: .seconds(1)))
        }
        // Without a Date field the moment of receipt (`now`) is the reference.
        let undated: HTTPHeaders = ["Retry-After": "Tue, 01 Dec 2026 12:00:30 GMT"]
        #expect(
            FailureClass.of(NetworkError.server(failed(503, headers: undated)), now: served)
                == .transient(retryAfter: .seconds(30)))
        // An unparsable Date falls back to `now` too; a date in the past waits nothing.
        let badDate: HTTPHeaders = ["Retry-After": "Tue, 01 Dec 2026 12:00:30 GMT", "Date": "yesterday"]
        #expect(
            FailureClass.of(NetworkError.server(failed(503, headers: badDate)), now: served)
                == .transient(retryAfter: .seconds(30)))
        let past: HTTPHeaders = ["Retry-After": "Tue, 01 Dec 2026 11:59:00 GMT", "Date": "Tue, 01 Dec 2026 12:00:00 GMT"]
        #expect(FailureClass.of(NetworkError.server(failed(503, headers: past)), now: served) == .transient(retryAfter: .zero))
    }

    @Test func backoffGrowsExponentiallyWithHalfJitterAndHonoursRetryAfter() {
        let backoff = Backoff(initialDelay: .seconds(1), maximumDelay: .seconds(60), jitter: .equal)
        #expect(backoff.delay(afterFailures: 1, random: 1, retryAfter: nil) == .seconds(1))
        #expect(backoff.delay(afterFailures: 1, random: 0, retryAfter: nil) == .milliseconds(500))
        #expect(backoff.delay(afterFailures: 4, random: 1, retryAfter: nil) == .seconds(8))
        #expect(backoff.delay(afterFailures: 40, random: 1, retryAfter: nil) == .seconds(60))
        #expect(backoff.delay(afterFailures: 1, random: 1, retryAfter: .seconds(30)) == .seconds(30))
    }
}
