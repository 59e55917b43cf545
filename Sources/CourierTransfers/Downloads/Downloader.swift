import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs one download: attempts through `APIClient.stream(_:options:)` (so the whole pipeline —
/// auth, retries before the first byte, logging, metrics — applies to each), writes the body to a
/// ``PartialDownloadFile``, continues after a transient failure within the endpoint's
/// `RetryPolicy`, verifies length and digest, and moves the file into place.
struct Downloader<E: Endpoint>: Sendable {
    let client: APIClient
    let endpoint: E
    let destination: URL
    let resumeData: DownloadResumeData?
    /// The longest silence between body bytes before an attempt fails as timed out.
    let idleTimeout: Duration
    let progress: AsyncStream<TransferProgress>.Continuation
    /// Where the file work runs: every open, write, `fsync(2)`, rename and read-back of the
    /// partial file, off the cooperative pool.
    let files = DownloadFileQueue()
    /// Bodies go to disk as they arrive. Over URLSession the body is *pushed*: the download's sink
    /// (`DownloadSink`) takes every chunk on the session's delegate queue and writes each 128 KiB batch
    /// there, as FoundationNetworking's own download tasks do, so no chunk waits in memory for a reader
    /// and nothing holds the transfer. On Linux that queue's thread is every URLSession's, so writes
    /// that get slow (one over 20 ms, or 200 ms within a second for all downloads of the process;
    /// `DownloadWriteTiming`) move off it for a second. Until the sink is in place (the head's way
    /// through the pipeline), while writes are off it, and where the transport is read instead
    /// (CourierCurl: a write must not stall libcurl's one loop thread), the body is read on a thread of
    /// its own (`DedicatedThreadExecutor.downloadReaders`, never waiting for the pool). A transport
    /// that pauses (CourierCurl, URLSession on Apple platforms) pauses at 256 KiB: two write batches.
    /// URLSession on Linux, which cannot pause, holds the hand-over of chunks at 256 KiB
    /// (`StreamingOptions.drainsContinuously`) — at most 100 ms per hold and 200 ms per second, then
    /// the buffer absorbs up to 16 MiB; past that the attempt fails with a buffer overflow, which loses
    /// nothing: the download continues from the bytes written, like after a lost connection (a disk
    /// much slower than the network: a 64 MiB download to a disk throttled to 8 MiB/s took 12
    /// requests).
    ///
    /// Measured (`courier-bench --only download`, 1 GiB over URLSession on Linux, 20 runs): peak
    /// RSS 46–60 MiB, 579 MiB/s median; when the reader on its own thread wrote the file, 54–73 MiB
    /// in 10 runs and 508 MiB/s; read on the pool with the 16 MiB buffer, 57–181 MiB and up to 70
    /// requests.
    static func streamingOptions(idleTimeout: Duration) -> StreamingOptions {
        var options = StreamingOptions(bufferLimit: 16 << 20, idleTimeout: idleTimeout)
        options.pausingBufferLimit = 2 * writeBatchBytes
        options.drainsContinuously = true
        return options
    }

    /// Continuations after a buffer overflow that kept the bytes written (they do not use up
    /// the endpoint's retries: nothing failed on the network), per download.
    static var maxOverflowRecoveries: Int { 256 }

    /// Restarts from zero (each needing a new request) allowed per download, on top of the retries.
    static var maxRestarts: Int { 2 }

    /// `206` parts of unknown complete length (`Content-Range: bytes a-b/*`, RFC 9110 §14.4)
    /// taken per download. The end of such a part proves nothing, so the downloader asks again from
    /// the byte after it until the server says where the representation ends (a `416` with
    /// `bytes */N` equal to the bytes held, a part with its complete length, or a `200`); a server
    /// that never does fails the download with `URLError.badServerResponse` after this many parts,
    /// keeping the bytes as resume data. A server that caps such parts at 1 MiB serves 1 GiB.
    static var maxUnknownLengthParts: Int { 1024 }

    /// Received bytes gathered before one write to the file (128 KiB): one hop to the file queue
    /// per batch, not per chunk of 16 KiB; small, because every byte between the network and the
    /// file adds to the peak memory of a transfer held at the buffer's bound.
    static var writeBatchBytes: Int { 128 << 10 }

    func run() async -> Result<Response<URL>, DownloadError> {
        defer { progress.finish() }
        if let problem = Self.destinationProblem(destination) {
            return .failure(DownloadError(.fileSystem(problem)))
        }
        let url: URL
        let state: DownloadState
        // Every attempt goes to the environment of the first: after a switch, the next range
        // would come from another server's file (a spliced file).
        let environmentID = client.environment.id
        // And under the sign-in of the first that carried a token: after a sign-out and another
        // sign-in, the rest would be the next user's (their file, or the same file as them).
        let signIn = Locked<Int?>(nil)
        do {
            url = try client.url(for: endpoint)
            state = try await openState(for: url)
        } catch let error as NetworkError {
            return .failure(DownloadError(.network(error)))
        } catch {
            return .failure(DownloadError(.fileSystem(String(describing: error))))
        }
        let retry = endpoint.policy.retry
        var retries = 0
        var overflows = 0
        var unknownLengthParts = 0
        // Each attempt is a request of its own: one key for all of them, so a server that honours
        // it sees one operation (`.automatic` would make a new key per attempt).
        let idempotency: IdempotencyPolicy =
            switch endpoint.policy.idempotency {
            case .automatic: .key(UUID().uuidString)
            case let other: other
            }
        // Sending the request again after its body broke off is a repetition the pipeline would not
        // make for a non-idempotent method without a key (RFC 9110 §9.2.2).
        let hasKey = idempotency != .none || endpoint.headers["Idempotency-Key"] != nil
        let repeatable = retry.allowsRetry(method: endpoint.method, hasIdempotencyKey: hasKey)
        report(state)
        var budget = 1 + retry.maxRetries + Self.maxRestarts + Self.maxOverflowRecoveries
        while budget > 0 {
            budget -= 1
            let failure: AttemptFailure
            let lengthBefore = state.file.length
            do {
                switch try await attempt(state, idempotency: idempotency, environmentID: environmentID, signIn: signIn) {
                case .finished(let response): return .success(response)
                case .restart:
                    // Starting over sends the request once more, which only a request that may be
                    // repeated allows (RFC 9110 §9.2.2): the caller's resume of a `POST` was its one
                    // sending; the part it got cannot continue the file (already discarded).
                    guard repeatable else {
                        return .failure(
                            await finish(
                                state, url: url, .network(.transport(URLError(.badServerResponse))), keepsPartial: false))
                    }
                    continue
                case .partContinues(let lengthKnown):
                    // A whole 206 part short of the representation (a server that caps ranges), or
                    // of unknown complete length (`/*`): ask for the rest at once; bytes were
                    // gained, so it uses up nothing — but parts that never say where the file ends
                    // are bounded.
                    guard repeatable else {
                        return .failure(
                            await finish(
                                state, url: url, .network(.transport(URLError(.networkConnectionLost))), keepsPartial: true))
                    }
                    if !lengthKnown {
                        unknownLengthParts += 1
                        guard unknownLengthParts < Self.maxUnknownLengthParts else {
                            let reason =
                                "\(unknownLengthParts) parts of unknown complete length (Content-Range bytes a-b/*) "
                                + "ended at byte \(state.file.length) without the end of the file"
                            let error = URLError(.badServerResponse, userInfo: [NSLocalizedDescriptionKey: reason])
                            return .failure(await finish(state, url: url, .network(.transport(error)), keepsPartial: true))
                        }
                    }
                    budget += 1
                    continue
                }
            } catch {
                failure = error
            }
            switch failure {
            case .fatal(let reason, let keepsPartial):
                return .failure(await finish(state, url: url, reason, keepsPartial: keepsPartial))
            case .interrupted(let error):
                let resumable = state.validator != nil && state.file.length > 0
                let mapped = NetworkError(error)
                if Task.isCancelled || mapped.isCancellation {
                    return .failure(await finish(state, url: url, .network(.cancelled), keepsPartial: resumable))
                }
                guard repeatable else {
                    return .failure(await finish(state, url: url, .network(mapped), keepsPartial: resumable))
                }
                if mapped.kind == .streamBufferOverflow, resumable, state.file.length > lengthBefore,
                    overflows < Self.maxOverflowRecoveries
                {
                    // The consumer fell behind a transport that cannot pause (URLSession on
                    // Linux); every byte written is good: continue from there at once.
                    overflows += 1
                    continue
                }
                guard retries < retry.maxRetries, retry.isRetryable(error) || mapped.kind == .streamBufferOverflow else {
                    return .failure(await finish(state, url: url, .network(mapped), keepsPartial: resumable))
                }
                let wait = retry.delay(forRetry: retries, retryAfter: nil)
                retries += 1
                do {
                    try await client.configuration.clock.sleep(for: wait)
                } catch {
                    return .failure(await finish(state, url: url, .network(.cancelled), keepsPartial: resumable))
                }
            }
        }
        return .failure(
            await finish(state, url: url, .network(.transport(URLError(.badServerResponse))), keepsPartial: false))
    }

    /// The partial file and validator to start from: the resume data's when it is for this URL
    /// and its file still exists; otherwise a new empty file (an unusable resume's file is deleted).
    private func openState(for url: URL) async throws -> DownloadState {
        let destination = destination
        if let resume = resumeData {
            if resume.url == url, let file = try await files.run({ try PartialDownloadFile.reopen(resume, for: destination) }) {
                let state = DownloadState(file: file, validator: resume.validator, expectedLength: resume.expectedLength)
                state.representationDigest = resume.representationSHA256.flatMap(DownloadDigest.representation(sha256:))
                return state
            }
            await files.run { resume.removePartialFile() }
        }
        let file = try await files.run { try PartialDownloadFile.make(for: destination) }
        return DownloadState(file: file, validator: nil, expectedLength: nil)
    }

    /// One request and its body. Returns the finished download or throws why it stopped.
    private func attempt(
        _ state: DownloadState, idempotency: IdempotencyPolicy, environmentID: String, signIn: Locked<Int?>
    ) async throws(AttemptFailure) -> AttemptOutcome {
        let file = state.file
        if file.length > 0, state.validator == nil { try await discard(state) }
        let resume = state.validator.flatMap { file.length > 0 ? (offset: file.length, validator: $0) : nil }
        let streamed: StreamedResponse
        do {
            streamed = try await client.stream(
                DownloadAttemptEndpoint(base: endpoint, resume: resume, idempotency: idempotency),
                options: Self.streamingOptions(idleTimeout: idleTimeout),
                requiredEnvironment: environmentID, requiredSignIn: signIn.current.map { SignInRequirement(session: $0) })
            if let session = streamed.context[SignInSessionKey.self] {
                signIn.withLock { pinned in pinned = pinned ?? session }
            }
        } catch let mismatch as EnvironmentMismatch {
            throw .fatal(.network(.invalidRequest(mismatch.description)), keepsPartial: resume != nil)
        } catch {
            // The pipeline has already retried what its policy allows before the first byte.
            let failure = NetworkError(error)
            if failure.isCancellation || Task.isCancelled { throw .interrupted(error) }
            throw .fatal(.network(failure), keepsPartial: resume != nil)
        }
        let response = streamed.response
        let body = streamed.body
        // A body not read to its end is released at once: the transfer is cancelled.
        func abandonBody() { _ = body.makeAsyncIterator() }
        // Only a status that carries the representation (or a part of it, or says the part is
        // all there is) is a file: a 204 has no content, a 202 says the file is not ready yet
        // (its body is a status document), and neither may replace the destination.
        // A 416 is an answer to a Range only: without one it is an error like any other 4xx.
        guard Self.carriesFile(response.statusCode) || response.statusCode == 416 && resume != nil else {
            abandonBody()
            throw .fatal(
                .network(NetworkError(response: response, knownErrors: endpoint.knownErrors)), keepsPartial: resume != nil)
        }
        let step = DownloadRules.step(
            for: response, requestedOffset: resume?.offset, validator: resume?.validator,
            knownLength: resume != nil ? state.expectedLength : nil)
        switch step {
        case .invalid:
            abandonBody()
            throw .fatal(.network(.transport(URLError(.badServerResponse))), keepsPartial: false)
        case .restart:
            abandonBody()
            guard state.restarts < Self.maxRestarts else {
                throw .fatal(.network(.transport(URLError(.badServerResponse))), keepsPartial: false)
            }
            try await discard(state)
            return .restart
        case .complete(let length):
            abandonBody()
            guard file.length == length else {
                throw .fatal(.lengthMismatch(expected: length, received: file.length), keepsPartial: false)
            }
            // Every byte came before (a download cancelled after its last byte): the digest an
            // earlier response announced is checked all the same.
            if let whole = state.representationDigest { try await verify(file, against: whole, from: 0) }
            try await place(file)
            return .finished(Response(value: destination, response: response, context: streamed.context))
        case .write(let offset, let completeLength, let discardsPartial):
            if discardsPartial || offset == 0 && file.length > 0 { try await discard(state) }
            let coded = DownloadRules.isContentCoded(response.headers)
            state.validator =
                coded || DownloadRules.refusesRanges(response.headers) ? nil : DownloadRules.strongValidator(in: response.headers)
            state.expectedLength = completeLength
            report(state)
            let digest = DownloadDigest.expected(in: response.headers)
            // The whole representation's digest: this response's, else the one an earlier response
            // of the same representation announced (a 206 after a resume often has none).
            if offset == 0 { state.representationDigest = nil }
            if let digest, digest.scope == .representation { state.representationDigest = digest }
            // Where this response's bytes end in the file: a 206's Content-Range says where its part
            // ends (RFC 9110 §15.3.7), so a body that runs past it fails at once and one that stops
            // short of it is a lost connection, whatever its complete length.
            var partEnd: Int64?
            if response.statusCode == 206, case .bytes(_, let last, _)? = DownloadContentRange(response.headers) {
                partEnd = last + 1
            }
            // Off the pool: the file is written there when the transport cannot push the body.
            try await files.reading { await receive(streamed.body, into: state, limit: partEnd ?? completeLength) }.get()
            if let partEnd {
                // A body that ends early without an error is a lost connection, like a transport's.
                guard file.length == partEnd else { throw .interrupted(URLError(.networkConnectionLost)) }
            } else if let completeLength, file.length < completeLength {
                throw .interrupted(URLError(.networkConnectionLost))
            }
            // `Content-Digest` of a 206 covers its part only (RFC 9530 §2): read back from where the
            // part began, on the file queue — never while the body arrives, where hashing would
            // slow the delegate queue every URLSession of the process shares on Linux. Every part
            // is checked, not only the last.
            if let digest, digest.scope == .content { try await verify(file, against: digest, from: offset) }
            // The part arrived whole but ends before the representation does, or nobody knows where
            // the representation ends (`/*`): the client reads Content-Range to see whether more
            // requests are needed (RFC 9110 §15.3.7) — it never takes the part's end for the file's.
            if let partEnd, completeLength.map({ partEnd < $0 }) ?? true {
                return .partContinues(lengthKnown: completeLength != nil)
            }
            if let whole = state.representationDigest { try await verify(file, against: whole, from: 0) }
            try await place(file)
            return .finished(Response(value: destination, response: response, context: streamed.context))
        }
    }

    /// Writes `body` into the partial file, a batch of ``writeBatchBytes`` at a time. The body is
    /// pushed (`MessageBody.push(to:admittingProducerThread:)`): over URLSession each chunk is taken, and each batch
    /// written, on the delegate queue as it arrives, so no chunk waits in memory for a reader and
    /// the transfer is never held. Bytes received before a failure are written first (the
    /// continuation starts after them).
    /// `limit` is the length the file may reach with this body: the end of a `206`'s part, else
    /// the representation's complete length when known.
    private func receive(
        _ body: MessageBody, into state: DownloadState, limit: Int64?
    ) async -> Result<Void, AttemptFailure> {
        let sink = DownloadSink(
            file: state.file, limit: limit, batchBytes: Self.writeBatchBytes,
            keepsPartialOnWriteFailure: state.validator != nil
        ) { [progress, totalBytes = state.expectedLength, restarts = state.restarts] completed in
            progress.yield(TransferProgress(completedBytes: completed, totalBytes: totalBytes, restarts: restarts))
        }
        do {
            try await body.push(to: { chunk in try sink.take(chunk) }, admittingProducerThread: { sink.admitsProducerThread })
            try sink.flush()
        } catch let failure as AttemptFailure {
            return .failure(failure)
        } catch let interruption {
            // Every byte received before the failure is good: keep it for the continuation.
            do { try sink.flush() } catch { return .failure(error as? AttemptFailure ?? .interrupted(interruption)) }
            return .failure(.interrupted(interruption))
        }
        return .success(())
    }

    /// Whether a response with `status` carries the file (RFC 9110 §15.3): 200 (OK), 203
    /// (Non-Authoritative Information: a transformed copy, still the content) and 206 (Partial
    /// Content).
    static func carriesFile(_ status: Int) -> Bool { status == 200 || status == 203 || status == 206 }

    /// Why `destination` cannot receive the file, checked before anything is sent: not a file
    /// URL, or an existing directory. `nil` when it can (a missing folder is created).
    static func destinationProblem(_ destination: URL) -> String? {
        guard destination.isFileURL else {
            return "the destination \(destination.absoluteString) is not a file URL"
        }
        var isDirectory: ObjCBool = false
        // A directory URL (a trailing slash) names a folder even where none exists yet.
        if destination.hasDirectoryPath
            || FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory) && isDirectory.boolValue
        {
            return "the destination \(destination.path) is a directory: pass the URL of the file to create"
        }
        return nil
    }

    /// Reads `file` back from `offset` on the file queue and checks its SHA-256 against `digest`.
    private func verify(
        _ file: PartialDownloadFile, against digest: DownloadDigest, from offset: Int64
    ) async throws(AttemptFailure) {
        let actual: [UInt8]
        do { actual = try await files.run { try file.sha256(from: offset) } } catch {
            throw .fatal(.fileSystem(String(describing: error)), keepsPartial: false)
        }
        try verifyDigest(digest, actual: actual)
    }

    private func place(_ file: PartialDownloadFile) async throws(AttemptFailure) {
        let destination = destination
        do { try await files.run { try file.moveIntoPlace(at: destination) } } catch {
            throw .fatal(.fileSystem("cannot move the file to \(destination.path): \(error)"), keepsPartial: false)
        }
    }

    /// Drops the partial data (a restart from zero) and says so in the progress.
    private func discard(_ state: DownloadState) async throws(AttemptFailure) {
        let file = state.file
        do { try await files.run { try file.discardContents() } } catch {
            throw .fatal(.fileSystem(String(describing: error)), keepsPartial: false)
        }
        state.validator = nil
        state.representationDigest = nil
        state.restarts += 1
        report(state)
    }

    /// Reports the bytes written (while the body arrives, ``DownloadSink`` reports).
    private func report(_ state: DownloadState) {
        progress.yield(
            TransferProgress(
                completedBytes: state.file.length, totalBytes: state.expectedLength,
                restarts: state.restarts))
    }

    /// The error for `reason`, with resume data when the partial file is kept; deletes it otherwise.
    private func finish(
        _ state: DownloadState, url: URL, _ reason: DownloadError.Reason, keepsPartial: Bool
    ) async -> DownloadError {
        let file = state.file
        guard keepsPartial, let validator = state.validator, file.length > 0 else {
            await files.run { file.remove() }
            return DownloadError(reason)
        }
        do {
            try await files.run { try file.close() }
        } catch {
            // Bytes that may not be on storage cannot be resumed from.
            await files.run { file.remove() }
            return DownloadError(reason)
        }
        return DownloadError(
            reason,
            resumeData: DownloadResumeData(
                url: url, offset: state.file.length, validator: validator, expectedLength: state.expectedLength,
                partialFileURL: state.file.url, representationSHA256: state.representationDigest.map { Data($0.sha256) }))
    }
}

