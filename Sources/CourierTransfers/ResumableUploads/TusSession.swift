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

    func run(tracker: UploadProgressTracker) async throws -> Response<URL> {
        guard let length = FileSize.of(fileURL) else {
            throw NetworkError.invalidRequest("the upload file '\(fileURL.lastPathComponent)' cannot be read")
        }
        let store = uploader.store
        var record: ResumableUploadRecord
        var offset: Int64
        // A record that cannot be read fails the upload (ResumableUploadStoreError) and stays as it
        // is: taking it for "none" would start over from byte 0 and orphan the server's upload.
        if let saved = try store.record(for: key), saved.length == length,
            let current = try await serverOffset(saved.uploadURL, length: length)
        {
            record = saved
            offset = current
        } else {
            store.remove(key)
            record = try await create(length: length)
            offset = 0
        }
        var conflicts = 0
        var recreations = 0
        var last: Response<HTTPResponse>?
        tracker.didSend(offset, of: length)
        while offset < length || last == nil {
            try Task.checkCancellation()
            let count = min(Int64(uploader.chunkSize), length - offset)
            let base = offset
            let reporter = TransferProgressReporter(sent: { sent, _ in tracker.didSend(base + sent, of: length) })
            let response = try await uploader.send(
                .patch, record.uploadURL.absoluteString,
                headers: [("Upload-Offset", String(offset)), ("Content-Type", "application/offset+octet-stream")],
                body: .stream(.fileRange(fileURL, offset: offset, length: count), contentType: "application/offset+octet-stream"),
                progress: reporter)
            switch response.statusCode {
            case 200...299:
                guard let confirmed = Self.offset(response.response), confirmed > offset || count == 0, confirmed <= length else {
                    throw NetworkError.invalidRequest("the tus server answered PATCH without a valid Upload-Offset")
                }
                offset = confirmed
                conflicts = 0
                record.offset = offset
                try store.save(record)  // a record that cannot be written fails the upload, never silently
                last = response
            case 409:
                conflicts += 1
                guard conflicts <= Self.maxConsecutiveConflicts,
                    let current = try await serverOffset(record.uploadURL, length: length)
                else {
                    throw NetworkError(response: response.response, knownErrors: [:])
                }
                offset = current
                record.offset = offset
                try store.save(record)  // a record that cannot be written fails the upload, never silently
            case 404, 410:
                recreations += 1
                guard recreations <= Self.maxRecreations else {
                    throw NetworkError(response: response.response, knownErrors: [:])
                }
                store.remove(key)
                record = try await create(length: length)
                offset = 0
            default:
                throw NetworkError(response: response.response, knownErrors: [:])
            }
        }
        store.remove(key)
        guard let last else { throw NetworkError.invalidRequest("the tus upload ended without a response") }
        return Response(value: record.uploadURL, response: last.response, context: last.context)
    }

    /// `POST` to the creation URL; saves and returns the new record.
    private func create(length: Int64) async throws -> ResumableUploadRecord {
        var headers = [("Upload-Length", String(length))]
        if !metadata.isEmpty {
            let pairs = metadata.sorted { $0.key < $1.key }.map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }
            headers.append(("Upload-Metadata", pairs.joined(separator: ",")))
        }
        let response = try await uploader.send(.post, uploader.creationPath, headers: headers)
        guard response.statusCode == 201 else { throw NetworkError(response: response.response, knownErrors: [:]) }
        guard let location = response.response.headers["Location"],
            let url = URL(string: location, relativeTo: response.response.url)?.absoluteURL
        else { throw NetworkError.invalidRequest("the tus creation response has no usable Location") }
        let record = ResumableUploadRecord(key: key, uploadURL: url, offset: 0, length: length, createdAt: Date())
        try uploader.store.save(record)
        return record
    }

    /// The server's offset (`HEAD`), or `nil` when the upload is gone (404, 410, 403) or is not
    /// this file's: an offset beyond `length` (a PATCH from there would have a negative length).
    private func serverOffset(_ url: URL, length: Int64) async throws -> Int64? {
        let response = try await uploader.send(.head, url.absoluteString, headers: [])
        switch response.statusCode {
        case 200...299:
            guard let offset = Self.offset(response.response) else {
                throw NetworkError.invalidRequest("the tus server answered HEAD without Upload-Offset")
            }
            return offset <= length ? offset : nil
        case 403, 404, 410: return nil
        default: throw NetworkError(response: response.response, knownErrors: [:])
        }
    }

    private static func offset(_ response: HTTPResponse) -> Int64? {
        response.headers["Upload-Offset"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }.flatMap {
            $0 >= 0 ? $0 : nil
        }
    }
}
