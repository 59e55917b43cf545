import Foundation
import Testing
@testable import Courier

extension CachingTests {
    @Suite struct Storage {
        let t0 = Date(timeIntervalSince1970: 1_750_000_000)

        private func response(_ body: String, vary: [String: String?] = [:], at time: Date? = nil) -> CachedResponse {
            var headers: HTTPHeaders = ["Cache-Control": "max-age=60", "Content-Type": "application/json"]
            if !vary.isEmpty { headers.replace("Vary", with: vary.keys.sorted().joined(separator: ", ")) }
            return CachedResponse(
                statusCode: 200, headers: headers, body: Data(body.utf8),
                url: URL(string: "https://a.test/x"), requestTime: time ?? t0,
                responseTime: time ?? t0, varyingRequestHeaders: vary)
        }

        private func key(_ path: String, _ partition: String = "p") -> CacheKey {
            CacheKey(partition: partition, url: "https://a.test/\(path)")
        }

        private func temporaryDirectory() -> URL {
            FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-tests-\(UUID().uuidString)")
        }

        @Test func lruIndexEvictsLeastRecentlyUsed() {
            var lru = LRUIndex<String>()
            lru.insert("a", cost: 10)
            lru.insert("b", cost: 20)
            lru.insert("c", cost: 30)
            lru.touch("a")
            #expect(lru.keysByRecency == ["a", "c", "b"])
            #expect(lru.removeOldest() == "b")
            #expect(lru.totalCost == 40)
            lru.remove("a")
            #expect(lru.keysByRecency == ["c"])
            #expect(lru.count == 1)
        }

        @Test func memoryStorageEvictsByBytesInLRUOrder() async {
            let one = response(String(repeating: "a", count: 400))
            let storage = MemoryCacheStorage(byteLimit: one.byteCount * 2 + 10)
            await storage.store(one, for: key("1"))
            await storage.store(one, for: key("2"))
            _ = await storage.responses(for: key("1"))  // 1 is now more recent than 2
            await storage.store(one, for: key("3"))
            #expect(await storage.responses(for: key("1")).count == 1)
            #expect(await storage.responses(for: key("2")).isEmpty)
            #expect(await storage.responses(for: key("3")).count == 1)
            #expect(await storage.totalByteCount() <= storage.byteLimit)
        }

        @Test func memoryStorageKeepsVariantsAndReplacesSameVariant() async {
            let storage = MemoryCacheStorage()
            await storage.store(response("de", vary: ["accept-language": "de"]), for: key("x"))
            await storage.store(response("fr", vary: ["accept-language": "fr"]), for: key("x"))
            await storage.store(response("de2", vary: ["accept-language": "de"], at: t0.addingTimeInterval(1)), for: key("x"))
            let variants = await storage.responses(for: key("x"))
            #expect(variants.count == 2)
            #expect(variants.first.map { String(decoding: $0.body, as: UTF8.self) } == "de2")
        }

        @Test(arguments: [StorageKind.memory, .disk])
        func removingAPartitionKeepsOthers(_ kind: StorageKind) async {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let storage = kind.make(directory)
            await storage.store(response("a"), for: key("x", "alice"))
            await storage.store(response("b"), for: key("x", "bob"))
            await storage.store(response("c"), for: key("y", "alice"))
            await storage.removeAll(partition: "alice")
            #expect(await storage.responses(for: key("x", "alice")).isEmpty)
            #expect(await storage.responses(for: key("y", "alice")).isEmpty)
            #expect(await storage.responses(for: key("x", "bob")).count == 1)
        }

        @Test(arguments: [StorageKind.memory, .disk])
        func removingByURLCoversEveryPartition(_ kind: StorageKind) async {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let storage = kind.make(directory)
            await storage.store(response("a"), for: key("x", "alice"))
            await storage.store(response("b"), for: key("x", "bob"))
            await storage.store(response("c"), for: key("y", "bob"))
            await storage.removeResponses(forURL: "https://a.test/x")
            #expect(await storage.responses(for: key("x", "alice")).isEmpty)
            #expect(await storage.responses(for: key("x", "bob")).isEmpty)
            #expect(await storage.responses(for: key("y", "bob")).count == 1)
        }

