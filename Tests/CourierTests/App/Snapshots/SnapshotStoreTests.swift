import Foundation
import Testing
@testable import Courier

extension CachingTests {
    @Suite struct Snapshots {
        struct Catalog: Codable, Equatable, Sendable {
            var items: [String]
        }

        struct Failure: Error {}

        let clock = ManualDate()

        private func store() -> (SnapshotStore, URL) {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "courier-snapshots-\(UUID().uuidString)")
            return (SnapshotStore(directory: directory, now: clock.provider), directory)
        }

        private func collect(
            _ stream: AsyncThrowingStream<SnapshotState<Catalog>, any Error>
        ) async -> ([SnapshotState<Catalog>], (any Error)?) {
            var states: [SnapshotState<Catalog>] = []
            do {
                for try await state in stream { states.append(state) }
                return (states, nil)
            } catch {
                return (states, error)
            }
        }

        @Test func saveAndLoadRoundTripWithSavedAt() async throws {
            let (store, directory) = store()
            defer { try? FileManager.default.removeItem(at: directory) }
            try await store.save(Catalog(items: ["a"]), key: "catalog")
            clock.advance(by: 90)
            let loaded = try #require(await store.load(Catalog.self, key: "catalog"))
            #expect(loaded.value == Catalog(items: ["a"]))
            #expect(loaded.age(at: clock.now) == .seconds(90))
        }

        /// The folder (made with the store, before its first file) was 0755 and `snapshots.lock`
        /// 0644: other local users could list a user's snapshot folder.
        @Test func theFolderAndItsFilesAreTheirOwnersAlone() async throws {
            let (store, directory) = store()
            defer { try? FileManager.default.removeItem(at: directory) }
            try await store.save(Catalog(items: ["a"]), key: "catalog")
            let mode = { (name: String) in
                let path = directory.appendingPathComponent(name).path
                return try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
            }
            #expect(try mode("") == 0o700)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(names.contains("snapshots.lock") && names.count == 2, "\(names)")
            for name in names { #expect(try mode(name) == 0o600, "\(name)") }
        }

        /// A snapshot an earlier version wrote 0644 stayed so while it was only loaded.
        @Test func aSnapshotLeftReadableIsMadePrivateWhenLoaded() async throws {
            let (store, directory) = store()
            defer { try? FileManager.default.removeItem(at: directory) }
            try await store.save(Catalog(items: ["a"]), key: "catalog")
            let file = try #require(
                try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0 != "snapshots.lock" })
            let path = directory.appendingPathComponent(file).path
            #expect(chmod(path, 0o644) == 0)
            #expect(await store.load(Catalog.self, key: "catalog")?.value == Catalog(items: ["a"]))
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600)
        }

        @Test func snapshotFirstYieldsSnapshotThenFreshAndSavesIt() async throws {
            let (store, directory) = store()
            defer { try? FileManager.default.removeItem(at: directory) }
            try await store.save(Catalog(items: ["old"]), key: "catalog")
            clock.advance(by: 60)
            let (states, error) = await collect(store.snapshotFirst(key: "catalog") { Catalog(items: ["new"]) })

            #expect(error == nil)
            #expect(states.count == 2)
            if case .snapshot(let snapshot, let age)? = states.first {
                #expect(snapshot.value.items == ["old"])
                #expect(age == .seconds(60))
            } else {
                Issue.record("first state should be the snapshot: \(states)")
            }
            #expect(states.last?.isFresh == true)
            #expect(states.last?.value.items == ["new"])
            #expect(await store.load(Catalog.self, key: "catalog")?.value.items == ["new"])
        }

        @Test func failedFetchYieldsSnapshotThenErrorAndKeepsSnapshot() async throws {
            let (store, directory) = store()
            defer { try? FileManager.default.removeItem(at: directory) }
            try await store.save(Catalog(items: ["old"]), key: "catalog")
            let (states, error) = await collect(store.snapshotFirst(key: "catalog") { () throws -> Catalog in throw Failure() })

            #expect(states.map(\.value) == [Catalog(items: ["old"])])
            #expect(states.first?.isFresh == false)
            #expect(error is Failure)
            #expect(await store.load(Catalog.self, key: "catalog")?.value.items == ["old"])
        }

        @Test func withoutSnapshotOnlyTheFreshValueOrTheErrorArrives() async throws {
            let (store, directory) = store()
            defer { try? FileManager.default.removeItem(at: directory) }
            let (failed, failure) = await collect(store.snapshotFirst(key: "none") { () throws -> Catalog in throw Failure() })
            #expect(failed.isEmpty && failure is Failure)
            let (fresh, noError) = await collect(store.snapshotFirst(key: "none") { Catalog(items: ["x"]) })
            #expect(fresh.count == 1 && fresh.first?.isFresh == true && noError == nil)
        }

        @Test func snapshotsOlderThanMaxAgeAreNotShown() async throws {
            let (store, directory) = store()
            defer { try? FileManager.default.removeItem(at: directory) }
            try await store.save(Catalog(items: ["old"]), key: "catalog")
            clock.advance(by: 3600)
            let (states, _) = await collect(
                store.snapshotFirst(key: "catalog", maxSnapshotAge: .seconds(600)) { Catalog(items: ["new"]) })
            #expect(states.count == 1)
            #expect(states.first?.isFresh == true)
        }

        @Test func undecodableSnapshotIsDroppedAndRemoveAllClears() async throws {
            let (store, directory) = store()
            defer { try? FileManager.default.removeItem(at: directory) }
            try await store.save(["not": "a catalog"], key: "catalog")
            #expect(await store.load(Catalog.self, key: "catalog") == nil)
            #expect(!FileManager.default.fileExists(atPath: store.fileURL(for: "catalog").path))

            try await store.save(Catalog(items: ["a"]), key: "one")
            try await store.save(Catalog(items: ["b"]), key: "two")
            await store.removeAll()
            #expect(await store.load(Catalog.self, key: "one") == nil)
            #expect(await store.load(Catalog.self, key: "two") == nil)
        }

        /// A damaged file whose `savedAt` lies more than 2^63 ms back used to trap converting the
        /// age to `Int64`, in `load(maxAge:)` and in `snapshotFirst`.
        @Test func aSavedAtAgesBackIsTooOldNotACrash() async throws {
            let (store, directory) = store()
            defer { try? FileManager.default.removeItem(at: directory) }
            let damaged = #"{"key":"catalog","savedAt":-1e300,"value":{"items":["a"]}}"#
            for step in ["snapshotFirst", "load under a maxAge"] {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try Data(damaged.utf8).write(to: store.fileURL(for: "catalog"))
                if step == "snapshotFirst" {
                    let (states, error) = await collect(store.snapshotFirst(key: "catalog") { Catalog(items: ["new"]) })
                    #expect(error == nil)
                    guard case .snapshot(let snapshot, let age)? = states.first else {
                        Issue.record("expected the snapshot first: \(states)")
                        continue
                    }
                    #expect(snapshot.value.items == ["a"])
                    #expect(age == .milliseconds(Int64.max))
                } else {
                    #expect(await store.load(Catalog.self, key: "catalog", maxAge: .seconds(60)) == nil)
                    #expect(!FileManager.default.fileExists(atPath: store.fileURL(for: "catalog").path))
                }
            }
        }
    }
}