// Top-level rather than nested in the generic `Downloader`: nested in it, typed throws of
// `AttemptFailure` crash the Swift 6.3.1 optimizer (FunctionSignatureOpts, release builds).

/// How an attempt ended when it did not fail.
private enum AttemptOutcome {
    /// The file is in place.
    case finished(Response<URL>)
    /// The partial data was discarded; ask again for the whole file (no retry used up).
    case restart
    /// A 206 part arrived whole and the representation goes on, or its complete length is unknown
    /// (`lengthKnown` is `false`): ask for the rest.
    case partContinues(lengthKnown: Bool)
}

/// What ends an attempt short of success.
enum AttemptFailure: Error {
    /// The body stopped: a transport failure, a short body, or cancellation.
    case interrupted(any Error)
    /// Anything else; ends the download.
    case fatal(DownloadError.Reason, keepsPartial: Bool)
}

/// Mutable state of the download, owned by ``run()``'s task.
private final class DownloadState {
    let file: PartialDownloadFile
    var validator: String?
    var expectedLength: Int64?
    /// The SHA-256 of the whole representation, from `Repr-Digest`/`Digest` of a response or the
    /// resume data.
    var representationDigest: DownloadDigest?
    var restarts = 0
    init(file: PartialDownloadFile, validator: String?, expectedLength: Int64?) {
        self.file = file
        self.validator = validator
        self.expectedLength = expectedLength
    }
}

/// Checks that `actual` is the digest's SHA-256; a mismatch deletes nothing yet (``finish`` does)
/// and ends the download.
private func verifyDigest(_ digest: DownloadDigest, actual: [UInt8]) throws(AttemptFailure) {
    guard actual == digest.sha256 else {
        throw .fatal(
            .digestMismatch(
                field: digest.field, expected: DownloadDigest.hex(digest.sha256), actual: DownloadDigest.hex(actual)),
            keepsPartial: false)
    }
}
