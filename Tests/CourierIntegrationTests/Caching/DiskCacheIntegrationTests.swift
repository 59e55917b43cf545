import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

extension CachingIntegrationTests {
    /// The on-disk storage across client instances, damage and account partitions.
    @Suite struct DiskCache {
        private func entryFiles(in directory: URL) throws -> [URL] {
            try FileManager.default.contentsOfDirectory(atPath: directory.path)
                .filter { $0.hasSuffix(".entry") }
                .map { directory.appendingPathComponent($0) }
        }

        @Test func diskCacheSurvivesANewClientInstance() async throws {
            let namespace = TestServers.makeNamespace("disk")
            let directory = CacheIntegration.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let request = CacheIntegration.resource("r1", ["cc": "max-age=600"])

            let first = try await CacheIntegration.client(
                namespace: namespace, cache: CacheIntegration.cache(storage: DiskCacheStorage(directory: directory))
            ).send(request)
            // A new storage and client over the same directory, as after an app restart.
            let restarted = try CacheIntegration.client(
                namespace: namespace, cache: CacheIntegration.cache(storage: DiskCacheStorage(directory: directory)))
            let second = try await restarted.response(for: request)

            #expect(second.context.cacheOutcome == .hit)
            #expect(second.value == first)
            #expect(try await CacheIntegration.counter("requests", of: "r1", namespace: namespace) == 1)
        }

        /// An entry file (a response's headers and body) was created 0644 under the usual umask:
        /// any other user of the machine could read what the server answered the signed-in user.
        @Test func anEntryFileIsReadableByItsOwnerAlone() async throws {
            let namespace = TestServers.makeNamespace("disk")
            let directory = CacheIntegration.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let request = CacheIntegration.resource("r1", ["cc": "private, max-age=600"])
            let client = try CacheIntegration.client(
                namespace: namespace, cache: CacheIntegration.cache(storage: DiskCacheStorage(directory: directory)))
            let value = try await client.send(request)
            #expect(try await CacheIntegration.counter("requests", of: "r1", namespace: namespace) == 1)

            let file = try #require(try entryFiles(in: directory).first)
            #expect(String(decoding: try Data(contentsOf: file), as: UTF8.self).contains("\"serial\":\(value.serial)"))
            let mode = { (url: URL) in
                try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue
            }
            #expect(try mode(file) == 0o600)
        }

        /// A response to a Basic-authorized request with `Vary: Authorization` (as a server that
        /// answers per user should send): the entry file kept the request's field as sent —
        /// `"varying":{"authorization":"Basic YWxpY2U6…"}` and the same in `"variant"` — the
        /// user's password in base64, on disk for as long as the entry lived.
        @Test func aResponseVaryingOnAuthorizationKeepsNoCredentialOnDisk() async throws {
            let namespace = TestServers.makeNamespace("disk")
            let directory = CacheIntegration.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let resource = CacheIntegration.resource("r1", ["cc": "private, max-age=600", "vary": "Authorization"])
            let alice = try resource.basicAuth(user: "alice", password: "pw-vary-private")
            let client = try CacheIntegration.client(
                namespace: namespace, cache: CacheIntegration.cache(storage: DiskCacheStorage(directory: directory)))
            _ = try await client.send(alice)
            // The variant still tells credentials apart: the same one is a hit, another a miss.
            #expect(try await client.response(for: alice).context.cacheOutcome == .hit)
            let other = try await client.response(for: try resource.basicAuth(user: "alice", password: "pw-other"))
            #expect(other.context.cacheOutcome == .miss)
            #expect(try await CacheIntegration.counter("requests", of: "r1", namespace: namespace) == 2)

            let encoded = Data("alice:pw-vary-private".utf8).base64EncodedString()
            let files = try entryFiles(in: directory)
            #expect(files.count == 2)
            for file in files {
                let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
                #expect(text.contains("\"varying\""))
                #expect(!text.contains(encoded) && !text.contains("Basic "), "\(text.prefix(900))")
            }
            // A new storage on the folder (a relaunch) still finds it.
            let relaunched = try CacheIntegration.client(
                namespace: namespace, cache: CacheIntegration.cache(storage: DiskCacheStorage(directory: directory)))
            #expect(try await relaunched.response(for: alice).context.cacheOutcome == .hit)
        }

