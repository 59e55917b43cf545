import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

extension CachingIntegrationTests {
    /// Snapshot-first reads over the real server, and with the server unreachable.
    @Suite struct SnapshotFirst {
        struct Catalog: Codable, Equatable, Sendable {
            var items: [Item]
            struct Item: Codable, Equatable, Sendable {
                var id: Int
                var name: String
            }
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

        /// A port on loopback where nothing listens: bound, then closed.
        private func closedPortURL() throws -> URL {
            #if canImport(Glibc)
            let streamType = Int32(SOCK_STREAM.rawValue)
            #else
            let streamType = SOCK_STREAM
            #endif
            let listener = socket(AF_INET, streamType, 0)
            defer { close(listener) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let port: UInt16 = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    _ = bind(listener, raw, length)
                    _ = getsockname(listener, raw, &length)
                    return UInt16(bigEndian: pointer.pointee.sin_port)
                }
            }
            return try #require(URL(string: "http://127.0.0.1:\(port)"))
        }

        @Test func yieldsSnapshotThenFreshValueAndWithServerDownSnapshotThenError() async throws {
            let namespace = TestServers.makeNamespace("snap")
            let directory = CacheIntegration.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = SnapshotStore(directory: directory)
            let (client, _) = try TestServers.apiClient(namespace: namespace)
            let load: @Sendable () async throws -> Catalog = { try await client.send(Request<Catalog>.get("/items")) }

            // First launch: nothing saved, the network value arrives and is saved.
            let (firstLaunch, firstError) = await collect(store.snapshotFirst(key: "catalog", fetch: load))
            #expect(firstError == nil)
            #expect(firstLaunch.count == 1 && firstLaunch.first?.isFresh == true)
            let seeded = try #require(firstLaunch.first?.value)
            #expect(seeded.items.count == 3)

            // The server changes; the next read shows the snapshot first, then the new value.
            try await client.send(Request<Void>.delete("/items/1"))
            let (secondLaunch, secondError) = await collect(store.snapshotFirst(key: "catalog", fetch: load))
            #expect(secondError == nil)
            #expect(secondLaunch.map(\.isFresh) == [false, true])
            #expect(secondLaunch.first?.value == seeded)
            #expect(secondLaunch.last?.value.items.count == 2)

            // The server is down: the snapshot, then the error; the snapshot stays saved.
            let down = APIClient(
                environment: APIEnvironment(name: "down", baseURL: try closedPortURL()), configure: TestTransport.configure)
            let (offline, offlineError) = await collect(
                store.snapshotFirst(key: "catalog") {
                    try await down.send(Request<Catalog>.get("/items"))
                })
            #expect(offline.count == 1 && offline.first?.isFresh == false)
            #expect(offline.first?.value.items.count == 2)
            #expect(offlineError is NetworkError)
            #expect(await store.load(Catalog.self, key: "catalog")?.value.items.count == 2)
            #expect(try await CacheIntegration.routeCount("GET /items", namespace: namespace) == 2)
        }

        /// Two stores on one folder (two screens, or two modules, each with its own store of the
        /// account): what one saves or clears while the other's read is in flight is not undone
        /// when that read ends. Each store kept its own order of writes, so the older value the
        /// read fetched overwrote the newer one saved through the other store, and after a logout
        /// through one store the other saved the previous account's value again.
        @Test(arguments: ["save", "removeAll"])
        func aWriteThroughAnotherStoreOnTheFolderIsNotUndoneByAReadInFlight(_ write: String) async throws {
            let namespace = TestServers.makeNamespace("snap")
            let directory = CacheIntegration.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let reader = SnapshotStore(directory: directory)
            let writer = SnapshotStore(directory: directory)
            let (client, _) = try TestServers.apiClient(namespace: namespace)
            let newer = Catalog(items: [Catalog.Item(id: 9, name: "saved after the read began")])

            let (states, error) = await collect(
                reader.snapshotFirst(key: "catalog") {
                    let fetched = try await client.send(Request<Catalog>.get("/items"))
                    // While the read is in flight, the other store writes the key (a mutation's
                    // result) or clears the folder (a logout).
                    if write == "save" { try await writer.save(newer, key: "catalog") } else { await writer.removeAll() }
                    return fetched
                })

            #expect(try await CacheIntegration.routeCount("GET /items", namespace: namespace) == 1)
            if write == "save" {
                #expect(error == nil)
                #expect(states.last?.value.items.count == 3, "the fetched value is still shown")
                #expect(await reader.load(Catalog.self, key: "catalog")?.value == newer)
            } else {
                #expect((error as? NetworkError)?.isCancellation == true)
                #expect(states.isEmpty)
                #expect(await reader.load(Catalog.self, key: "catalog") == nil)
            }
        }

