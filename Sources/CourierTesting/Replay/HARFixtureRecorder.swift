import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// Records a session's traffic as a HAR 1.2 fixture file that ``ReplayTransport`` replays —
/// whole bodies, redacted by the same `Redactor` as Courier's logs, so no secret is written.
///
/// Put it last in the pipeline, next to the transport, so it sees each request as sent (after
/// auth, idempotency keys and retries) and each response as received; record once against a real
/// server, commit the file, replay it in unit tests.
///
/// ```swift
/// let recorder = HARFixtureRecorder()
/// let client = APIClient(environment: .stub) { $0.interceptors.append(recorder) }
/// _ = try await client.send(GetItem(id: 42))
/// try recorder.write(to: URL(fileURLWithPath: "Fixtures/items.har"))
/// ```
///
/// Each entry holds the redacted URL, header fields and bodies (text as redacted text; binary as
/// Base64 unless it contains a secret learned from the exchange), the call's path template
/// (`_pathTemplate`) and a digest of the redacted request body (`_bodyDigest`), which replay
/// matching compares. A streamed response is recorded once its consumer read it to the end
/// (up to ``maximumStreamedBodyBytes``); a request whose body is a stream is recorded without it.
public final class HARFixtureRecorder: Interceptor {
    /// The redactor applied to every entry; the default `Redactor` unless given.
    public let redactor: Redactor
    /// Largest streamed response body recorded, in bytes; a longer one is passed on unrecorded.
    public let maximumStreamedBodyBytes: Int
    /// Written into the file's `creator`.
    public let creator: HARLog.Creator
    private let storage = Locked<[HARLog.Entry]>([])

    /// Creates a recorder.
    ///
    /// - Parameters:
    ///   - redactor: Hides secrets before anything is kept; use the redactor your logs use.
    ///   - maximumStreamedBodyBytes: Largest streamed response body recorded; 8 MiB by default.
    ///   - creator: The `creator` written to the file; Courier by default.
    public init(redactor: Redactor = Redactor(), maximumStreamedBodyBytes: Int = 8 << 20, creator: HARLog.Creator = .courier) {
        self.redactor = redactor
        self.maximumStreamedBodyBytes = max(0, maximumStreamedBodyBytes)
        self.creator = creator
    }

    /// Sends `request` on and records the exchange when the response (or its streamed body) is complete.
    public func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        let started = Date()
        let clockStart = ContinuousClock.now
        var response = try await next(request)
        let redactor = self.redactor
        let storage = self.storage
        let record: @Sendable (HTTPResponse) -> Void = { complete in
            let exchange = HARLog.FixtureExchange(
                request: request, requestBody: request.httpBody, response: complete, pathTemplate: context.pathTemplate,
                requestID: context.requestID.description, started: started, duration: ContinuousClock.now - clockStart)
            let entry = HARLog.fixtureEntry(for: exchange, redactor: redactor)
            storage.withLock { $0.append(entry) }
        }
        if response.body.isBuffered {
            record(response)
        } else {
            let head = response
            response.body = response.body.teed(upTo: maximumStreamedBodyBytes) { bytes in
                var complete = head
                complete.body = MessageBody(bytes)
                record(complete)
            }
        }
        return response
    }

    /// Number of entries recorded so far.
    public var entryCount: Int { storage.withLock { $0.count } }

    /// Forgets every entry.
    public func removeAll() { storage.set([]) }

    /// The archive of the entries recorded, in the order their responses completed.
    public func archive() -> HARLog { HARLog(fixtureEntries: storage.current, creator: creator) }

    /// The archive as JSON (UTF-8, pretty-printed, keys sorted).
    /// - Throws: `EncodingError` (not expected).
    public func jsonData() throws -> Data { try archive().jsonData() }

    /// Writes the archive to `url` atomically, replacing any file there.
    /// - Throws: The file system's error when the file cannot be written.
    public func write(to url: URL) throws {
        try jsonData().write(to: url, options: .atomic)
    }
}