        @Test func truncatedEntryIsDroppedNotCrashedOn() async throws {
            let namespace = TestServers.makeNamespace("disk")
            let directory = CacheIntegration.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let request = CacheIntegration.resource("r1", ["cc": "max-age=600"])
            _ = try await CacheIntegration.client(
                namespace: namespace, cache: CacheIntegration.cache(storage: DiskCacheStorage(directory: directory))
            ).send(request)

            let file = try #require(try entryFiles(in: directory).first)
            let data = try Data(contentsOf: file)
            try data.prefix(data.count / 2).write(to: file)

            let restarted = try CacheIntegration.client(
                namespace: namespace, cache: CacheIntegration.cache(storage: DiskCacheStorage(directory: directory)))
            let response = try await restarted.response(for: request)

            #expect(response.context.cacheOutcome == .miss)
            #expect(response.value.serial == 2)
            #expect(try await CacheIntegration.counter("requests", of: "r1", namespace: namespace) == 2)
            let rewritten = try #require(try entryFiles(in: directory).first)
            #expect(try Data(contentsOf: rewritten).count > data.count / 2, "the fresh response was stored whole")
        }

        /// One byte of an entry's metadata damaged between runs — the status, a header field —
        /// leaves valid JSON: only the body had a checksum, so the damaged response was served (a
        /// cached 200 answered as a 500 without asking the server).
        @Test(arguments: [#""statusCode":200"#, "max-age=600"])
        func anEntryWhoseMetadataIsDamagedIsDroppedNotServed(_ field: String) async throws {
            let namespace = TestServers.makeNamespace("disk")
            let directory = CacheIntegration.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let request = CacheIntegration.resource("r1", ["cc": "max-age=600"])
            _ = try await CacheIntegration.client(
                namespace: namespace, cache: CacheIntegration.cache(storage: DiskCacheStorage(directory: directory))
            ).send(request)

            let file = try #require(try entryFiles(in: directory).first)
            var data = try Data(contentsOf: file)
            let found = try #require(data.firstRange(of: Data(field.utf8)), "\(field) is in the stored metadata")
            data[found.upperBound - 3] = UInt8(ascii: "9")  // 200 -> 900, 600 -> 900: still valid JSON
            try data.write(to: file)

            let restarted = try CacheIntegration.client(
                namespace: namespace, cache: CacheIntegration.cache(storage: DiskCacheStorage(directory: directory)))
            let response = try await restarted.response(for: request)

            #expect(response.context.cacheOutcome == .miss)
            #expect(response.response.statusCode == 200)
            #expect(response.value.serial == 2)
            #expect(try await CacheIntegration.counter("requests", of: "r1", namespace: namespace) == 2)
        }

        @Test func clearingOnePartitionRemovesOnlyThatAccount() async throws {
            let namespace = TestServers.makeNamespace("disk")
            let directory = CacheIntegration.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let partition = Locked("alice")
            let cache = CacheIntegration.cache(storage: DiskCacheStorage(directory: directory), partition: partition)
            let client = try CacheIntegration.client(namespace: namespace, cache: cache)
            let request = CacheIntegration.resource("r1", ["cc": "private, max-age=600"])

            _ = try await client.send(request)
            partition.set("bob")
            _ = try await client.send(request)
            #expect(try entryFiles(in: directory).count == 2)

            await cache.removeAll(partition: "alice")  // alice logs out
            #expect(try entryFiles(in: directory).count == 1)
            let bob = try await client.response(for: request)
            partition.set("alice")
            let alice = try await client.response(for: request)

            #expect(bob.context.cacheOutcome == .hit)
            #expect(alice.context.cacheOutcome == .miss)
            #expect(try await CacheIntegration.counter("requests", of: "r1", namespace: namespace) == 3)
        }

        /// An app and its extension on one cache directory: the extension stored the list after
        /// the app had read the directory, and the app's POST to the list left that entry on disk
        /// (the app's index did not know it), so the extension kept serving the list without the
        /// new element for the rest of its max-age.
        @Test func aWriteInvalidatesWhatAnotherInstanceOnTheDirectoryStored() async throws {
            struct Collection: Decodable, Sendable {
                var count: Int
            }
            let namespace = TestServers.makeNamespace("disk")
            let directory = CacheIntegration.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let appStorage = DiskCacheStorage(directory: directory)
            let app = try CacheIntegration.client(namespace: namespace, cache: CacheIntegration.cache(storage: appStorage))
            let extensionClient = try CacheIntegration.client(
                namespace: namespace, cache: CacheIntegration.cache(storage: DiskCacheStorage(directory: directory)))
            let list = Request<Collection>.get("/cache/collection")
            #expect(await appStorage.totalByteCount() == 0, "the app has read the (empty) directory")
            _ = try await extensionClient.send(list)

            try await app.send(Request<Void>.post("/cache/collection", body: ["name": "new"]))
            let reread = try await extensionClient.response(for: list)

            let stats = try await TestServers.stats(namespace: namespace)
            #expect(reread.context.cacheOutcome == .miss)
            #expect(reread.value.count == 1, "the element the app posted")
            #expect((stats["cacheCollection"] as? [String: Any])?["gets"] as? Int == 2)
        }
    }
}