        /// The same across processes: an app and its widget, each with a store on the folder in
        /// their app group container (stores that share nothing in memory). Each process kept its
        /// own order of writes, so the app's read in flight saved its older value over the widget's
        /// newer one, brought back a key the widget removed, and saved the previous account's
        /// value after a logout in the widget.
        @Test(arguments: ["save", "remove", "removeAll"])
        func aWriteInAnotherProcessIsNotUndoneByAReadInFlight(_ write: String) async throws {
            let namespace = TestServers.makeNamespace("snap")
            let directory = CacheIntegration.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let app = SnapshotStore(directory: directory, now: { Date() }, sharesMemory: false)
            let widget = SnapshotStore(directory: directory, now: { Date() }, sharesMemory: false)
            let (client, _) = try TestServers.apiClient(namespace: namespace)
            let older = Catalog(items: [Catalog.Item(id: 1, name: "saved before the read")])
            let newer = Catalog(items: [Catalog.Item(id: 9, name: "saved by the widget after the read began")])
            try await widget.save(older, key: "catalog")

            let (states, error) = await collect(
                app.snapshotFirst(key: "catalog") {
                    let fetched = try await client.send(Request<Catalog>.get("/items"))
                    switch write {
                    case "save": try await widget.save(newer, key: "catalog")
                    case "remove": await widget.remove(key: "catalog")
                    default: await widget.removeAll()
                    }
                    return fetched
                })

            #expect(try await CacheIntegration.routeCount("GET /items", namespace: namespace) == 1)
            let relaunched = SnapshotStore(directory: directory, now: { Date() }, sharesMemory: false)
            switch write {
            case "save":
                #expect(error == nil)
                #expect(states.last?.value.items.count == 3, "the fetched value is still shown")
                #expect(await relaunched.load(Catalog.self, key: "catalog")?.value == newer)
            case "remove":
                #expect(error == nil)
                #expect(states.last?.value.items.count == 3, "the fetched value is still shown")
                #expect(await relaunched.load(Catalog.self, key: "catalog") == nil)
            default:
                #expect((error as? NetworkError)?.isCancellation == true)
                #expect(states.map(\.value) == [older], "only the snapshot shown before the logout")
                #expect(await relaunched.load(Catalog.self, key: "catalog") == nil)
            }
            // A read that begins after the widget's write saves as usual.
            _ = await collect(app.snapshotFirst(key: "catalog") { try await client.send(Request<Catalog>.get("/items")) })
            #expect(await relaunched.load(Catalog.self, key: "catalog")?.value.items.count == 3)
        }

        @Test("a read after the folder's lock file was deleted (a relaunch) saves its value")
        func aReadAfterTheLockFileWasDeletedSavesItsValue() async throws {
            let namespace = TestServers.makeNamespace("snap")
            let directory = CacheIntegration.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let (client, _) = try TestServers.apiClient(namespace: namespace)
            let older = Catalog(items: [Catalog.Item(id: 1, name: "saved before the relaunch")])
            do {
                let app = SnapshotStore(directory: directory, now: { Date() }, sharesMemory: false)
                try await app.save(older, key: "catalog")
            }
            // The app's cleanup of files it does not know deletes the lock file; the app relaunches.
            try FileManager.default.removeItem(at: directory.appendingPathComponent("snapshots.lock"))
            let relaunched = SnapshotStore(directory: directory, now: { Date() }, sharesMemory: false)

            let (states, error) = await collect(
                relaunched.snapshotFirst(key: "catalog") { try await client.send(Request<Catalog>.get("/items")) })

            #expect(error == nil)
            #expect(states.map(\.value.items.count) == [1, 3])
            #expect(try await CacheIntegration.routeCount("GET /items", namespace: namespace) == 1)
            let again = SnapshotStore(directory: directory, now: { Date() }, sharesMemory: false)
            #expect(await again.load(Catalog.self, key: "catalog")?.value.items.count == 3, "the fetched value was saved")
        }
    }
}
