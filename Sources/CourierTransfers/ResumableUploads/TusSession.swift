import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One run of a tus upload: find or create the upload, then PATCH until the offset is the length.
struct TusSession: Sendable {
    /// Consecutive 409s recovered with HEAD before giving up (each HEAD moves to the server's
    /// offset, so a second conflict in a row means someone else is writing the upload).
    static let maxConsecutiveConflicts = 3
    /// New uploads started after 404/410 within one run.
    static let maxRecreations = 2

    let uploader: TusUploader
    let fileURL: URL
    let key: String
    let metadata: [String: String]
    /// The uploader's creation URL in the environment of this run.
    let creationURL: URL?
    /// The environment of this run: every request of it goes there (see `TusUploader.send`).
    let environment: APIEnvironment
    /// The store's ``ResumableUploadStore/resetCount()`` when the run was made: after a reset
    /// (a sign-out) the run saves no record and ends (`NetworkError.signedOut`).
    let storeResets: Int
    /// The sign-in of the run's first request that carried a token (see `TusUploader.send`).
    let signIn = Locked<Int?>(nil)

    /// Saves `record`, unless the store was reset since the run was made: a request in flight at
    /// the sign-out may finish, but its record must not come back for the next account to resume.
    private func save(_ record: ResumableUploadRecord) throws {
        guard try uploader.store.save(record, unlessResetSince: storeResets) else { throw NetworkError.signedOut }
    }

    func run(tracker: UploadProgressTracker) async throws -> Response<URL> {
        guard let length = FileSize.of(fileURL) else {
            throw NetworkError.invalidRequest("the upload file '\(fileURL.lastPathComponent)' cannot be read")
        }
        // Chunks are read from the file itself: one that changes during the run would leave the
        // server a mix of two versions. Checked before every chunk and before reporting success.
        let identity = FileVersion(of: fileURL)
        if let bad = metadata.keys.first(where: { !Self.isMetadataKey($0) }) {
            throw NetworkError.invalidRequest(
                "the tus metadata key '\(bad)' is empty or holds a space, a comma or a control character")
        }
        do {
            return try await run(length: length, identity: identity, tracker: tracker)
        } catch {
            // A run that fails after the file changed (a PATCH under way when it was saved again,
            // then lost): the server's upload may hold the old version's bytes, so no later run
            // may resume it with the new version's.
            if FileVersion(of: fileURL) != identity { uploader.store.remove(key) }
            throw error
        }
    }