        @Test func diskStorageSurvivesANewInstance() async throws {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let stored = response(#"{"a":1}"#, vary: ["accept-language": "de", "x-absent": nil])
            await DiskCacheStorage(directory: directory).store(stored, for: key("x"))

            let reopened = DiskCacheStorage(directory: directory)
            let loaded = await reopened.responses(for: key("x"))
            #expect(loaded == [stored])
            #expect(await reopened.count == 1)
        }

        @Test(arguments: [0, 3, 7, 20, -1])
        func diskStorageDropsTruncatedEntries(_ keptBytes: Int) async throws {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let writer = DiskCacheStorage(directory: directory)
            await writer.store(response(String(repeating: "z", count: 200)), for: key("x"))
            await writer.store(response("other"), for: key("y"))
            let file = writer.fileURL(for: key("x"))
            let data = try Data(contentsOf: file)
            try data.prefix(keptBytes >= 0 ? keptBytes : data.count - 1).write(to: file)

            let reopened = DiskCacheStorage(directory: directory)
            #expect(await reopened.responses(for: key("x")).isEmpty)
            #expect(await reopened.responses(for: key("y")).count == 1)
            #expect(!FileManager.default.fileExists(atPath: file.path), "the damaged file is deleted")
        }

        @Test func diskStorageDropsEntriesCorruptedAfterIndexing() async throws {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let storage = DiskCacheStorage(directory: directory)
            await storage.store(response(String(repeating: "z", count: 64)), for: key("x"))
            let file = storage.fileURL(for: key("x"))
            var data = try Data(contentsOf: file)
            data[data.count - 1] ^= 0xff
            try data.write(to: file)
            #expect(await storage.responses(for: key("x")).isEmpty, "checksum mismatch")
            #expect(await storage.count == 0)
        }

        /// A metadata `bodyLength` near `Int.max` (corruption or tampering) is rejected and the file
        /// deleted; adding it to the header size used to trap with an arithmetic overflow on every
        /// launch, in the index scan and in `decode`.
        @Test(arguments: [Int.max, Int.max - 7, -1])
        func diskStorageDropsEntriesWithAbsurdBodyLength(_ bodyLength: Int) async throws {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            await DiskCacheStorage(directory: directory).store(response("body"), for: key("x"))
            let file = DiskCacheStorage(directory: directory).fileURL(for: key("x"))
            let data = try Data(contentsOf: file)
            let length = data[4..<8].reduce(0) { $0 << 8 | Int($1) }
            let json = String(decoding: data[8..<(8 + length)], as: UTF8.self).replacingOccurrences(
                of: #""bodyLength":\d+"#, with: "\"bodyLength\":\(bodyLength)", options: .regularExpression)
            #expect(json.contains("\"bodyLength\":\(bodyLength)"))
            let metadata = Data(json.utf8)
            let count = UInt32(metadata.count)
            var tampered = Data(DiskEntryCodec.magic)
            tampered.append(contentsOf: [
                UInt8(count >> 24), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff),
            ])
            tampered.append(metadata)
            tampered.append(data[(8 + length)...])

            #expect(throws: (any Error).self) { try DiskEntryCodec.decode(tampered) }
            try tampered.write(to: file)
            let reopened = DiskCacheStorage(directory: directory)
            #expect(await reopened.count == 0)
            #expect(await reopened.responses(for: key("x")).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: file.path), "the damaged file is deleted")
        }

        @Test func diskStorageIgnoresStrayFiles() async throws {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data("garbage".utf8).write(to: directory.appendingPathComponent("0123.entry"))
            try Data("half".utf8).write(to: directory.appendingPathComponent(".tmp-crashed"))
            let storage = DiskCacheStorage(directory: directory)
            #expect(await storage.count == 0)
            let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(left.isEmpty)
        }

        @Test func diskStorageEvictsByBytes() async throws {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let body = String(repeating: "q", count: 1000)
            let probe = try DiskEntryCodec.encode(response(body), key: key("0")).count
            let storage = DiskCacheStorage(directory: directory, byteLimit: probe * 3 + probe / 2)
            for index in 0..<5 { await storage.store(response(body), for: key("\(index)")) }
            #expect(await storage.count == 3)
            #expect(await storage.totalByteCount() <= storage.byteLimit)
            #expect(await storage.responses(for: key("0")).isEmpty)
            #expect(await storage.responses(for: key("4")).count == 1)
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(files.count == 3)
        }

        enum StorageKind: Sendable, CustomTestStringConvertible {
            case memory, disk
            func make(_ directory: URL) -> any CacheStorage {
                switch self {
                case .memory: return MemoryCacheStorage()
                case .disk: return DiskCacheStorage(directory: directory)
                }
            }
            var testDescription: String { self == .memory ? "memory" : "disk" }
        }
    }
}
