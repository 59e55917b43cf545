import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierEnvironments
import CourierTesting
import CourierTransfers

/// Work that outlives one call stays in the environment it started in: a feed's reconnection and
/// a download's next range never go to the environment the app switched to meanwhile.
@Suite("Environment switches and the work that outlives one call")
struct EnvironmentPinnedTransferTests {
    /// staging and production on two made-up hosts; the build decides staging.
    static func set() throws -> EnvironmentSet {
        try EnvironmentSet(
            environments: [
                APIEnvironment("staging", baseURL: URL(string: "https://staging.example.test/v1")!),
                APIEnvironment("production", baseURL: URL(string: "https://production.example.test/v1")!),
            ],
            build: BuildChannelReading(.testFlight, evidence: "review"),
            mapping: BuildMapping(
                debug: "staging", xcode: "staging", testFlight: "staging", appStore: "production", unknown: "production"),
            store: InMemoryEnvironmentChoiceStore(), override: nil)
    }

    @Test("a Server-Sent Events feed opened on staging does not reconnect to production after a switch", .timeLimit(.minutes(1)))
    func feedStaysInItsEnvironment() async throws {
        let set = try Self.set()
        let production = StubTransport { _ in HTTPResponse(statusCode: 204) }
        let staging = StubTransport { request in
            // The switch happens while the staging feed's connection is open.
            if set.current.id == "staging" { try await set.switchEnvironment(to: "production") }
            return HTTPResponse(
                statusCode: 200, headers: ["Content-Type": "text/event-stream"],
                body: Data("id: staging-41\ndata: price=1\n\n".utf8), url: request.url)
        }
        let client = try APIClient(environments: set) { configuration, environment in
            configuration.transport = environment.id == "staging" ? staging : production
            configuration.interceptors = [RequestIDInterceptor(), RetryInterceptor(maximumRetries: 0)]
        }
        var feedConfiguration = ServerSentEvents.Configuration()
        feedConfiguration.reconnect = ServerSentEvents.ReconnectPolicy(
            initialDelay: .zero, jitter: .none, maximumAttempts: 1)
        var received: [String] = []
        do {
            for try await event in client.events(Request<Void>.get("/prices"), configuration: feedConfiguration) {
                received.append(event.data)
            }
        } catch {}
        #expect(received == ["price=1"])
        #expect(staging.requestCount >= 1)
        let leaked = production.requests.map {
            "\($0.url?.absoluteString ?? "") Last-Event-ID=\($0.value(forHTTPHeaderField: "Last-Event-ID") ?? "-")"
        }
        #expect(production.requestCount == 0, "the staging feed reconnected to production: \(leaked)")
    }

    @Test(
        "a download started on staging does not fetch its remaining range from production after a switch", .timeLimit(.minutes(1))
    )
    func downloadStaysInItsEnvironment() async throws {
        let set = try Self.set()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("review-dl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let stagingBytes = Data(repeating: 0x53, count: 200)  // "S"
        let productionBytes = Data(repeating: 0x50, count: 200)  // "P"
        let staging = StubTransport { request in
            if let range = request.value(forHTTPHeaderField: "Range"), range == "bytes=100-" {
                return HTTPResponse(
                    statusCode: 206,
                    headers: ["Content-Range": "bytes 100-199/200", "Content-Length": "100", "ETag": #""v1""#],
                    body: stagingBytes.suffix(from: 100), url: request.url)
            }
            // First attempt: the switch happens, then the connection breaks after 100 bytes.
            try await set.switchEnvironment(to: "production")
            let (stream, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
            continuation.yield(stagingBytes.prefix(100))
            continuation.finish(throwing: URLError(.networkConnectionLost))
            var head = HTTPResponse(
                statusCode: 200, headers: ["Content-Length": "200", "ETag": #""v1""#, "Accept-Ranges": "bytes"], url: request.url)
            head.body = MessageBody(stream, length: .known(200))
            return head
        }
        let production = StubTransport { request in
            HTTPResponse(
                statusCode: 206, headers: ["Content-Range": "bytes 100-199/200", "Content-Length": "100", "ETag": #""v1""#],
                body: productionBytes.suffix(from: 100), url: request.url)
        }
        let client = try APIClient(environments: set) { configuration, environment in
            configuration.transport = environment.id == "staging" ? staging : production
            configuration.interceptors = [RequestIDInterceptor(), RetryInterceptor(maximumRetries: 0)]
        }
        let policy = EndpointPolicy.standard.with(\.retry, RetryPolicy(maxRetries: 2, baseDelay: .zero, maxDelay: .zero))
        let destination = folder.appendingPathComponent("file.bin")
        let result = await client.download(Request<Void>.get("/files/report.bin", policy: policy), to: destination).result
        let sentToProduction = production.requests.map {
            "\($0.url?.absoluteString ?? "") Range=\($0.value(forHTTPHeaderField: "Range") ?? "-")"
        }
        #expect(production.requestCount == 0, "the download's next attempt went to production: \(sentToProduction)")
        if case .success = result {
            let file = try Data(contentsOf: destination)
            #expect(file == stagingBytes, "the file is spliced: \(file.filter { $0 == 0x50 }.count) bytes came from production")
        }
    }
}