    /// ``run(tracker:)`` once the file's `length` and version are known.
    private func run(length: Int64, identity: FileVersion, tracker: UploadProgressTracker) async throws -> Response<URL> {
        let store = uploader.store
        var record: ResumableUploadRecord
        var offset: Int64
        // A record that cannot be read fails the upload (ResumableUploadStoreError) and stays as it
        // is: taking it for "none" would start over from byte 0 and orphan the server's upload.
        // Only an upload this uploader created, in this environment: another endpoint's (a store
        // shared by uploaders) or another environment's is not resumed.
        if let saved = try store.record(for: key), saved.length == length, isOwn(saved),
            saved.fileModified == nil || saved.fileModified == identity.modified,
            let head = try await serverOffset(saved.uploadURL)
        {
            // A new process knows only the record: the server may hold any byte up to the file's
            // length (an earlier run may have sent more than it saved), but never fewer than it
            // confirmed to that run — the record is all that ties the upload URL to this file.
            offset = try trusted(head, floor: saved.offset, bound: length, length: length, after: "resuming a saved upload")
            record = saved
        } else {
            store.remove(key)
            record = try await create(length: length, modified: identity.modified)
            offset = 0
        }
        var conflicts = 0
        var recreations = 0
        var failures = 0
        var last: Response<HTTPResponse>?
        // The end of the bytes this run has sent (or found on the server): after a failed PATCH
        // the server cannot hold more, so a HEAD offset beyond it would skip bytes it never got.
        var sentEnd = offset
        tracker.didSend(offset, of: length)
        while offset < length || last == nil {
            try Task.checkCancellation()
            try identity.check(fileURL, record: key, in: store)
            let count = min(Int64(uploader.chunkSize), length - offset)
            let base = offset
            // A 409 leaves the upload as it was (tus 1.0.0 PATCH): its HEAD is bounded by what the
            // earlier requests sent, not by this one.
            let sentBefore = sentEnd
            sentEnd = max(sentEnd, offset + count)
            let reporter = TransferProgressReporter(sent: { sent, _ in tracker.didSend(base + sent, of: length) })
            let answer: Result<Response<HTTPResponse>, any Error>
            do {
                answer = .success(
                    try await uploader.send(
                        .patch, record.uploadURL.absoluteString,
                        headers: [("Upload-Offset", String(offset)), ("Content-Type", "application/offset+octet-stream")],
                        body: .stream(
                            .fileRange(fileURL, offset: offset, length: count), contentType: "application/offset+octet-stream"),
                        progress: reporter, signIn: signIn, environment: environment.id))
            } catch {
                answer = .failure(error)
            }
            if let failure = Self.transientFailure(of: answer) {
                // The PATCH may or may not have reached the server: ask it where the upload is
                // (HEAD) and go on from there, as tus intends, within the policy's retries — or
                // from byte 0 of a new upload when the server no longer has this one.
                failures += 1
                if let current = try await recover(
                    from: failure, failures: &failures, record: &record, length: length, sentEnd: sentEnd)
                {
                    offset = current
                } else {
                    try await recreate(
                        after: failure, count: &recreations, record: &record, length: length, modified: identity.modified)
                    offset = 0
                    sentEnd = 0
                }
                continue
            }
            let response = try answer.get()
            switch response.statusCode {
            case 200...299:
                // The new offset is at most the old one plus the bytes sent (tus 1.0.0 PATCH): a
                // larger one would skip bytes the server never received.
                guard let confirmed = Self.offset(response.response), confirmed > offset || count == 0,
                    confirmed <= offset + count, confirmed <= length
                else {
                    throw NetworkError.invalidRequest("the tus server answered PATCH without a valid Upload-Offset")
                }
                offset = confirmed
                conflicts = 0
                failures = 0
                record.offset = offset
                try save(record)  // a record that cannot be written fails the upload, never silently
                last = response
            case 409:
                conflicts += 1
                let conflict = NetworkError(response: response.response, knownErrors: [:])
                guard conflicts <= Self.maxConsecutiveConflicts else { throw conflict }
                if let head = try await serverOffset(record.uploadURL) {
                    offset = try trusted(head, floor: 0, bound: sentBefore, length: length, after: "409 Conflict")
                    record.offset = offset
                    try save(record)  // a record that cannot be written fails the upload, never silently
                } else {
                    // The server no longer has the upload (its HEAD answers 404, 410 or 403): a new
                    // one from byte 0, as after a failed PATCH.
                    try await recreate(
                        after: conflict, count: &recreations, record: &record, length: length, modified: identity.modified)
                    offset = 0
                    sentEnd = 0
                }
            case 404, 410:
                try await recreate(
                    after: NetworkError(response: response.response, knownErrors: [:]), count: &recreations,
                    record: &record, length: length, modified: identity.modified)
                offset = 0
                // Only the bytes sent to the new upload can have reached it.
                sentEnd = 0
            default:
                throw NetworkError(response: response.response, knownErrors: [:])
            }
        }
        try identity.check(fileURL, record: key, in: store)
        store.remove(key)
        guard let last else { throw NetworkError.invalidRequest("the tus upload ended without a response") }
        return Response(value: record.uploadURL, response: last.response, context: last.context)
    }