@Suite("Snapshot store: a read that began before a write", .timeLimit(.minutes(1)))
struct SnapshotStoreWriteRaceTests {
    /// Read A fetches the server's state before the app's mutation and answers last; meanwhile the
    /// app saves (or removes) the snapshot after its mutation and read B fetches the new state.
    /// A's value used to overwrite both: the snapshot shown at the next launch predated the mutation.
    @Test(
        "a read's value never overwrites a save, a remove or a later read's value made while it fetched",
        arguments: ["save", "remove"])
    func aReadThatBeganBeforeAWriteDoesNotOverwriteIt(_ write: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("snapshots-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = SnapshotStore(directory: directory)
        try await store.save("v0", key: "profile")
        let started = AsyncStream<Void>.makeStream()
        let release = AsyncStream<Void>.makeStream()
        let readA = Task {
            var values: [String] = []
            for try await state in store.snapshotFirst(
                key: "profile", as: String.self,
                fetch: {
                    started.continuation.yield()
                    for await _ in release.stream { break }
                    return "v1 before the mutation"
                })
            {
                values.append(state.value)
            }
            return values
        }
        for await _ in started.stream { break }
        if write == "save" {
            try await store.save("v2 the mutation's result", key: "profile")
        } else {
            await store.remove(key: "profile")
        }
        #expect(await store.load(String.self, key: "profile")?.value == (write == "save" ? "v2 the mutation's result" : nil))
        var valuesB: [String] = []
        for try await state in store.snapshotFirst(key: "profile", as: String.self, fetch: { "v2 after the mutation" }) {
            valuesB.append(state.value)
        }
        #expect(valuesB.last == "v2 after the mutation")
        release.continuation.yield()
        // A still shows what it fetched, but the store keeps the newer value.
        #expect(try await readA.value == ["v0", "v1 before the mutation"])
        #expect(await store.load(String.self, key: "profile")?.value == "v2 after the mutation")

        // Two reads in order: the later one saves over the earlier one as before.
        for try await _ in store.snapshotFirst(key: "profile", as: String.self, fetch: { "v3" }) {}
        #expect(await store.load(String.self, key: "profile")?.value == "v3")
    }
}

@Suite("Snapshot store and logout")
struct SnapshotStoreLogoutTests {
    @Test("a fetch that finishes after removeAll() neither shows nor saves its value: the stream ends cancelled")
    func logoutDuringFetch() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("snapshots-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = SnapshotStore(directory: directory)
        try await store.save("account-A-old", key: "profile")
        var states: [String] = []
        var ending: (any Error)?
        do {
            for try await state in store.snapshotFirst(
                key: "profile", as: String.self,
                fetch: {
                    await store.removeAll()  // the user logs out while the request is in flight
                    return "account-A-new"
                })
            {
                states.append(state.value)
            }
        } catch {
            ending = error
        }
        #expect(states == ["account-A-old"], "account A's fresh value reaches no screen after the logout")
        #expect((ending as? NetworkError)?.isCancellation == true)
        #expect(await store.load(String.self, key: "profile") == nil)
    }
}
