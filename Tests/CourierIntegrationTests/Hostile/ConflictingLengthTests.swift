import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTransfers

/// A response whose `Content-Length` values disagree (`GET /hostile/length`,
/// TestServer/routes_hostile.py) has invalid framing: the client must discard it (RFC 9112 §6.3).
@Suite("Responses with conflicting Content-Length values")
struct ConflictingLengthTests {
    private static func lengths(_ namespace: String) async throws -> Int {
        let bucket = try await TestServers.stats(namespace: namespace)["hostile"] as? [String: Any] ?? [:]
        return bucket["lengths"] as? Int ?? 0
    }

    private static func expectBadServerResponse(_ error: (any Error)?, _ label: String) {
        guard case .transport(let underlying)? = error as? NetworkError else {
            Issue.record("\(label): expected a transport error, got \(String(describing: error))")
            return
        }
        #expect(underlying.code == .badServerResponse, "\(label)")
        #expect(underlying.localizedDescription.contains("cannot be framed"), "\(label)")
    }

    /// Measured before the fix, on both transports: "fields" (100000, then 50000) was a successful
    /// call with the first 50,000 bytes, streamed and buffered, and a download placed them as the
    /// whole file; "list" gave 100,000 bytes; "hex" (`0x10`) a successful call with an empty body.
    ///
    /// Each call has a client of its own: libcurl (under both transports) keeps the connection of
    /// a buffered call, with the bytes past the length it took still unread, and the next call on
    /// it reads them as its response (`Received HTTP/0.9`); that is not what this test is about.
    @Test(
        "a buffered, a streamed call and a download fail with badServerResponse, sent once",
        arguments: ["fields", "list", "hex", "spaced"])
    func conflictingLengthsFail(shape: String) async throws {
        var (client, namespace) = try TestServers.apiClient()
        let request = Request<Data>.get("/hostile/length", query: ["shape": shape])
            .policy(.standard.with(\.deadline, .seconds(30)))
        var failure: (any Error)?
        do { _ = try await client.send(request) } catch { failure = error }
        Self.expectBadServerResponse(failure, "buffered \(shape)")

        client = try TestServers.apiClient(namespace: namespace).0
        failure = nil
        do {
            let streamed = try await client.stream(request)
            for try await _ in streamed.body {}
        } catch { failure = error }
        Self.expectBadServerResponse(failure, "streamed \(shape)")

        client = try TestServers.apiClient(namespace: namespace).0
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-length-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        do throws(DownloadError) {
            _ = try await client.download(request, to: destination).value
            Issue.record("download \(shape): succeeded")
        } catch {
            if case .network(let underlying) = error.reason {
                Self.expectBadServerResponse(underlying, "download \(shape)")
            } else {
                Issue.record("download \(shape): \(error)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(try await Self.lengths(namespace) == 3)  // none retried
    }

    @Test("two equal Content-Length values are one length")
    func equalLengthsAreAccepted() async throws {
        let (client, _) = try TestServers.apiClient()
        let data = try await client.send(Request<Data>.get("/hostile/length", query: ["shape": "same"]))
        #expect(data.count == 100_000)
    }

    /// libcurl refuses a negative length itself; measured before: URLError -1 (`unknown`) over
    /// URLSessionTransport, -1011 over CurlTransport.
    @Test("a length libcurl refuses is badServerResponse on both transports")
    func aRefusedLengthIsABadServerResponse() async throws {
        let (client, namespace) = try TestServers.apiClient()
        var failure: (any Error)?
        do { _ = try await client.send(Request<Data>.get("/hostile/length", query: ["shape": "negative"])) } catch {
            failure = error
        }
        guard case .transport(let underlying)? = failure as? NetworkError else {
            Issue.record("expected a transport error, got \(String(describing: failure))")
            return
        }
        #expect(underlying.code == .badServerResponse, "\(underlying)")
        #expect(try await Self.lengths(namespace) == 1)
    }
}