    /// The failure of a `PATCH` that tus recovers from with `HEAD`: a transport error, or a 5xx,
    /// 408 or 429 answer; `nil` for any other answer.
    private static func transientFailure(of answer: Result<Response<HTTPResponse>, any Error>) -> (any Error)? {
        switch answer {
        case .failure(let error):
            return error
        case .success(let response):
            let status = response.statusCode
            guard status >= 500 || status == 408 || status == 429 else { return nil }
            return NetworkError(response: response.response, knownErrors: [:])
        }
    }

    /// Starts a new upload in place of `record`'s, which the server no longer has (404, 410, or 403
    /// on `HEAD`): at most ``maxRecreations`` times a run, after which `error` is thrown.
    private func recreate(
        after error: any Error, count: inout Int, record: inout ResumableUploadRecord, length: Int64, modified: Date?
    ) async throws {
        count += 1
        guard count <= Self.maxRecreations else { throw error }
        uploader.store.remove(key)
        record = try await create(length: length, modified: modified)
    }

    /// After a PATCH failed with `error` (`failures` in a row): waits the policy's backoff (or the
    /// server's `Retry-After`), then returns the offset the server reports (`HEAD`), or `nil` when
    /// the server no longer has the upload (the caller starts a new one, as tus clients do). A
    /// `HEAD` that fails in a way the policy retries (a 503, a lost connection) counts as one more
    /// failure in a row and is asked again after the next backoff. Throws the last failure when
    /// the policy would not retry it or the retries ran out.
    /// An offset beyond `sentEnd` (bytes this run never sent) fails the upload and drops its
    /// record (``trusted(_:floor:bound:length:after:)``).
    private func recover(
        from error: any Error, failures: inout Int, record: inout ResumableUploadRecord, length: Int64, sentEnd: Int64
    ) async throws -> Int64? {
        let retry = uploader.policy.retry
        var error = error
        while true {
            guard failures <= retry.maxRetries, retry.isRetryable(error) else { throw error }
            let retryAfter = (error as? NetworkError)?.retryAfter
            let wait = retry.delay(forRetry: failures - 1, retryAfter: retryAfter)
            guard wait <= retry.maxRetryAfter else { throw error }
            try await uploader.clock.sleep(for: wait)
            let answer: HeadAnswer?
            do {
                answer = try await serverOffset(record.uploadURL)
            } catch let failed {
                failures += 1
                error = failed
                continue
            }
            guard let head = answer else { return nil }
            let current = try trusted(head, floor: 0, bound: sentEnd, length: length, after: "a failed PATCH")
            record.offset = current
            try save(record)  // a record that cannot be written fails the upload, never silently
            return current
        }
    }

    /// Whether `record` was created by this uploader: at its creation URL, or (a record written
    /// before creation URLs were kept) on an origin of the client's environment.
    private func isOwn(_ record: ResumableUploadRecord) -> Bool {
        if let created = record.creationURL { return created == creationURL }
        return environment.isOrigin(of: record.uploadURL)
    }

    /// A tus metadata key: not empty, no space, comma or control character (tus 1.0.0).
    static func isMetadataKey(_ key: String) -> Bool {
        !key.isEmpty && !key.unicodeScalars.contains { $0 == " " || $0 == "," || $0.properties.generalCategory == .control }
    }

