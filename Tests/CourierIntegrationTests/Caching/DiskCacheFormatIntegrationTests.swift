import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier

extension CachingIntegrationTests {
    /// Entries a previous version of Courier wrote to disk, read after the app's update.
    @Suite struct DiskCacheFormat {
        /// The version before the credential rule stored a response to a Basic-authorized request
        /// without the request's `Authorization` (no `Vary` on it): such an entry cannot be told
        /// from an anonymous request's, and after the update it answered an anonymous request
        /// from the cache — alice's private data, the server not asked.
        @Test func anEntryWrittenBeforeTheCredentialRuleIsNeverServed() async throws {
            let namespace = TestServers.makeNamespace("disk")
            let directory = CacheIntegration.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let resource = CacheIntegration.resource("r1", ["cc": "private, max-age=600"])
            let alice = try resource.basicAuth(user: "alice", password: "pw-alice")
            let before = try CacheIntegration.client(
                namespace: namespace, cache: CacheIntegration.cache(storage: DiskCacheStorage(directory: directory)))
            let forAlice = try await before.send(alice)

            // The entry as the previous version wrote it: format CCE2, nothing kept of the
            // request's Authorization.
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".entry") }
            #expect(files.count == 1)
            let file = directory.appendingPathComponent(try #require(files.first))
            let bytes = [UInt8](try Data(contentsOf: file))
            let length = bytes[4..<8].reduce(0) { $0 << 8 | Int($1) }
            var metadata = try JSONDecoder().decode(DiskEntryCodec.Metadata.self, from: Data(bytes[8..<(8 + length)]))
            metadata.varying = [:]
            metadata.variant = ""
            let json = [UInt8](try JSONEncoder().encode(metadata))
            var old = Array("CCE2".utf8) + [24, 16, 8, 0].map { UInt8(json.count >> $0 & 0xff) } + json
            let checksum = StableHash.fnv1a64(old)
            old += bytes[(8 + length)..<(bytes.count - 8)]
            old += [56, 48, 40, 32, 24, 16, 8, 0].map { UInt8(checksum >> UInt64($0) & 0xff) }
            try FileManager.default.removeItem(at: file)
            let storage = DiskCacheStorage(directory: directory)
            try Data(old).write(to: storage.fileURL(for: metadata.key))

            // After the update: a new storage over the same folder.
            let after = try CacheIntegration.client(namespace: namespace, cache: CacheIntegration.cache(storage: storage))
            let anonymous = try await after.response(for: resource)
            #expect(anonymous.context.cacheOutcome == .miss)
            #expect(anonymous.value.serial != forAlice.serial)
            #expect(try await CacheIntegration.counter("requests", of: "r1", namespace: namespace) == 2)
        }
    }
}
