import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierTransfers

/// The upload half of the "media" chapter: a photo-sized file sent as multipart/form-data with a
/// terminal progress bar (the bar is the demo's; Courier gives the progress values), checked by
/// the reference server's strict multipart parser, then the same file as a resumable tus upload
/// that is interrupted and resumed by a "new launch". The download half lives in its own file.
func runMediaUploadChapter(_ demo: Demo) async throws {
    demo.chapter("Media: upload a photo with progress, then a resumable (tus) upload that survives a restart")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-media-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let photo = folder.appendingPathComponent("IMG_0042.jpg")
    try Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) }).write(to: photo)

    let client = demo.makeClient()
    var form = MultipartForm()
    try form.addField(named: "caption", value: "Sunset at the pier")
    try form.addFile(named: "photo", fileURL: photo, filename: "IMG_0042 \"sunset\".jpg", contentType: "image/jpeg")
    demo.say("POST /uploads/multipart — \(form.contentLength) bytes, streamed from disk part by part")
    let upload = client.upload(
        Request<Data>(
            method: .post, path: "/uploads/multipart", body: .multipart(form), policy: .authorizedUpload.with(\.auth, .none)
        ) {
            response, _ in response.data
        })
    await ProgressBar().follow(upload.progress)
    let report = try JSONSerialization.jsonObject(with: try await upload.value) as? [String: Any]
    for part in report?["parts"] as? [[String: Any]] ?? [] {
        let name = part["filename"] as? String ?? "(field)"
        demo.say(
            "server parsed part \(part["name"] ?? "?"): \(name), \(part["length"] ?? 0) bytes, sha256 \((part["sha256"] as? String)?.prefix(12) ?? "")…"
        )
    }

    let store = ResumableUploadStore(directory: folder.appendingPathComponent("tus"))
    try await tusControl(demo, ["failPatches": [3]])
    demo.say("tus: 1 MiB chunks; the server fails the 3rd PATCH (the app \"dies\" mid-upload)")
    let first = TusUploader(
        client: client, creationPath: "/tus/files", store: store, chunkSize: 1 << 20,
        policy: .authorizedUpload.with(\.auth, .none))
    do {
        _ = try await first.upload(fileAt: photo).value
    } catch {
        let saved = try store.allRecords().first
        demo.say("interrupted at \(saved?.offset ?? 0) of \(saved?.length ?? 0) bytes; upload URL and offset are on disk")
    }
    demo.say("a new launch: a new client and uploader over the same store resume with HEAD, then PATCH from the offset")
    let relaunched = TusUploader(
        client: demo.makeClient(), creationPath: "/tus/files", store: store, chunkSize: 1 << 20,
        policy: .authorizedUpload.with(\.auth, .none))
    let resumed = relaunched.upload(fileAt: photo)
    await ProgressBar().follow(resumed.progress)
    demo.say("complete: \(try await resumed.value.path)")
}

/// Sets the reference server's tus test controls for this run's namespace.
private func tusControl(_ demo: Demo, _ body: [String: Any]) async throws {
    var request = URLRequest(url: demo.environment.baseURL.appendingPathComponent("_tus/control"))
    request.httpMethod = "POST"
    request.httpBody = try JSONSerialization.data(withJSONObject: body)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    _ = try await URLSession.shared.data(for: request)
}