    /// `POST` to the creation URL; saves and returns the new record, which keeps the file's
    /// modification date `modified` (``ResumableUploadRecord/fileModified``).
    private func create(length: Int64, modified: Date?) async throws -> ResumableUploadRecord {
        var headers = [("Upload-Length", String(length))]
        if !metadata.isEmpty {
            let pairs = metadata.sorted { $0.key < $1.key }.map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }
            headers.append(("Upload-Metadata", pairs.joined(separator: ",")))
        }
        let response = try await uploader.send(
            .post, uploader.creationPath, headers: headers, signIn: signIn, environment: environment.id)
        guard response.statusCode == 201 else { throw NetworkError(response: response.response, knownErrors: [:]) }
        guard let location = response.response.headers["Location"],
            let url = URL(string: location, relativeTo: response.response.url)?.absoluteURL
        else { throw NetworkError.invalidRequest("the tus creation response has no usable Location") }
        // An upload on another origin gets none of the environment's credentials, so an
        // authorized policy could never PATCH it: refused now, not saved as a record every later
        // run would try again.
        if uploader.policy.auth != .none, !environment.isOrigin(of: url) {
            throw NetworkError.invalidRequest(
                "the tus server placed the upload at \(url.scheme ?? "")://\(url.host ?? ""), not an origin of environment "
                    + "'\(environment.id)': the access token is sent only to the environment's base URLs")
        }
        let record = ResumableUploadRecord(
            key: key, uploadURL: url, offset: 0, length: length, createdAt: Date(), creationURL: creationURL,
            fileModified: modified)
        try save(record)
        return record
    }

    /// What a `HEAD` reports: `Upload-Offset`, and `Upload-Length` when the server sent it.
    struct HeadAnswer: Sendable, Equatable {
        let offset: Int64
        let length: Int64?
    }

    /// The server's offset (`HEAD`), or `nil` when the upload is gone (404, 410, 403).
    private func serverOffset(_ url: URL) async throws -> HeadAnswer? {
        let response = try await uploader.send(
            .head, url.absoluteString, headers: [], signIn: signIn, environment: environment.id)
        switch response.statusCode {
        case 200...299:
            guard let offset = Self.offset(response.response) else {
                throw NetworkError.invalidRequest("the tus server answered HEAD without Upload-Offset")
            }
            let declared = response.response.headers["Upload-Length"].flatMap {
                Int64($0.trimmingCharacters(in: .whitespaces))
            }
            return HeadAnswer(offset: offset, length: declared)
        case 403, 404, 410: return nil
        default: throw NetworkError(response: response.response, knownErrors: [:])
        }
    }

    /// The offset of `head` when the server can hold it, else fails the upload and drops its record.
    ///
    /// The server's offset counts the bytes it received (tus 1.0.0 `Upload-Offset`), so it never
    /// passes `bound`, the end of the bytes that can have reached it: the file's length (its
    /// `Upload-Length`) for a record from disk, whose earlier run may have sent more than it saved;
    /// the end of every `PATCH` sent for a `PATCH` that failed on the way; the end before the
    /// refused `PATCH` for a `409`, which leaves the upload unchanged. Its `Upload-Length`, when
    /// sent, is the file's `length`. A record from disk also sets a `floor`, the offset the server
    /// confirmed to the earlier run: fewer bytes now means the URL no longer holds what that run
    /// sent (a recreated or restored upload), and the record is all that ties the two. Within one
    /// run a lower offset after a `409` or a failed `PATCH` is followed: the server lost a tail of
    /// this run's own bytes, which are sent again. Anything else is another upload or a server that
    /// invented bytes: continuing would leave a gap or a splice, and resuming the record later
    /// would trust the same answer, so the record is dropped (the next run starts a new upload).
    ///
    /// - Throws: `NetworkError.transport` with `URLError.badServerResponse` saying the offsets.
    private func trusted(
        _ head: HeadAnswer, floor: Int64, bound: Int64, length: Int64, after moment: String
    ) throws -> Int64 {
        let problem: String? =
            if let declared = head.length, declared != length {
                "Upload-Length \(declared) for a file of \(length) bytes"
            } else if head.offset > bound {
                "offset \(head.offset), beyond the \(bound) bytes that can have reached it"
            } else if head.offset < floor {
                "offset \(head.offset), below the \(floor) bytes it confirmed"
            } else {
                nil
            }
        guard let problem else { return head.offset }
        uploader.store.remove(key)
        let reason = "after \(moment), the tus server reports \(problem)"
        throw NetworkError.transport(URLError(.badServerResponse, userInfo: [NSLocalizedDescriptionKey: reason]))
    }

    private static func offset(_ response: HTTPResponse) -> Int64? {
        response.headers["Upload-Offset"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }.flatMap {
            $0 >= 0 ? $0 : nil
        }
    }
}
