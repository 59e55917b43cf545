import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// A ``ConsoleNetworkLogger`` writing to a file the disk refuses.
@Suite struct ConsoleLoggerFullDiskIntegrationTests {
    /// `/dev/full` answers every write with `ENOSPC`, as a log file on a full disk does.
    /// `FileHandle.write(_:)` traps on that error on Linux: every logged call ended the process.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func aLogFileOnAFullDiskDropsTheEntriesAndTheCallSucceeds() async throws {
        let handle = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        defer { _ = Result { try handle.close() } }
        let logger = ConsoleNetworkLogger(stream: .file(handle), minimumLevel: .debug)
        let (client, namespace) = try TestServers.apiClient {
            $0.interceptors = [LoggingInterceptor(logger: logger)]
        }

        let resource = try await client.send(CacheIntegration.resource("logged", ["cc": "no-store"]))

        #expect(resource.name == "logged")
        #expect(try await CacheIntegration.counter("requests", of: "logged", namespace: namespace) == 1)
    }
}
